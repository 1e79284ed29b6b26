import Foundation
import RelayTransport
import SharedStore
import Testing
import TestSupport

/// `tls://` relays and relays that require a login, with real processes: a `nats-server --tls`
/// whose certificate comes from a private CA made here with openssl, the real sotto-relayd and
/// the real worker on push.sock. A certificate the device does not trust, or one for another
/// host, is refused with a log line saying so, and nothing is delivered.
@Suite("Relay TLS and login", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayTLSTests {
    /// One device with its push socket, a relay, and the device's sotto-relayd pointed at `url`.
    final class Setup {
        let fixture: WorkerFixture
        let server: NatsServer
        let mailbox: Mailbox
        let certificates: String
        private var pushSocket: PushSocketServer?
        private(set) var relayd: LoggedProcess?

        init(serverArguments: (String) throws -> [String]) throws {
            guard let vectors = try Vectors.load() else { throw RelayRigFailure("vectors file not found") }
            fixture = try WorkerFixture(vectors: vectors)
            certificates = fixture.tmp.path + "/certs"
            try FileManager.default.createDirectory(atPath: certificates, withIntermediateDirectories: true)
            server = try NatsServer.prepare(storeDirectory: fixture.tmp.path + "/jetstream",
                                            extraArguments: try serverArguments(certificates))
            try server.restart()
            mailbox = try Mailbox(clientId: fixture.recipient.clientId)
            pushSocket = try PushSocketServer.start(socketPath: fixture.runtimeDirectory + "/push.sock", accept: true,
                                                    command: [try builtExecutable("sotto-notify")],
                                                    environment: fixture.environment)
        }

        func startRelayd(url: String, environment: [String: String] = [:]) throws -> LoggedProcess {
            let process = try LoggedProcess.launch(
                try builtExecutable("sotto-relayd"), ["--retry-min-ms", "200"],
                environment: fixture.environment.merging(["SOTTO_RELAY": url, "PATH": "/usr/bin:/bin"]) { $1 }
                    .merging(environment) { $1 })
            relayd = process
            return process
        }

        /// Publishes one push as a sender that trusts the server (its config given).
        func publish(_ config: RelayConfiguration) throws -> WorkerFixture.Push {
            let publisher = try RelayConnection.connect(config)
            defer { publisher.close() }
            try publisher.ensureStream()
            let push = try fixture.sealTextForRelay("over TLS")
            _ = try publisher.publish(push.payload, to: mailbox, messageId: push.messageId)
            return push
        }

        func storedCount(_ config: RelayConfiguration) throws -> UInt64 {
            let connection = try RelayConnection.connect(config)
            defer { connection.close() }
            return try connection.storedCount(mailbox)
        }

        deinit {
            relayd?.signal(SIGTERM)
            _ = relayd?.waitForExit()
            pushSocket?.stop()
            server.stop()
            fixture.tmp.remove()
        }
    }

    static func tlsArguments(_ issued: TestCertificateAuthority.Issued) -> [String] {
        ["--tls", "--tlscert", issued.certificate, "--tlskey", issued.key]
    }

    /// `SSL_CERT_FILE` stands in for the system's trust store (OpenSSL's default paths): a relay
    /// with a certificate from a public CA needs no SOTTO_RELAY_CA.
    @Test("a tls:// relay whose CA the device trusts (SOTTO_RELAY_CA, or the system's store): relayd connects and delivers",
          arguments: ["SOTTO_RELAY_CA", "SSL_CERT_FILE"])
    func trustedCA(_ variable: String) throws {
        var ca: TestCertificateAuthority?
        let setup = try Setup { dir in
            ca = try TestCertificateAuthority.make(named: "relay", in: dir)
            return Self.tlsArguments(try ca!.issue(named: "server", altNames: "IP:127.0.0.1,DNS:localhost"))
        }
        let config = RelayConfiguration(url: try RelayURL.parse(setup.server.tlsURL), caFile: ca!.certificate)
        let push = try setup.publish(config)
        let relayd = try setup.startRelayd(url: setup.server.tlsURL, environment: [variable: ca!.certificate])
        #expect(relayd.waitForLine(containing: "relay connected: \(setup.server.tlsURL)", timeout: 30), "\(relayd.output)")
        try waitUntil("the push stored", timeout: 60) { try setup.fixture.message(id: push.messageId) != nil }
        try waitUntil("the mailbox is empty", timeout: 30) { try setup.storedCount(config) == 0 }
    }

    @Test("a certificate the device does not trust is refused with a clear log line, and nothing is delivered",
          arguments: ["another CA", "the system's CAs", "another host"])
    func untrustedCertificate(_ case: String) throws {
        var trusted: TestCertificateAuthority?, serving: TestCertificateAuthority?
        let setup = try Setup { dir in
            trusted = try TestCertificateAuthority.make(named: "trusted", in: dir)
            serving = `case` == "another CA" ? try TestCertificateAuthority.make(named: "other", in: dir) : trusted
            let names = `case` == "another host" ? "DNS:relay.example.org" : "IP:127.0.0.1,DNS:localhost"
            return Self.tlsArguments(try serving!.issue(named: "server", altNames: names))
        }
        // A sender that does trust the server (it skips the host name check for "another host").
        var senderConfig = RelayConfiguration(url: try RelayURL.parse(setup.server.tlsURL), caFile: serving!.certificate)
        if `case` == "another host" { senderConfig.url = try RelayURL.parse("tls://relay.example.org:\(setup.server.port)") }
        let push = try `case` == "another host" ? nil : setup.publish(senderConfig)

        let environment = `case` == "the system's CAs" ? [:] : ["SOTTO_RELAY_CA": trusted!.certificate]
        let relayd = try setup.startRelayd(url: setup.server.tlsURL, environment: environment)
        #expect(relayd.waitForLine(containing: "TLS handshake with \(setup.server.tlsURL)", timeout: 30), "\(relayd.output)")
        let refusal = relayd.output.first { $0.contains("TLS handshake") } ?? ""
        #expect(refusal.contains("not trusted"), "\(refusal)")
        #expect(!relayd.output.contains { $0.contains("relay connected") })
        #expect(relayd.isRunning, "a certificate problem may be fixed on the relay: relayd keeps retrying")
        if let push {
            #expect(try setup.fixture.message(id: push.messageId) == nil)
            #expect(try setup.storedCount(senderConfig) == 1)
        }
    }

    @Test("a relay that requires a user and password: the right ones deliver over TLS; a wrong password is refused, nothing delivered")
    func userAndPassword() throws {
        var ca: TestCertificateAuthority?
        let setup = try Setup { dir in
            ca = try TestCertificateAuthority.make(named: "relay", in: dir)
            return Self.tlsArguments(try ca!.issue(named: "server", altNames: "IP:127.0.0.1"))
                + ["--user", "bob-device", "--pass", "s3cret-relay-password"]
        }
        let login = RelayCredentials.userPassword(user: "bob-device", password: "s3cret-relay-password")
        let config = RelayConfiguration(url: try RelayURL.parse(setup.server.tlsURL), credentials: login, caFile: ca!.certificate)
        let push = try setup.publish(config)

        let wrong = try setup.startRelayd(url: setup.server.tlsURL, environment: [
            "SOTTO_RELAY_CA": ca!.certificate, "SOTTO_RELAY_USER": "bob-device", "SOTTO_RELAY_PASSWORD": "guessed",
        ])
        #expect(wrong.waitForLine(containing: "Authorization Violation", timeout: 30), "\(wrong.output)")
        #expect(!wrong.output.contains { $0.contains("relay connected") || $0.contains("guessed") })
        #expect(try setup.fixture.message(id: push.messageId) == nil)
        wrong.signal(SIGTERM)
        _ = wrong.waitForExit()

        let right = try setup.startRelayd(url: setup.server.tlsURL, environment: [
            "SOTTO_RELAY_CA": ca!.certificate, "SOTTO_RELAY_USER": "bob-device", "SOTTO_RELAY_PASSWORD": "s3cret-relay-password",
        ])
        #expect(right.waitForLine(containing: "relay connected", timeout: 30), "\(right.output)")
        try waitUntil("the push stored", timeout: 60) { try setup.fixture.message(id: push.messageId) != nil }
        #expect(!right.output.contains { $0.contains("s3cret") })
    }
}
