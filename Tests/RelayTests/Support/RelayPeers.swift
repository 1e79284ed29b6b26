import DaemonStore
import SharedStore
import Foundation
import RelayTransport
import SottoCrypto
import TestSupport
import SottoWire

/// Devices that send and receive through relays, all real (docs/adr/0028): each a `Device`
/// (its own `sotto daemon`, push.sock with the real worker) started with `SOTTO_RELAY`, plus
/// its own `sotto-relayd`; one nats-server for them all unless a device is given another URL.
///
/// ```swift
/// guard let peers = try RelayPeers.make(["alice", "bob"]) else { return }   // nil: no nats-server
/// defer { peers.tearDown() }
/// let trip = try peers.conversation(creator: "alice", joiner: "bob")
/// ```
final class RelayPeers: @unchecked Sendable {
    let tmp: TemporaryDirectory
    let server: NatsServer
    private(set) var devices: [String: Device] = [:]
    private var relayds: [String: RelaydRuns] = [:]
    private var inspector: RelayConnection?
    /// The relay login every device's daemon and relayd get (credential variables).
    private var login: [String: String] = [:]
    /// Added to every sotto-relayd's arguments (e.g. `--sleeping-drain-ms`).
    private var relaydArguments: [String] = []

    /// How the tests' own inspecting connection logs in (the devices' credentials; in
    /// operator mode the operator's admin user).
    let credentials: RelayCredentials
    /// The relay in operator mode (docs/adr/0051); nil: an open relay or a shared user.
    private(set) var operatorSetup: RelayOperatorSetup?

    private init(tmp: TemporaryDirectory, server: NatsServer, credentials: RelayCredentials) {
        self.tmp = tmp
        self.server = server
        self.credentials = credentials
    }

    /// nil when nats-server is not installed. `startServer: false` leaves the relay down
    /// (the daemons start anyway: a relay that is down is not a configuration error).
    /// `user`/`password`: the relay requires them, and every device is given them.
    /// `observed`: the relay also serves its monitoring port and traces every client's protocol
    /// (`-V`), for `RelayLinkage`. `monitored`: only the monitoring port (`/varz`, `/jsz`), no
    /// trace (tracing megabytes of attachment pieces would cost the test more than it shows).
    /// `environment`: added to every device's daemon and CLI.
    /// `operatorMode`: the relay is set up by `scripts/relay-operator.py` and every device gets
    /// its signing key (per-identity users; the server is then always started).
    /// `groupIn`: a device's group directory goes there (the power-cut file system's mount);
    /// the relay's store never does.
    static func make(_ names: [String], startServer: Bool = true, user: String? = nil,
                     password: String? = nil, observed: Bool = false, monitored: Bool = false, operatorMode: Bool = false,
                     environment: [String: String] = [:], daemonArguments: [String] = [],
                     relaydArguments: [String] = [], groupIn: [String: String] = [:]) throws -> RelayPeers? {
        guard NatsServer.isInstalled else {
            print(NatsServer.skipMessage)
            return nil
        }
        let tmp = try TemporaryDirectory(prefix: "rs")
        var login: [String: String] = [:]
        var serverArguments: [String] = []
        var credentials = RelayCredentials.none
        if let user, let password {
            login = [RelayCredentials.userVariable: user, RelayCredentials.passwordVariable: password]
            serverArguments = ["--user", user, "--pass", password]
            credentials = .userPassword(user: user, password: password)
        }
        let setup = try operatorMode ? RelayOperatorSetup.make(directory: tmp.path + "/relay-operator") : nil
        if let setup {
            login = [RelaySigningKey.variable: setup.signingKeyPath]
            serverArguments = ["-c", setup.configPath]
            credentials = .credsFile(path: setup.adminCredsPath)
        }
        let server = try NatsServer.prepare(storeDirectory: tmp.path + "/jetstream",
                                            extraArguments: serverArguments + (observed ? ["-V"] : []), monitoring: observed || monitored)
        if startServer || setup != nil { try server.restart() }
        try setup?.createStreams(server)
        let peers = RelayPeers(tmp: tmp, server: server, credentials: credentials)
        peers.operatorSetup = setup
        peers.login = login
        peers.relaydArguments = relaydArguments
        do {
            for name in names {
                peers.devices[name] = try Device.start(name, in: tmp.path,
                                                       environment: login.merging(["SOTTO_RELAY": server.url]) { $1 }
                                                           .merging(environment) { $1 },
                                                       groupIn: groupIn[name], daemonArguments: daemonArguments)
                if startServer { try peers.startRelayd(name) }
            }
        } catch {
            peers.tearDown()
            throw error
        }
        return peers
    }

