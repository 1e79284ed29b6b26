import ArgumentParser
import Foundation
import SharedStore
import SottoClient
import SottoDaemon

/// `sotto repair`: rebuild a damaged database from what can still be read (the daemon must
/// be stopped). The damaged file is kept next to the new one.
struct RepairCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "repair",
        abstract: "Rebuild a damaged database from every row that can still be read (stop the daemon first).",
        discussion: "Back up the group directory first (cp -a). The damaged file is kept as damaged-<time>.sqlite.")

    @Option(name: .long, help: "Group directory (default: $SOTTO_GROUP_DIR, $XDG_DATA_HOME/sotto or ~/.local/share/sotto).")
    var groupDir: String?

    func run() throws {
        let group = GroupDirectory.resolve(explicit: groupDir, environment: ProcessInfo.processInfo.environment)
        guard let lock = InstanceLock.acquire(path: group.path + "/daemon.lock") else {
            FileHandle.standardError.write(Data("sotto: the daemon is running for \(group.path); stop it first (systemctl --user stop sotto.service sotto-push.socket)\n".utf8))
            throw ExitCode(75)
        }
        defer { lock.release() }
        do {
            print(try DatabaseSalvage.run(group: group).summary)
        } catch {
            FileHandle.standardError.write(Data("sotto: repair failed: \(error)\n".utf8))
            throw ExitCode(70)
        }
    }
}
