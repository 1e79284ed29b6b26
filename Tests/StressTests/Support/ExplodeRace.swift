import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// Issue #7 part 3: a sender pushes marked texts for a conversation through the real push
/// socket while a pushed `explode_settings` with a past `expiresAt` makes the daemon's
/// ExplodeWorker delete it. Afterwards no row, no identity and no plaintext of
/// it may remain, and pushes after the deletion are refused without bringing it back.
///
/// ```swift
/// let report = try ExplodeRace(profile: .short).run()
/// print(report.summaryLine)   // STRESS explode-race: pushes=… okBefore=… refusedAfter=…
/// ```
struct ExplodeRace {
    let profile: StressProfile
    static let storedFirst = 20
    static let afterDeletion = 30

    struct Report: Sendable {
        var pushes = 0
        var storedFirst = 0
        var explodeAck = ""
        var deletedMs: Int64 = -1
        var okAcks = 0
        var expiredAcks = 0
        var refusedAfter = 0
        var acceptedAfter = 0
        var unexpected: [String] = []
        var leftoverRows: [String: Int] = [:]
        var inboxLeft = 0
        var conversationsLeft = 0
        var identityLeft = true
        var plaintextFiles: [String] = []
        var idInFiles: [String] = []
        var plaintextBefore = false
        var idBefore = false
        var integrity = ""
        var daemonExit: Int32 = -1
        var seconds = 0.0

        var summaryLine: String {
            let leftover = leftoverRows.filter { $0.value != 0 }.map { "\($0.key):\($0.value)" }.sorted().joined(separator: ",")
            return "STRESS explode-race: pushes=\(pushes) storedFirst=\(storedFirst) explodeAck=\(explodeAck) deletedAfter=\(deletedMs)ms "
                + "ok=\(okAcks) expired=\(expiredAcks) refusedAfterDeletion=\(refusedAfter) acceptedAfterDeletion=\(acceptedAfter) "
                + "unexpected=\(unexpected.count) leftoverRows=\(leftover.isEmpty ? "0" : leftover) inboxLeft=\(inboxLeft) "
                + "conversationsLeft=\(conversationsLeft) identityLeft=\(identityLeft) plaintextBefore=\(plaintextBefore) "
                + "plaintextFiles=\(plaintextFiles.count) idFiles=\(idInFiles.count) integrity=\(integrity) "
                + "daemonExit=\(daemonExit) seconds=\(String(format: "%.1f", seconds))"
        }
    }

    /// Every table with a `conversationId` column, and the conversation table itself.
    static let tables = ["member", "member_profile", "invite", "join_request", "message", "conversation_local_state",
                         "change_log"]