    subscript(name: String) -> Device { devices[name]! }

    // MARK: - sotto-relayd

    /// Starts the device's sotto-relayd and waits until it is connected to the relay (or,
    /// with `waitForRelay: false`, only until it started).
    func startRelayd(_ name: String, waitForRelay: Bool = true) throws {
        let device = self[name]
        let environment = device.environment.merging(["SOTTO_RELAY": server.url, "PATH": "/usr/bin:/bin"]) { $1 }
            .merging(login) { $1 }
        let runs = relayds[name, default: RelaydRuns()]
        relayds[name] = runs
        let process = try runs.launch(["--ack-wait-ms", "3000", "--retry-min-ms", "200"] + relaydArguments, environment: environment)
        guard process.waitForLine(containing: waitForRelay ? "relay connected:" : "starting:", timeout: 30) else {
            throw RelayRigFailure("\(name)'s sotto-relayd did not start: \(process.output.suffix(8))")
        }
    }

    /// SIGTERM stops it; SIGKILL is a crash (or the power going).
    func stopRelayd(_ name: String, signal: Int32 = SIGTERM) { relayds[name]?.stop(signal) }

    /// Every line the device's sotto-relayd printed, across restarts.
    func relaydOutput(_ name: String) -> [String] { relayds[name]?.output ?? [] }

    // MARK: - Conversations

    /// Creates a conversation on `creator`, invites `joiner` and waits until both see it
    /// active with two members: the join request and the membership both went through the relay.
    /// `revokeInvites`: the creator then revokes the invite, so it no longer keeps the inbox
    /// awake (a pending invite protects it).
    func conversation(creator: String, joiner: String, timeout: Int64 = 60_000, revokeInvites: Bool = false) throws -> String {
        try conversation(creator: creator, joiners: [joiner], timeout: timeout, revokeInvites: revokeInvites)
    }

    /// The same with each of `joiners` in turn, on an invite of its own.
    func conversation(creator: String, joiners: [String], timeout: Int64 = 60_000, revokeInvites: Bool = false) throws -> String {
        let alice = self[creator]
        guard let id = try alice.json(["new", "--name", "Relay"])["conversationId"] as? String else {
            throw RelayRigFailure("new returned no id")
        }
        for (index, joiner) in joiners.enumerated() {
            let bob = self[joiner]
            guard let code = try alice.json(["invite", id, "--expires", "1h"])["code"] as? String else {
                throw RelayRigFailure("invite returned no code")
            }
            let joined = try bob.json(["join", code, "--profile-name", joiner])
            guard joined["conversationId"] as? String == id else { throw RelayRigFailure("join returned \(joined)") }
            try bob.waitUntil("\(joiner) active", timeoutMs: timeout) { try bob.conversation(id)?["state"] as? String == "active" }
            try alice.waitUntil("\(creator) lists \(index + 2) members", timeoutMs: timeout) {
                try alice.conversation(id)?["members"] as? Int == index + 2
            }
            if revokeInvites { _ = try alice.json(["revoke", id, code]) }
        }
        return id
    }

    /// Sends `text` and returns the new message's id.
    @discardableResult
    func send(_ name: String, _ conversation: String, _ text: String) throws -> String {
        guard let id = try self[name].json(["send", conversation, text])["messageId"] as? String else {
            throw RelayRigFailure("send returned no messageId")
        }
        return id
    }

    /// The message with `id` as `sotto read --json` shows it on `name`.
    func message(_ name: String, _ conversation: String, id: String) -> [String: Any]? {
        self[name].messages(conversation).first { $0["id"] as? String == id }
    }

    /// Texts of the conversation's incoming messages on `name`, oldest first.
    func receivedTexts(_ name: String, _ conversation: String) -> [String] {
        self[name].messages(conversation).filter { $0["outgoing"] as? Bool == false && $0["contentType"] as? String == ContentType.text }
            .compactMap { $0["text"] as? String }
    }

