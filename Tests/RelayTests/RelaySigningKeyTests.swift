import Foundation
@testable import RelayTransport
import TestSupport
import Testing

/// The relay's signing key file (`SOTTO_RELAY_SIGNING_KEY`, docs/adr/0051) is untrusted text
/// holding a secret: every malformed form is refused with a clear configuration error (exit
/// 78 from sotto-relayd) that never quotes it; nkeys and minted user JWTs match what
/// nats-server and `scripts/relay-operator.py` expect.
@Suite("Relay signing key")
struct RelaySigningKeyTests {
    static let account = Nkey.generate(.account)
    static let signing = Nkey.generate(.account)
    static var valid: String { "\(account.publicKey)\n\(signing.seedText)\n" }

    @Test("nkeys: a seed round-trips to the same public key; a changed character, a wrong kind or a wrong length is refused")
    func nkeys() throws {
        let user = Nkey.generate(.user)
        #expect(user.publicKey.hasPrefix("U") && user.publicKey.count == 56)
        #expect(user.seedText.hasPrefix("SU") && user.seedText.count == 58)
        #expect(try Nkey(seed: user.seedText, kind: .user).publicKey == user.publicKey)
        #expect(Nkey.isPublicKey(user.publicKey, kind: .user) && !Nkey.isPublicKey(user.publicKey, kind: .account))
        var flipped = Array(user.seedText)
        flipped[20] = flipped[20] == "A" ? "B" : "A"
        for bad in [String(flipped), String(user.seedText.dropLast()), user.seedText + "A", Self.signing.seedText, "", "SU" + String(repeating: "1", count: 56)] {
            #expect(throws: RelayError.self, "\(bad.prefix(4))") { _ = try Nkey(seed: bad, kind: .user) }
        }
        // The operator's script (Python's own base32 and ed25519) derives the same public key.
        let script = PackagePaths.root.appendingPathComponent("scripts/relay-operator.py").path
        let derived = try ChildProcess.run("/usr/bin/python3", ["-c", """
            import importlib.util, sys
            spec = importlib.util.spec_from_file_location("op", sys.argv[1]); op = importlib.util.module_from_spec(spec)
            spec.loader.exec_module(op); print(op.Key.from_seed(sys.argv[2]).public)
            """, script, user.seedText], environment: ["PATH": "/usr/bin:/bin"])
        #expect(derived.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == user.publicKey, "\(derived.stderr)")
    }

