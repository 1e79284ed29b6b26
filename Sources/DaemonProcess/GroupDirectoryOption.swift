import ArgumentParser
import Foundation
import SottoCrypto
import SottoDaemon
import SottoWire

/// `--group-dir`, for the commands that work on the group directory itself rather than
/// through the daemon (`repair`, `key export|import`), and the daemon's lock they take.
///
/// ```swift
/// @OptionGroup var location: GroupDirectoryOption
/// let lock = try location.lockWithDaemonStopped()   // exit 75 while the daemon runs
/// ```
struct GroupDirectoryOption: ParsableArguments {
    @Option(name: .long, help: "Group directory (default: $SOTTO_GROUP_DIR, $XDG_DATA_HOME/sotto or ~/.local/share/sotto).")
    var groupDir: String?

    var group: GroupDirectory {
        GroupDirectory.resolve(explicit: groupDir, environment: ProcessInfo.processInfo.environment)
    }

    /// The daemon's instance lock, so nothing changes the directory under a running daemon;
    /// exit 75 with the way to stop it when it runs.
    func lockWithDaemonStopped() throws -> InstanceLock {
        let group = self.group
        guard let lock = InstanceLock.acquire(path: group.path + "/daemon.lock") else {
            FileHandle.standardError.write(Data("sotto: the daemon is running for \(group.path); stop it first (systemctl --user stop sotto.service sotto-push.socket)\n".utf8))
            throw ExitCode(75)
        }
        return lock
    }
}
