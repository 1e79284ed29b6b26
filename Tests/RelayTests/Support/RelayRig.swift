import Foundation
import RelayTransport
import SharedStore
import TestSupport

/// One device behind a relay, all real: a nats-server with JetStream on loopback, the
/// device's group directory (`WorkerFixture`: its identity, conversation and a sender key),
/// its push.sock served by systemd-socket-activate starting the real `sotto-notify`, and the
/// real `sotto-relayd` between the two. A publisher connection plays the remote senders.
///
/// ```swift
/// guard let rig = try RelayRig.make() else { return }   // nil: nats-server not installed
/// defer { rig.tearDown() }
/// try rig.startPushSocket(); try rig.startRelayd()
/// try rig.publish(try rig.fixture.sealTextForRelay("hi"))
/// ```
final class RelayRig: @unchecked Sendable {
    let fixture: WorkerFixture
    let server: NatsServer
    let mailbox: Mailbox
    /// A relay in operator mode, devices with its signing key (docs/adr/0051); nil: an open relay.
    let operatorSetup: RelayOperatorSetup?
    private let relaydRuns = RelaydRuns()
    var relayd: LoggedProcess? { relaydRuns.current }
    private var pushSocket: PushSocketServer?
    private var publisherConnection: RelayConnection?

    var pushSocketPath: String { fixture.runtimeDirectory + "/push.sock" }

    private init(fixture: WorkerFixture, server: NatsServer, operatorSetup: RelayOperatorSetup? = nil) throws {
        self.fixture = fixture
        self.server = server
        self.operatorSetup = operatorSetup
        mailbox = try Mailbox(clientId: fixture.recipient.clientId)
    }

    /// nil when nats-server is not installed (the caller skips with `NatsServer.skipMessage`).
    /// `startServer: false` leaves the relay down (started later with `server.restart()`).
    /// `groupIn`: the device's group directory goes there (the power-cut file system); the
    /// relay's own store never does.
    /// `operatorMode`: the relay is set up with `scripts/relay-operator.py` and relayd logs in
    /// with per-identity users minted with its signing key (the server is then always started).
    /// `monitoring`: the relay serves its monitoring port (`/connz`), for `RelayLinkage`.
    static func make(startServer: Bool = true, groupIn: String? = nil, operatorMode: Bool = false,
                     monitoring: Bool = false) throws -> RelayRig? {
        guard NatsServer.isInstalled else {
            print(NatsServer.skipMessage)
            return nil
        }
        guard let vectors = try Vectors.load() else { throw RelayRigFailure("vectors file not found: set SOTTO_VECTORS") }
        let fixture = try WorkerFixture(vectors: vectors, groupIn: groupIn)
        if operatorMode {
            let setup = try RelayOperatorSetup.make(directory: fixture.tmp.path + "/relay-operator")
            let server = try setup.startServer(storeDirectory: fixture.tmp.path + "/jetstream")
            return try RelayRig(fixture: fixture, server: server, operatorSetup: setup)
        }
        let server = try NatsServer.prepare(storeDirectory: fixture.tmp.path + "/jetstream", monitoring: monitoring)
        if startServer { try server.restart() }
        return try RelayRig(fixture: fixture, server: server)
    }

    // MARK: - The device

    /// push.sock with the real worker behind it: Accept=yes (one worker per push, the
    /// default unit) or Accept=no (one warm worker, the high-rate variant).
    func startPushSocket(acceptYes: Bool = true, extraEnvironment: [String: String] = [:]) throws {
        let worker = try builtExecutable("sotto-notify")
        pushSocket = try PushSocketServer.start(
            socketPath: pushSocketPath, accept: acceptYes,
            command: acceptYes ? [worker] : [worker, "--idle-timeout", "600"],
            environment: fixture.environment.merging(extraEnvironment) { $1 })
    }

    /// What the push socket's workers printed so far (empty when it is not running).
    var pushSocketLog: String { pushSocket?.log ?? "" }

    func stopPushSocket() {
        pushSocket?.stop()
        pushSocket = nil
    }

    var relaydEnvironment: [String: String] {
        fixture.environment.merging(["SOTTO_RELAY": server.url, "PATH": "/usr/bin:/bin"]) { $1 }
            .merging(operatorSetup.map { [RelaySigningKey.variable: $0.signingKeyPath] } ?? [:]) { $1 }
    }

    /// Starts sotto-relayd and waits until it has opened the recipient's mailbox (the relay
    /// may be down: then only until it started).
    func startRelayd(arguments: [String] = ["--ack-wait-ms", "3000", "--retry-min-ms", "200"],
                     waitForMailbox: Bool = true, extraEnvironment: [String: String] = [:]) throws {
        let process = try relaydRuns.launch(arguments, environment: relaydEnvironment.merging(extraEnvironment) { $1 })
        let ready = waitForMailbox ? "identity added: \(mailbox)" : "starting:"
        guard process.waitForLine(containing: ready, timeout: 30) else {
            throw RelayRigFailure("sotto-relayd did not start: \(process.output.suffix(8))")
        }
        if waitForMailbox {
            try waitUntil("the consumer exists", timeout: 30) { try self.publisher().consumerState(self.ownedMailbox()) != nil }
        }
    }

    /// SIGKILL sotto-relayd (a crash at whatever point it was).
    func killRelayd() { relaydRuns.stop(SIGKILL) }

    func stopRelayd() { relaydRuns.stop() }

    /// Every line sotto-relayd printed, across restarts.
    var relaydOutput: [String] { relaydRuns.output }

    // MARK: - The senders

    /// The recipient's mailbox as its consumer is named: in operator mode by the public key of
    /// the relay user relayd made for the identity (`relayd-users/<clientId>.nk`).
    func ownedMailbox() throws -> Mailbox {
        guard operatorSetup != nil else { return mailbox }
        let path = fixture.group.path + "/relayd-users/\(mailbox.clientId).nk"
        let seed = try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        return mailbox.owned(by: try Nkey(seed: seed, kind: .user).publicKey)
    }

    /// A connection for publishing and inspecting the relay (reconnects by itself): in
    /// operator mode the operator's admin user, which may look at every consumer.
    func publisher() throws -> RelayConnection {
        if let publisherConnection { return publisherConnection }
        let connection = try operatorSetup.map { try $0.adminConnection(server) } ?? RelayConnection.testPublisher(server.url)
        try connection.ensureStream()
        publisherConnection = connection
        return connection
    }

    @discardableResult
    func publish(_ push: WorkerFixture.Push) throws -> PublishAck {
        try publisher().publish(push.payload, to: mailbox, messageId: push.messageId)
    }

    // MARK: - Observing

    /// Message ids in the order the worker stored them.
    func storedMessageIds() throws -> [String] {
        try fixture.open().query("SELECT id FROM message ORDER BY rowid").map { try $0.string(0) }
    }

    func tearDown() {
        stopRelayd()
        stopPushSocket()
        publisherConnection?.close()
        server.stop()
        fixture.tmp.remove()
    }
}

struct RelayRigFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Polls `condition` until it holds or `timeout` seconds pass (then throws, saying what).
func waitUntil(_ what: String, timeout: TimeInterval, _ condition: () throws -> Bool) throws {
    let deadline = Date(timeIntervalSinceNow: timeout)
    var lastError: Error?
    while Date() < deadline {
        do {
            if try condition() { return }
        } catch {
            lastError = error
        }
        usleep(20_000)
    }
    throw RelayRigFailure("timed out after \(timeout) s waiting for \(what)\(lastError.map { " (last error: \($0))" } ?? "")")
}

