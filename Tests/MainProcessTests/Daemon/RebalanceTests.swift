import Foundation
import SharedStore
import Testing
import TestSupport

extension DaemonProcessTests {
    /// The daemon runs `rebalance()` on its own, every `SOTTO_REBALANCE_MS` (60 s by default,
    /// docs/adr/0033): a slot an explode freed goes to the most active sleeping inbox without
    /// anything else waking it.
    @Suite("Inbox rebalance")
    struct RebalanceTests {
        @Test("an explode frees a slot at capacity 2; the periodic rebalance wakes the sleeping inbox (activityRanking)")
        func periodicRebalanceFillsAFreedSlot() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home, capacity: 2, environment: ["SOTTO_REBALANCE_MS": "200"])
            defer { _ = try? daemon.stop() }
            let oldest = try daemon.result("newConversation", ["name": "Oldest"])
            let oldestInbox = try #require(oldest["inboxId"] as? String)
            _ = try daemon.result("newConversation", ["name": "Middle"])
            let newest = try #require(try daemon.result("newConversation", ["name": "Newest"])["conversationId"] as? String)
            let before = try daemon.result("status")
            #expect(!((before["awake"] as? [String])?.contains(oldestInbox) ?? true), "the oldest was evicted")
            #expect((before["wakeReasons"] as? [String: Any])?["activityRanking"] == nil)

            let exploded = try daemon.result("explode", ["conversation": newest])
            #expect(exploded["deleted"] as? Bool == true)
            let after = try daemon.waitForStatus(timeout: 15) { status in
                (status["awake"] as? [String])?.contains(oldestInbox) == true
            }
            #expect(int64((after["wakeReasons"] as? [String: Any])?["activityRanking"]) == 1)
            #expect(int64(after["awakeCount"]) == 2)
        }

        @Test("a rebalance interval, a pending-join limit, a notice age or a relay idle time out of range stops the daemon with exit 78 naming it")
        func badSettingsRefused() throws {
            for (name, value) in [("SOTTO_REBALANCE_MS", "50"), ("SOTTO_REBALANCE_MS", "often"), ("SOTTO_PENDING_JOIN_MAX_MS", "0"),
                                  ("SOTTO_PENDING_JOIN_MAX_MS", "-5"), ("SOTTO_NOTICE_MAX_AGE_MS", "soon"),
                                  ("SOTTO_NOTICE_MAX_AGE_MS", "0"), ("SOTTO_RELAY_IDLE_MS", "99"),
                                  ("SOTTO_RELAY_IDLE_MS", "1e3; rm -rf /"), ("SOTTO_RELAY_IDLE_MS", "")] {
                let home = try DaemonHome()
                let daemon = try DaemonProcess.launch(home: home, environment: [name: value])
                #expect(daemon.waitForExit() == 78, "\(name)=\(value)")
                #expect(daemon.log.contains("\(name)=\(value) is not a number of milliseconds"), "\(daemon.log)")
            }
        }
    }
}
