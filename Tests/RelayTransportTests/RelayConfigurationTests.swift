import Foundation
import RelayTransport
import SottoWire
import TestSupport
import Testing

/// Relay URLs and credentials are untrusted text (environment, config files, invites): every
/// malformed form is refused with a clear error before any connection is made.
@Suite("Relay configuration")
struct RelayConfigurationTests {
    @Test("nats:// and tls:// URLs parse; anything else is refused", arguments: [
        ("nats://127.0.0.1:4222", true), ("tls://relay.example.org:443", true), ("nats://[::1]:4222", true),
        ("nats://relay-1.example:65535", true),
        ("", false), ("nats://", false), ("nats://host", false), ("nats://host:", false), ("nats://host:0", false),
        ("nats://host:65536", false), ("nats://host:42x2", false), ("nats://user:pw@host:4222", false),
        ("nats://host:4222/path", false), ("nats://host:4222?x=1", false), ("http://host:4222", false),
        ("NATS://host:4222", false), ("nats://ho st:4222", false), ("nats://-host:4222", false),
        ("nats://host..x:4222", false), ("nats://host:4222\n", false), ("nats://*:4222", false),
        ("nats://>:4222", false), ("tcp:host:4222", false), ("nats://[::1:4222", false),
        ("nats://" + String(repeating: "a", count: 600) + ":1", false),
    ])
    func url(text: String, valid: Bool) {
        let parsed = Result { () throws(RelayError) in try RelayURL.parse(text) }
        switch parsed {
        case .success(let url):
            #expect(valid, "accepted \(text)")
            #expect(url.endpoint == text)
            #expect(ProtocolIds.isEndpoint(text))
        case .failure(let error):
            #expect(!valid, "refused \(text): \(error)")
            #expect(error.isConfiguration)
            #expect(error.description.hasPrefix("malformed relay URL"))
        }
    }

    @Test("the relay endpoint forms are endpoints beside unix: and tcp:")
    func endpointForms() {
        #expect(ProtocolIds.isEndpoint("nats://127.0.0.1:4222"))
        #expect(ProtocolIds.isEndpoint("tls://relay.example:4222"))
        #expect(ProtocolIds.isEndpoint("unix:/run/user/1000/sotto/push.sock"))
        #expect(ProtocolIds.isEndpoint("tcp:example.org:7000"))
        #expect(!ProtocolIds.isEndpoint("nats://relay.example"))
        #expect(!ProtocolIds.isEndpoint("nats://a@relay.example:4222"))
        #expect(!ProtocolIds.isEndpoint("tls://relay.example:4222/x"))
    }

    @Test("no SOTTO_RELAY: no relay; user without password and both kinds of credentials are refused")
    func environment() throws {
        #expect(try RelayConfiguration.from(environment: [:]) == nil)
        let plain = try #require(try RelayConfiguration.from(environment: ["SOTTO_RELAY": "nats://127.0.0.1:4222"]))
        #expect(plain.credentials == .none)
        let user = try RelayConfiguration.from(environment: ["SOTTO_RELAY": "nats://h:1", "SOTTO_RELAY_USER": "u",
                                                             "SOTTO_RELAY_PASSWORD": "p"])
        #expect(user?.credentials == .userPassword(user: "u", password: "p"))
        for env in [["SOTTO_RELAY_USER": "u"], ["SOTTO_RELAY_PASSWORD": "p"],
                    ["SOTTO_RELAY_USER": "u\n", "SOTTO_RELAY_PASSWORD": "p"],
                    ["SOTTO_RELAY_CREDS": "/x.creds", "SOTTO_RELAY_USER": "u", "SOTTO_RELAY_PASSWORD": "p"],
                    ["SOTTO_RELAY_CREDS": "relative.creds"], ["SOTTO_RELAY_CREDS": "/nonexistent/x.creds"]] {
            var full = env
            full["SOTTO_RELAY"] = "nats://127.0.0.1:4222"
            #expect(throws: RelayError.self, "\(env)") { try RelayConfiguration.from(environment: full) }
        }
    }

    @Test("a well-formed .creds file is accepted; garbage, truncation and loose permissions are not")
    func credsFiles() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-creds")
        defer { dir.remove() }
        let good = CredsText.valid
        func check(_ text: String, mode: Int = 0o600) -> RelayError? {
            let path = dir.path + "/\(UUID().uuidString).creds"
            FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
            do throws(RelayError) { try CredsFile.check(path: path); return nil } catch { return error }
        }
        #expect(check(good) == nil)
        #expect(check(good.replacingOccurrences(of: "\n", with: "\r\n")) == nil)
        #expect(check(good, mode: 0o644)?.description.contains("readable by others") == true)
        let bad = [
            "", "garbage", String(good.prefix(good.count / 2)),
            good.replacingOccurrences(of: "SUAM", with: "SAAM"),                // an account seed, not a user's
            good.replacingOccurrences(of: "eyJ0eXAiOiJKV1QiLCJhbGciOiJlZDI1NTE5LW5rZXkifQ.", with: ""),  // two parts
            good + good,                                                        // two blocks of each
            good.replacingOccurrences(of: "------END USER NKEY SEED------", with: ""),
            String(repeating: "A", count: 70_000),
            "\u{0}\u{1}\u{2}" + good,
        ]
        for text in bad {
            let error = check(text)
            #expect(error != nil, "accepted: \(text.prefix(40))")
            #expect(error?.isConfiguration == true)
            #expect(error.map { !$0.description.contains("SUAM") } ?? true, "an error quoted the seed")
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...600, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(check(String(decoding: bytes, as: UTF8.self)) != nil)
        }
    }
}
