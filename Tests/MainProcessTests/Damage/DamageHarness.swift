import Foundation
import SharedStore
import Testing
import TestSupport

/// What the Damage tests do to a device's files (with its daemon stopped) and how they look
/// at the outcome: a push through the real worker whatever its ack, garbage written over a
/// table's page, a daemon start that must refuse.
enum DamageHarness {
    /// A device with a conversation, a remote member, three pushes acked by the real worker
    /// and one message sent by the daemon (its outbox row stays pending); daemon stopped.
    struct Seeded {
        let home: DaemonHome
        let conversationId: String
        let remote: RemoteMember
        let acked: [String]
    }

    static func seeded() throws -> Seeded {
        let home = try DaemonHome()
        let daemon = try DaemonProcess.start(home: home)
        let conversationId = try #require(try daemon.result("newConversation", ["name": "Kept"])["conversationId"] as? String)
        let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
        var acked: [String] = []
        for index in 0..<3 {
            let result = try push(try remote.push("before \(index)"), home: home)
            acked.append(try #require(result.ack["messageId"] as? String, "\(result)"))
        }
        _ = try daemon.result("sendMessage", ["conversation": conversationId, "text": "out"])
        #expect(try daemon.stop() == 0)
        return Seeded(home: home, conversationId: conversationId, remote: remote, acked: acked)
    }

    /// One push through `sotto-notify --payload -`: the ack, the exit status, the worker's log.
    static func push(_ payload: [UInt8], home: DaemonHome) throws -> (ack: [String: Any], status: Int32, log: String) {
        let result = try ChildProcess.run(try builtExecutable("sotto-notify"), ["--payload", "-"], environment: home.environment,
                                          stdin: String(decoding: payload, as: UTF8.self) + "\n")
        let line = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        let ack = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? [:]
        return (ack, result.status, result.stderr)
    }

    /// Writes garbage over page `page` of the database (`PageCorruption`). Returns the page
    /// number. The daemon must be stopped.
    @discardableResult
    static func corrupt(page: Int64, home: DaemonHome) throws -> Int64 {
        try PageCorruption.overwrite(page: page, databasePath: home.databasePath)
    }

    /// The root page of `table` (sqlite_schema), for `corrupt(page:)`.
    static func rootPage(of table: String, home: DaemonHome) throws -> Int64 {
        try PageCorruption.rootPage(of: table, databasePath: home.databasePath)
    }

    /// Leaf pages of `table` in b-tree order (dbstat).
    static func leafPages(of table: String, home: DaemonHome) throws -> [Int64] {
        let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
        return try conn.query("SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path", [.text(table)])
            .map { try $0.int64(0) }
    }

    /// Starts the daemon and expects it NOT to get ready; returns its log.
    static func refusedStart(home: DaemonHome, environment: [String: String] = [:]) throws -> String {
        let daemon = try DaemonProcess.launch(home: home, environment: environment)
        let ready = (try? daemon.notify.waitFor("READY=1", timeout: 30) { daemon.process.isRunning }) != nil
        if ready { _ = try? daemon.stop() }
        let status = daemon.waitForExit()
        #expect(!ready, "the daemon started on a damaged device; log:\n\(daemon.log)")
        #expect(status != 0)
        return daemon.log
    }

    /// Message ids in the database, read by the test's own connection.
    static func messageIds(home: DaemonHome) throws -> Set<String> {
        let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
        return Set(try conn.query("SELECT id FROM message").map { try $0.string(0) })
    }

    static func expectRefusedRetryable(_ result: (ack: [String: Any], status: Int32, log: String),
                                       sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(result.ack["ok"] as? Bool == false, "acked: \(result.ack)", sourceLocation: sourceLocation)
        #expect(result.ack["retry"] as? Bool == true, "not retryable: \(result.ack)", sourceLocation: sourceLocation)
        #expect(result.status == 75, "exit \(result.status)", sourceLocation: sourceLocation)
    }
}