    func run() throws -> Report {
        var report = Report()
        let fixture = try StormFixture()
        let marker = "explode-race-" + Hex.encode(SecureRandom.bytes(8))
        let count = Self.storedFirst + max(60, profile.pushes / 20) + Self.afterDeletion
        let texts = (0..<count).map { fixture.seal(text: "\(marker)-\($0)") }
        let explode = fixture.seal(contentType: ContentType.explodeSettings,
                                   content: "{\"expiresAt\":\"\(ISO8601.string(fromMillis: WallClock.nowMs() - 60_000))\"}")
        report.pushes = texts.count
        let environment = fixture.environment
        let started = Date()

        let daemon = try LoggedProcess.launch(try profile.executable("sotto"), ["daemon"], environment: environment)
        defer { if daemon.isRunning { daemon.signal(SIGKILL); _ = daemon.waitForExit() } }
        guard daemon.waitForLine(containing: "ready:", timeout: 60) else {
            throw StressFailure("daemon did not start: \(daemon.output.suffix(5))")
        }
        let server = try PushSocketServer.start(socketPath: fixture.tmp.path + "/push.sock", accept: true,
                                                command: [try profile.executable("sotto-notify")], environment: environment)
        defer { server.stop() }
        let socket = server.socketPath

        // Some texts stored first, so there is plaintext on disk for the deletion to remove.
        for push in texts.prefix(Self.storedFirst) {
            if case .ok? = PushAck.parse(Array(try PushClient.send(push.payload, to: socket).utf8)) { report.storedFirst += 1 }
        }
        report.plaintextBefore = !(FileSearch.files(containing: Array(marker.utf8), under: fixture.group.path)).isEmpty
        report.idBefore = !(FileSearch.files(containing: Array(fixture.conversationId.utf8), under: fixture.group.path)).isEmpty

        // The sender: the rest, one after another; it notes whether the deletion was seen
        // before each push started.
        let deleted = Locked(false)
        let sent = Locked(0)
        let acks = Locked([(afterDeletion: Bool, ack: String)]())
        let senderDone = DispatchSemaphore(value: 0)
        let sender = Thread {
            for push in texts.dropFirst(Self.storedFirst) {
                let seenDeleted = deleted.value
                let ack = (try? PushClient.send(push.payload, to: socket)) ?? "transport failure"
                acks.update { $0.append((seenDeleted, ack)) }
                sent.update { $0 += 1 }
            }
            senderDone.signal()
        }
        sender.start()
        let deadline = Date(timeIntervalSinceNow: 30)
        while sent.value < 10, Date() < deadline { usleep(2_000) }  // paces a poll of the sender's progress only
        report.explodeAck = try PushClient.send(explode.payload, to: socket)
        let explodedAt = WallClock.nowMs()
        let conn = try SQLiteConnection.open(path: fixture.group.databasePath, profile: .worker)
        while try conn.queryOne("SELECT count(*) FROM conversation WHERE id = ?", [.text(fixture.conversationId)])?.int64(0) != 0,
              Date() < deadline {
            usleep(2_000)
        }
        deleted.update { $0 = true }
        report.deletedMs = WallClock.nowMs() - explodedAt
        senderDone.wait()

        // Late pushes, explicitly after the deletion, to a conversation that no longer exists.
        for index in 0..<5 {
            let ack = try PushClient.send(fixture.seal(text: "\(marker)-late-\(index)").payload, to: socket)
            acks.update { $0.append((true, ack)) }
        }

        for (afterDeletion, line) in acks.value {
            switch PushAck.parse(Array(line.utf8)) {
            case .ok?:
                report.okAcks += 1
                if afterDeletion { report.acceptedAfter += 1 }
            case .error(let error)? where [.unknownClient, .unknownConversation].contains(error.code):
                if afterDeletion { report.refusedAfter += 1 }
            case .error(let error)? where error.code == .conversationExpired && !afterDeletion:
                report.expiredAcks += 1
            default:
                report.unexpected.append("\(afterDeletion ? "after" : "before"): \(line.prefix(120))")
            }
        }

        // Stop everything that could still write, then look at what is left.
        server.stop()
        daemon.signal(SIGTERM)
        report.daemonExit = daemon.waitForExit()
        let id = SQLiteValue.text(fixture.conversationId)
        for table in Self.tables {
            report.leftoverRows[table] = Int(try conn.queryOne("SELECT count(*) FROM \(table) WHERE conversationId = ?", [id])?.int64(0) ?? -1)
        }
        report.leftoverRows["outbox"] = Int(try conn.queryOne(
            "SELECT count(*) FROM outbox o LEFT JOIN message m ON m.id = o.messageId WHERE m.id IS NULL OR m.conversationId = ?",
            [id])?.int64(0) ?? -1)
        report.conversationsLeft = Int(try conn.queryOne("SELECT count(*) FROM conversation")?.int64(0) ?? -1)
        report.inboxLeft = Int(try conn.queryOne("SELECT count(*) FROM inbox WHERE inboxId = ?",
                                                 [.text(fixture.recipient.inboxId)])?.int64(0) ?? -1)
        let keystore = try Keystore(directory: fixture.group.keystorePath, environment: [:])
        report.identityLeft = (try? keystore.identity(inboxId: fixture.recipient.inboxId)) != nil
            || (try? keystore.identity(clientId: fixture.recipient.clientId)) != nil
        report.integrity = try WorkerCrash.integrity(conn)
        report.plaintextFiles = FileSearch.files(containing: Array(marker.utf8), under: fixture.group.path)
        report.idInFiles = FileSearch.files(containing: Array(fixture.conversationId.utf8), under: fixture.group.path)
        report.seconds = Date().timeIntervalSince(started)
        return report
    }
}

extension StormFixture {
    /// One valid push from `sender` to the recipient with this content (a marked text by default).
    func seal(text: String) -> SealedPush { seal(contentType: ContentType.text, content: text) }

    func seal(contentType: String, content: String) -> SealedPush {
        let id = Hex.encode(SecureRandom.bytes(16))
        let signed = SignedMessage.sign(id: id, conversationId: conversationId, sentAtMs: WallClock.nowMs(),
                                        contentType: contentType, content: Array(content.utf8), fallback: nil,
                                        signer: sender.privateKey)
        let envelope = Envelope.seal(signed.encode(), recipient: recipient.publicKey, clientId: recipient.clientId, topic: topic)
        return SealedPush(messageId: id, payload: PushPayload(clientId: recipient.clientId, topic: topic, envelope: envelope).encode())
    }
}
