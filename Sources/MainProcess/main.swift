// `sotto`: the command-line client, linked with the Swift runtime and Foundation statically
// (docs/adr/0068). This module imports Foundation itself because, compiled against the
// static modules, its object names every archive static Foundation needs (CoreFoundation,
// its ICU, the shims) for the link; the commands are in SottoCLI.
import Foundation
import SottoCLI

SottoCommand.main()
