import Foundation
import Glibc
import RelayTransport
import Synchronization
import Testing
import TestSupport

/// The test harness's nats-server processes: ports nothing else can take while a server
/// starts, and "started" meaning every listener is open (the 3-node test failed twice in
/// fresh-clone runs on a node that said "Server is ready", then died on its route port).
@Suite("nats-server harness", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct NatsServerHarnessTests {
    /// Binds 127.0.0.1:0 (as any other process picking a port does) and returns the port got.
    static func anyFreePort() throws -> Int { try NatsServer.freeLoopbackPort() }

    @Test("a reserved port is handed to no other bind(0), and nats-server still listens on it")
    func reservedPortIsKept() throws {
        let reserved = try PortReservation()
        var handedOut = Set<Int>()
        for _ in 0..<20_000 { handedOut.insert(try Self.anyFreePort()) }
        #expect(!handedOut.contains(reserved.port), "the reserved port \(reserved.port) was handed to another bind(0)")
        #expect(handedOut.count > 1_000, "bind(0) cycled through only \(handedOut.count) ports; the check proves little")

        let dir = try TemporaryDirectory(prefix: "sotto-nats-port")
        defer { dir.remove() }
        let server = try NatsServer.prepare(storeDirectory: dir.path + "/js", port: reserved.port)
        try server.restart()
        defer { server.stop() }
        #expect(server.log.contains { $0.contains("Listening for client connections on 127.0.0.1:\(reserved.port)") })
    }

    @Test("a cluster node whose route port is taken does not count as started, though it said \"Server is ready\"")
    func routePortTakenIsAFailedStart() throws {
        // Someone else listens on the node's route port (what a port picked and released can become).
        let thief = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(thief) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let listening = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(thief, $0, length) == 0 && listen(thief, 1) == 0 && getsockname(thief, $0, &length) == 0
            }
        }
        try #require(listening)
        let taken = Int(UInt16(bigEndian: address.sin_port))

        let dir = try TemporaryDirectory(prefix: "sotto-nats-route")
        defer { dir.remove() }
        let node = try NatsServer.prepare(storeDirectory: dir.path + "/js", name: "node-x", extraArguments: [
            "--cluster_name", "sotto-test", "--cluster", "nats://127.0.0.1:\(taken)", "--routes", "nats://127.0.0.1:\(taken)",
        ])
        defer { node.stop() }
        #expect(throws: LoggedProcess.Failure.self) { try node.restart() }
    }
}

/// RelayConnection's event handler outlives `close()`: the C client reports the disconnect of
/// a close on its own thread after `close()` returned (a relay suite run crashed there, in a
/// handler already freed).
@Suite("Relay connection events", .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayConnectionEventTests {
    @Test("connect and close 300 times: every close's disconnect reaches its handler, after close() returned")
    func handlerOutlivesClose() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-nats-events")
        defer { dir.remove() }
        let server = try NatsServer.start(storeDirectory: dir.path + "/js")
        defer { server.stop() }
        let config = RelayConfiguration(url: try RelayURL.parse(server.url))
        let disconnects = Mutex(0)
        let rounds = 300
        for _ in 0..<rounds {
            // A handler with state of its own, freed with the connection unless the client holds it.
            let tag = [UInt8](repeating: 7, count: 64)
            let connection = try RelayConnection.connect(config) { event in
                if event == .disconnected, tag.count == 64 { disconnects.withLock { $0 += 1 } }
            }
            connection.close()
        }
        try waitUntil("\(rounds) disconnects reported", timeout: 60) { disconnects.withLock { $0 } == rounds }
    }
}
