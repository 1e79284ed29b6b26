import Foundation
import SharedStore
import Testing
import TestSupport

/// `sotto notifications` through the real daemon: the device's setting and a conversation's
/// own, as the worker reads them (the worker's side: WorkerAfterCommitTests), and garbage
/// refused without a change.
@Suite("Messaging: notification preview setting", .serialized)
struct NotificationPreviewTests {
    @Test("the device's setting, a conversation's override and default; what the worker's query then reads")
    func setAndRead() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        #expect(try alice.json(["notifications"])["device"] as? String == "full")

        let device = try alice.cli(["notifications", "--preview", "name"])
        #expect(device.status == 0)
        #expect(device.stdout.contains("notifications show: name (device)"))
        var read = try alice.json(["notifications", String(trip.prefix(6))])
        #expect(read["effective"] as? String == "name")
        #expect(read["conversationPreview"] == nil)

        #expect(try alice.cli(["notifications", trip, "--preview", "none"]).status == 0)
        read = try alice.json(["notifications", trip])
        #expect(read["conversationPreview"] as? String == "none")
        #expect(read["effective"] as? String == "none")
        #expect(try Self.stored(alice, trip) == ("name", "none"))

        #expect(try alice.cli(["notifications", trip, "--preview", "default"]).status == 0)
        #expect(try alice.json(["notifications", trip])["effective"] as? String == "name")
        #expect(try Self.stored(alice, trip) == ("name", nil))
    }

    @Test("garbage values and unknown conversations are refused and change nothing")
    func refusals() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String)
        #expect(try alice.cli(["notifications", trip, "--preview", "none"]).status == 0)
        for arguments in [["notifications", "--preview", "everything"], ["notifications", trip, "--preview", ""],
                          ["notifications", "--preview", "default"], ["notifications", "ffffffffff", "--preview", "name"],
                          ["notifications", trip, "--preview", "NONE"]] {
            let result = try alice.cli(arguments)
            #expect(result.status != 0, "\(arguments)")
            #expect(!result.stderr.isEmpty)
        }
        #expect(try Self.stored(alice, trip) == ("full", "none"))
    }

    /// The device's value (full when unset) and the conversation's column, from the database.
    private static func stored(_ device: Device, _ conversation: String) throws -> (String, String?) {
        let deviceValue = try device.query("SELECT value FROM device_setting WHERE key = 'notificationPreview'").first?.string(0)
        let own = try device.query("SELECT notificationPreview FROM conversation_local_state WHERE conversationId = ?",
                                   [.text(conversation)]).first?.optionalString(0)
        return (deviceValue ?? "full", own)
    }
}
