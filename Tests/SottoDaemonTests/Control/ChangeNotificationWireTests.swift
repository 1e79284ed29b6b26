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
    @Test("a new message's notification carries what the feed's pass read, even when its row is gone before the subscriber hears of it")
    func newMessageFromThePass() async throws {
        let fixture = try StoreFixture()
        let db = try DaemonDatabase(directory: fixture.directory)
        let startSeq = try db.read { conn in try ChangeLogRepository.latestSeq(on: conn) }
        let feed = ChangeFeed(database: db, startingAt: startSeq) { changes in
            // Gone before any subscriber hears of it (as an explode would wipe it).
            for change in changes where change.knownKind == .messageInserted {
                _ = try? await db.write { conn in try conn.execute("DELETE FROM message WHERE id = '\(change.change.entityId ?? "")'") }
            }
        }
        let (_, first, _) = await feed.subscribe(since: nil)
        let (_, second, _) = await feed.subscribe(since: nil)
        let conn = try fixture.open()
        _ = try conn.immediateTransaction { () throws(IncomingWriteError) in
            try IncomingMessageWriter.write(fixture.text("read once"), recipientInboxId: fixture.inboxId,
                                            topic: fixture.topic, now: fixture.now, on: conn)
        }
        await feed.catchUp()

        for stream in [first, second] {
            var iterator = stream.makeAsyncIterator()
            var told = await iterator.next().map(ChangeNotification.init)
            while let change = told, change.kind != ChangeKind.messageInserted.rawValue {
                told = await iterator.next().map(ChangeNotification.init)
            }
            #expect(told?.text == "read once", "a subscriber re-read the row instead of getting the pass's value")
            #expect(told?.senderName == "Sender")
            #expect(told?.outgoing == false)
            #expect(told?.message?.text == "read once", "the notification carries the message as readMessages returns it")
            #expect(told?.message?.id == told?.entityId)
        }
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
