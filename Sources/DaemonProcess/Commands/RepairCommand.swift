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

    @OptionGroup var location: GroupDirectoryOption

    func run() throws {
        let group = location.group
        let lock = try location.lockWithDaemonStopped()
        defer { lock.release() }
        do {
            print(try DatabaseSalvage.run(group: group).summary)
        } catch {
            FileHandle.standardError.write(Data("sotto: repair failed: \(error)\n".utf8))
            throw ExitCode(70)
        }
    }
}
