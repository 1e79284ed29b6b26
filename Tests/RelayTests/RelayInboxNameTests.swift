import Foundation
import RelayTransport
import Testing
import TestSupport

/// The C client's inbox names in this build (docs/adr/0044): CNatsNUID replaces nats.c's
/// NUIDs, whose first 12 characters one process shares across all of its connections, so no
/// two of a device's connections show the relay a common inbox name part.
@Suite("Relay inbox names")
struct RelayInboxNameTests {
    @Test("this process's NATS client takes its NUIDs from CNatsNUID, so connecting is allowed")
    func nuidsArePrivate() {
        #expect(RelayConnection.inboxNamesArePrivate)
    }

    @Test("two connections to a real relay subscribe under inbox names that share nothing past _INBOX.")
    func twoConnectionsShareNoInboxPart() throws {
        guard NatsServer.isInstalled else { return }
        let tmp = try TemporaryDirectory(prefix: "rin")
        defer { tmp.remove() }
        let server = try NatsServer.prepare(storeDirectory: tmp.path + "/js", monitoring: true)
        try server.restart()
        defer { server.stop() }
        let config = RelayConfiguration(url: try RelayURL.parse(server.url))
        let connections = try (0..<2).map { _ in try RelayConnection.connect(config) }
        defer { for connection in connections { connection.close() } }
        for connection in connections { try connection.ensureStream() }  // a request: the client subscribes its reply inbox
        let inboxes = try NatsMonitor(port: server.monitorPort!).json("/connz?subs=1")["connections"] as? [[String: Any]] ?? []
        let subjects = inboxes.map { ($0["subscriptions_list"] as? [String] ?? []).filter { $0.hasPrefix("_INBOX.") } }
        #expect(subjects.count == 2 && subjects.allSatisfy { $0.count == 1 }, "\(subjects)")
        let tokens = subjects.map { Set(($0.first ?? "").split(separator: ".").dropFirst().filter { $0.count == 22 }.map { String($0.prefix(12)) }) }
        #expect(tokens.count == 2 && tokens.allSatisfy { $0.count == 2 } && tokens[0].isDisjoint(with: tokens[1]), "\(subjects)")
        #expect(inboxes.allSatisfy { ($0["name"] as? String ?? "").isEmpty }, "no client name")
    }
}
