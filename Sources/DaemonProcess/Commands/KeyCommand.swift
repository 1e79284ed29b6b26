import ArgumentParser
import Foundation
import SottoCrypto
import SottoDaemon

/// `sotto key export|import`: the keystore's master key as a recovery key (docs/adr/0038).
/// Not control methods: import is what a daemon that cannot open its keystore needs, so both
/// work on the group directory directly, like `sotto repair`.
struct KeyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "key",
        abstract: "Export or import the recovery key (the keystore's master key).",
        discussion: """
            Keep the recovery key apart from your backups of the group directory: a backup and
            its recovery key together open every conversation. To restore, copy the group
            directory back, then `sotto key import` and type or pipe the key.
            """,
        subcommands: [KeyExportCommand.self, KeyImportCommand.self])
}

struct KeyExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "export",
        abstract: "Print the recovery key.")

    @OptionGroup var location: GroupDirectoryOption

    func run() throws {
        let group = location.group
        do {
            print(try MasterKeyRecovery(group: group, environment: ProcessInfo.processInfo.environment).recoveryKey())
            FileHandle.standardError.write(Data("""
                sotto: this recovery key opens every conversation of \(group.path).
                Write it down or keep it in a password manager, never next to a backup of that directory.

                """.utf8))
        } catch {
            FileHandle.standardError.write(Data("sotto: cannot export the recovery key: \(error)\n".utf8))
            throw ExitCode(69)
        }
    }
}

struct KeyImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "import",
        abstract: "Install a recovery key read from standard input (stop the daemon first).",
        discussion: "Nothing is written unless the key opens every sealed identity of the group directory.")

    @OptionGroup var location: GroupDirectoryOption

    func run() throws {
        let group = location.group
        let input = FileHandle.standardInput.readData(ofLength: 1_025)
        let key: SecretBytes
        do {
            key = try RecoveryKey.decode(String(decoding: input, as: UTF8.self))
        } catch {
            FileHandle.standardError.write(Data("sotto: \(error); nothing was changed\n".utf8))
            throw ExitCode(65)
        }
        let lock = try location.lockWithDaemonStopped()
        defer { lock.release() }
        do {
            switch try MasterKeyRecovery(group: group, environment: ProcessInfo.processInfo.environment).importKey(key) {
            case .installed(let opened):
                print("imported: the recovery key opens all \(opened) sealed identities; start sotto again")
            case .storedInKeyring(let opened):
                print("imported into the Secret Service: the recovery key opens all \(opened) sealed identities; start sotto again")
            case .alreadyInPlace(let opened):
                print("this recovery key is already in place (it opens all \(opened) sealed identities)")
            }
        } catch {
            FileHandle.standardError.write(Data("sotto: \(error)\n".utf8))
            throw ExitCode(65)
        }
    }
}
