import ControlProtocol
@testable import DaemonEngine
import DaemonStore
import SharedStore
@testable import SottoDaemon
import Testing
import TestSupport

/// Where the feed meets the socket: the engine's value (`FeedChange`) as the `change`
/// notification every subscriber's client reads (docs/adr/0070, 0075).
@Suite("Control: the change notification made from the feed's value")
struct ChangeNotificationWireTests {
    @Test("a new message's notification carries its text, its sender and the message as readMessages returns it, from the feed's one read")
    func newMessageFromThePass() throws {
        let fixture = try StoreFixture()
        let db = try DaemonDatabase(directory: fixture.directory)
        let startSeq = try db.read { conn in try ChangeLogRepository.latestSeq(on: conn) }
        let conn = try fixture.open()
        _ = try conn.immediateTransaction { () throws(IncomingWriteError) in
            try IncomingMessageWriter.write(fixture.text("read once"), recipientInboxId: fixture.inboxId,
                                            topic: fixture.topic, now: fixture.now, on: conn)
        }
        let changes = try db.read { conn in
            FeedChange.read(try ChangeLogRepository.since(seq: startSeq, limit: 100, on: conn), on: conn)
        }
        let told = changes.map(ChangeNotification.init).first { $0.kind == ChangeKind.messageInserted.rawValue }
        #expect(told?.text == "read once", "the notification is not the pass's value")
        #expect(told?.senderName == "Sender")
        #expect(told?.outgoing == false)
        #expect(told?.message?.text == "read once", "the notification carries the message as readMessages returns it")
        #expect(told?.message?.id == told?.entityId)
    }

    @Test("a gap the replay met is the subscribe result's ChangeGap, field for field")
    func gapOnTheWire() {
        let gap = ChangeGap(FeedGap(afterSeq: 7, resumedAtSeq: 12, reason: "SQLITE_CORRUPT", remedy: "stop sotto"))
        #expect(gap.afterSeq == 7)
        #expect(gap.resumedAtSeq == 12)
        #expect(gap.reason == "SQLITE_CORRUPT")
        #expect(gap.remedy == "stop sotto")
    }
}
