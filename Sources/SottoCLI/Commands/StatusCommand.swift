import ControlProtocol
import ArgumentParser
import FoundationEssentials
import SottoWire
import SottoClient

/// `sotto status`: the daemon's one-screen summary.
struct StatusCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show the daemon's state: inboxes awake and asleep, wake reasons, change feed position.")

    @OptionGroup var client: ClientOptions

    func run() throws {
        // A daemon waiting for the keyring serves nothing yet: say why instead of "not running".
        let runtime = client.runtimeDir.map(RuntimeDirectory.init(path:))
            ?? RuntimeDirectory.resolve(environment: ProcessInfo.processInfo.environment)
        if !client.json, let waiting = KeyringWaitNote(runtime: runtime).read(),
           !FileManager.default.fileExists(atPath: runtime.controlSocketPath) {
            // The keyring's own error text is in it: shown, never obeyed (docs/adr/0062).
            print("daemon started, " + CLIOutput.line(waiting))
            if !waiting.contains(KeyringWaitNote.noDefaultKeyring) {
                print("to get back in without the keyring: sotto key import (your recovery key)")
            }
            throw ExitCode(75)  // EX_TEMPFAIL: it continues once the keyring is unlocked
        }
        try client.call(ClientRequests.status()) { status in
            var lines: [String] = []
            lines.append("daemon pid \(status.pid), version \(status.version)")
            lines.append("group directory \(status.groupDirectory)")
            lines.append("conversations \(status.conversations), inboxes awake \(status.awakeCount)/\(status.capacity), sleeping \(status.sleepingCount)")
            if !status.wakeReasons.isEmpty {
                lines.append("wake reasons " + status.wakeReasons.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " "))
            }
            lines.append("unused inbox \(status.unusedInboxReady ? "ready" : "empty"), change feed at seq \(status.lastSeq)")
            if let notices = status.outlivingNotices, notices.waiting > 0 {
                lines.append("notices of deleted conversations waiting: \(notices.waiting) for \(notices.members) member(s), retried until delivered or 30 days old")
            }
            // Error texts other programs wrote (the Secret Service, SQLite, the file system) are
            // shown inert like a peer's: nothing another device sent is in a status.
            if let masterKey = status.masterKey { lines.append("master key " + CLIOutput.line(masterKey)) }
            if let damage = status.databaseDamaged { lines.append("DAMAGED: \(CLIOutput.line(damage))") }
            for identity in status.damagedIdentities {
                lines.append("identity \(identity.clientId) cannot be opened: \(CLIOutput.line(identity.reason))")
            }
            return lines.joined(separator: "\n")
        }
    }
}