    @Test("a user JWT has the scoped shape: issued by the signing key for the account, no permissions of its own, signed")
    func userJWT() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-signing")
        defer { dir.remove() }
        let path = dir.path + "/device-signing.key"
        FileManager.default.createFile(atPath: path, contents: Data(Self.valid.utf8), attributes: [.posixPermissions: 0o600])
        let key = try RelaySigningKey.load(path: path)
        let user = Nkey.generate(.user)
        let parts = key.userJWT(for: user).split(separator: ".").map(String.init)
        #expect(parts.count == 3)
        let claims = try #require(Data(base64Encoded: Self.padded(parts[1]))
            .flatMap { try JSONSerialization.jsonObject(with: $0) as? [String: Any] })
        #expect(claims["iss"] as? String == Self.signing.publicKey)
        #expect(claims["sub"] as? String == user.publicKey)
        let nats = try #require(claims["nats"] as? [String: Any])
        #expect(nats["issuer_account"] as? String == Self.account.publicKey)
        #expect(Set(nats.keys) == ["issuer_account", "type", "version"], "a scoped user must carry no permissions")
    }

    @Test("a nonce whose signature starts with a zero byte is refused before nats.c could send the login without it; any other is signed, and each refusal is taken once")
    func zeroLeadingSignatureIsRefused() throws {
        let login = UserLogin(user: Nkey.generate(.user), jwt: "a.b.c")
        // Ed25519 is deterministic: search the nonce (as nats-server makes them) whose signature starts with 0.
        var zeroNonce: String?, otherNonce: String?
        for index in 0..<100_000 where zeroNonce == nil || otherNonce == nil {
            let nonce = "nonce-\(index)"
            if login.user.sign(Array(nonce.utf8)).first == 0 { zeroNonce = zeroNonce ?? nonce } else { otherNonce = otherNonce ?? nonce }
        }
        let zero = try #require(zeroNonce), other = try #require(otherNonce)
        #expect(!login.takeUnsentSignature())
        #expect(zero.withCString { login.signature(of: $0) } == nil)
        #expect(login.takeUnsentSignature())
        #expect(!login.takeUnsentSignature(), "taken once")
        #expect(other.withCString { login.signature(of: $0) } == login.user.sign(Array(other.utf8)))
        #expect(!login.takeUnsentSignature())
    }

    @Test("garbage, wrong sizes, wrong prefixes, a bad checksum and loose permissions are refused; no error quotes the seed")
    func garbageFiles() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-signing")
        defer { dir.remove() }
        func check(_ text: String, mode: Int = 0o600) -> RelayError? {
            let path = dir.path + "/\(UUID().uuidString).key"
            FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
            do throws(RelayError) { _ = try RelaySigningKey.load(path: path); return nil } catch { return error }
        }
        let seed = Self.signing.seedText
        let user = Nkey.generate(.user)
        #expect(check(Self.valid) == nil)
        #expect(check(Self.valid.replacingOccurrences(of: "\n", with: "\r\n")) == nil)
        #expect(check(Self.valid, mode: 0o644)?.description.contains("readable by others") == true)
        var flipped = Array(seed)
        flipped[30] = flipped[30] == "A" ? "B" : "A"
        let bad = [
            "", "garbage", seed, Self.account.publicKey,                                  // one line only
            "\(Self.account.publicKey)\n\(String(seed.dropLast()))\n",                    // seed too short
            "\(Self.account.publicKey)\n\(seed)A\n",                                      // too long
            "\(Self.account.publicKey)\n\(user.seedText)\n",                              // a user seed, not an account's
            "\(user.publicKey)\n\(seed)\n",                                               // a user key, not an account
            "\(Self.account.publicKey)\n\(String(flipped))\n",                            // bad checksum
            "\(seed)\n\(Self.account.publicKey)\n",                                       // swapped
            Self.valid + Self.valid,                                                      // four lines
            String(repeating: "A", count: 2_000),                                         // over 1 KiB
            "\u{0}\u{1}" + Self.valid,
        ]
        for text in bad {
            let error = check(text)
            #expect(error != nil, "accepted: \(text.prefix(8))")
            #expect(error?.isConfiguration == true)
            #expect(error.map { !$0.description.contains(seed.prefix(20)) && !$0.description.contains(user.seedText.prefix(20)) } ?? true,
                    "an error quoted a seed")
        }
        var random = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let bytes = (0..<Int.random(in: 0...300, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
            #expect(check(String(decoding: bytes, as: UTF8.self)) != nil)
        }
        // Not with other credentials, and only as an absolute path.
        let path = dir.path + "/ok.key"
        FileManager.default.createFile(atPath: path, contents: Data(Self.valid.utf8), attributes: [.posixPermissions: 0o600])
        #expect(throws: RelayError.self) {
            try RelayCredentials.from(environment: [RelaySigningKey.variable: path, RelayCredentials.userVariable: "a",
                                                    RelayCredentials.passwordVariable: "b"])
        }
        #expect(throws: RelayError.self) { try RelayCredentials.from(environment: [RelaySigningKey.variable: "relative.key"]) }
        #expect(try RelayCredentials.from(environment: [RelaySigningKey.variable: path]).isPerIdentity)
    }

    @Test("sotto-relayd with a garbage signing key file: exit 78, the problem named, no secret printed")
    func relaydRefusesGarbage() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-relayd-signing")
        defer { dir.remove() }
        let seed = Self.signing.seedText
        let files: [(String, String, Int)] = [
            ("loose.key", Self.valid, 0o644),
            ("garbage.key", "\(Self.account.publicKey)\n\(seed.prefix(40))garbage\n", 0o600),
            ("user.key", "\(Self.account.publicKey)\n\(Nkey.generate(.user).seedText)\n", 0o600),
        ]
        for (name, text, mode) in files {
            let path = dir.path + "/" + name
            FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: mode])
            let result = try ChildProcess.run(try builtExecutable("sotto-relayd"), [], environment: [
                "SOTTO_GROUP_DIR": dir.path + "/group", "SOTTO_RUNTIME_DIR": dir.path + "/run",
                "SOTTO_RELAY": "nats://127.0.0.1:1", RelaySigningKey.variable: path,
            ])
            #expect(result.status == 78, "\(name): \(result.stderr)")
            #expect(result.stderr.contains("malformed relay credentials") && result.stderr.contains(path), "\(result.stderr)")
            #expect(!result.stderr.contains(seed.prefix(20)) && !result.stdout.contains(seed.prefix(20)), "a seed was printed")
        }
    }

    static func padded(_ base64URL: String) -> String {
        let plain = base64URL.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        return plain + String(repeating: "=", count: (4 - plain.count % 4) % 4)
    }
}
