// `sotto`: the command-line client, one static executable (docs/adr/0068). This module
// imports FoundationEssentials itself because, compiled against the static modules, its
// object names every archive static FoundationEssentials needs (its shims, its
// collections); the commands are in SottoCLI, which uses no more of Foundation than that.
import FoundationEssentials
import SottoCLI

SottoCommand.main()
