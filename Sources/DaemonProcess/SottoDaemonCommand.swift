import ArgumentParser
import ControlProtocol

/// `sotto-daemon`: what works on the group directory, the keyring and systemd rather than
/// through the control socket: the daemon itself, installation, the recovery key, repair.
/// `sotto VERB` hands these verbs over to it (docs/adr/0068), so its commands are named as
/// `sotto`'s.
///
/// ```
/// sotto daemon            # runs `sotto-daemon daemon` in the same process
/// sotto-daemon install    # the same as `sotto install`
/// ```
@main
struct SottoDaemonCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "sotto",
        abstract: "Sotto's main process and what works on its directory: daemon, install, uninstall, key, repair.",
        discussion: """
            Run through `sotto VERB`, which hands these verbs to this binary (sotto-daemon).

            Environment: SOTTO_GROUP_DIR (data, default ~/.local/share/sotto),
            SOTTO_RUNTIME_DIR (sockets, default $XDG_RUNTIME_DIR/sotto).
            """,
        version: SottoVersion.string,
        subcommands: [DaemonCommand.self, InstallCommand.self, UninstallCommand.self, RepairCommand.self, KeyCommand.self])
}