    /// Outbox rows of our own message `id` on `name`: (state, lastError) per member.
    func outboxStates(_ name: String, messageId: String) throws -> [(state: String, lastError: String?)] {
        try self[name].query("SELECT state, lastError FROM outbox WHERE messageId = ? ORDER BY memberInboxId", [.text(messageId)])
            .map { (try $0.string(0), try $0.optionalString(1)) }
    }

    /// Texts of the incoming text messages the worker stored on `name`, in the order it stored
    /// them (rowid), each as often as it was stored.
    func storedTexts(_ name: String, _ conversation: String) throws -> [String] {
        let conn = try self[name].keyedConnection()
        return try conn.query("""
            SELECT id FROM message WHERE conversationId = ? AND isOutgoing = 0 AND contentType = ? ORDER BY rowid
            """, [.text(conversation), .text(ContentType.text)])
            .map { row in
                guard let content = try MessageRowRepository.find(id: try row.string(0), on: conn)?.content,
                      case .text(let text)? = try? MessageContent.decode(contentType: ContentType.text, content: content,
                                                                         fallback: nil) else { return "?" }
                return text
            }
    }

    /// `name`'s relay user for its identity in `conversation`, as its relayd keeps it
    /// (`relayd-users/<clientId>.nk`; operator mode only).
    func relayUser(_ name: String, clientId: String) throws -> Nkey {
        let path = self[name].group.path + "/relayd-users/\(clientId).nk"
        return try Nkey(seed: try String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
                        kind: .user)
    }

    /// The mailbox of `name`'s identity in `conversation` (its clientId's subject).
    func mailbox(_ name: String, _ conversation: String) throws -> Mailbox {
        guard let row = try self[name].query("SELECT clientId FROM conversation WHERE id = ?", [.text(conversation)]).first else {
            throw RelayRigFailure("\(name) has no conversation \(conversation)")
        }
        return try Mailbox(clientId: try row.string(0))
    }

    /// The clientId of `name`'s unused inbox, from the header of its keystore slot
    /// ("SOTTOKS1", then 36 ASCII bytes); nil when there is none.
    func unusedClientId(_ name: String) -> String? {
        guard let bytes = FileManager.default.contents(atPath: self[name].group.keystorePath + "/unused.identity"),
              bytes.count >= 44, bytes.prefix(8) == Data("SOTTOKS1".utf8) else { return nil }
        return String(decoding: bytes[8..<44], as: UTF8.self)
    }

    // MARK: - The relay

    /// A connection for inspecting the relay (a fresh one after the server restarted).
    func relay() throws -> RelayConnection {
        if let inspector, inspector.isConnected { return inspector }
        inspector?.close()
        var options = RelayConnection.Options()
        options.name = "test-inspector"
        let connection = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url), credentials: credentials),
                                                     options: options)
        inspector = connection
        return connection
    }

    /// What to print when a test fails: each device's outbox and the tail of its logs.
    func diagnostics() -> String {
        devices.keys.sorted().map { name in
            let outbox = (try? self[name].query("SELECT messageId, endpoint, state, attempts, lastError FROM outbox"))?
                .map { row in (0..<5).map { (try? row.optionalString($0)) ?? "?" }.map { $0 ?? "nil" }.joined(separator: " ") } ?? []
            return "== \(name)\noutbox: \(outbox)\nrelayd: \(relaydOutput(name).suffix(15).joined(separator: "\n"))\n"
                + "daemon: \(self[name].daemonLog.split(separator: "\n").suffix(15).joined(separator: "\n"))"
        }.joined(separator: "\n") + "\n== nats-server\n" + server.log.filter(NatsServer.isProblemLine).suffix(20).joined(separator: "\n")
    }

    /// Runs `body`; on a thrown error prints `diagnostics()` first.
    func diagnosed<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch {
            print(diagnostics())
            throw error
        }
    }

    func tearDown() {
        for name in Array(relayds.keys) { stopRelayd(name) }
        for device in devices.values { device.stop() }
        inspector?.close()
        server.stop()
        tmp.remove()
    }
}
