@testable import DaemonCore
import Foundation
import Synchronization
import Testing

/// An inbox that wakes (its windows load their history) while the change feed applies a new
/// message for it: the message must end up in the new store, whichever runs first. The
/// feed's side is what `ConversationService.apply` does: the row is committed, then the
/// message is appended to the store if one is open. The wake's side is
/// `AwakeInboxes.activate`: the history is read inside `ConversationWindows.open`.
@Suite("Waking while the feed applies")
struct WakeWhileApplyingTests {
    static let rounds = 2_000

    @Test("a message committed during a wake is in the new store: history or append, never neither")
    func wakeRacesApply() async throws {
        var lost = 0
        for round in 0..<Self.rounds {
            let registry = ConversationWindows()
            let committed = CommittedRows([message("old-\(round)", at: 1)])
            let new = message("new-\(round)", at: 2)
            async let wake: Void = {
                _ = try await registry.open("c1") { committed.all }
            }()
            async let apply: Void = {
                committed.append(new)  // the commit
                if let store = await registry.window(for: "c1") { _ = try await store.append(new) }
            }()
            try await wake
            try await apply
            let store = try #require(await registry.window(for: "c1"))
            if await store.message(id: new.id) == nil { lost += 1 }
        }
        #expect(lost == 0, "\(lost) of \(Self.rounds) messages missing from the woken store")
    }

    /// The order the first test's race can take, forced: with the history read before `open`
    /// (as the wake did before), a message committed in between is lost; read inside `open`, it
    /// is not. Without this the first test could pass because its window never opens.
    @Test("reading the history before open loses a message committed in between; reading it inside open does not")
    func historyReadOutsideOpen() async throws {
        let committed = CommittedRows([message("old", at: 1)])
        let new = message("new", at: 2)
        let before = ConversationWindows()
        let history = committed.all                    // the old wake reads the history…
        committed.append(new)                          // …the feed commits…
        #expect(await before.window(for: "c1") == nil)  // …finds no store to append to…
        _ = try await before.open("c1", history: history)  // …and the wake opens without it.
        #expect(await before.window(for: "c1")?.message(id: new.id) == nil)

        let inside = ConversationWindows()
        _ = try await inside.open("c1") { committed.all }
        #expect(await inside.window(for: "c1")?.message(id: new.id) != nil)
    }
}

/// The rows "in the database": appended by the committing side, read by the waking side.
private final class CommittedRows: Sendable {
    private let rows: Mutex<[TimelineMessage]>
    init(_ rows: [TimelineMessage]) { self.rows = Mutex(rows) }
    var all: [TimelineMessage] { rows.withLock { $0 } }
    func append(_ message: TimelineMessage) { rows.withLock { $0.append(message) } }
}
