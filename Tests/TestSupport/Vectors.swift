import Foundation
import SottoCrypto
import SottoWire

/// The independent test vectors of `shared/vectors/envelope-v1.json` (PROTOCOL §7), typed.
///
/// ```swift
/// guard let file = try Vectors.load() else { return }   // nil when the file is absent
/// for vector in file.cases { … vector.payload … vector.expect … }
/// ```
public enum Vectors {
    public struct Recipient: Sendable {
        public let privateKey: [UInt8]
        public let publicKey: String
        public let inboxId: String
        public let clientId: String
        public let conversationId: String
        public let topic: String

        /// The recipient as a keystore identity (fresh database key, createdAt 0).
        public func identity() throws -> Identity {
            Identity(clientId: clientId, privateKey: try PrivateKey(bytes: privateKey),
                     databaseKey: SecretBytes(SecureRandom.bytes(32)), createdAtMs: 0)
        }
    }

    public struct Member: Sendable {
        public let inboxId: String
        public let publicKey: String
        public let profileName: String
    }

    public enum Expect: Sendable {
        /// Every field of the expected message, as JSON.
        case ok(message: JSONObject)
        /// A PROTOCOL §2 error code.
        case error(String)
    }

    public struct Case: Sendable {
        public let name: String
        public let note: String
        /// The push payload bytes exactly as sent.
        public let payload: [UInt8]
        /// The bytes that follow the payload's LF (docs/protocol/bodies.md); nil: none.
        public let body: [UInt8]?
        public let expect: Expect
    }

    /// One sealed body with all it was made from (docs/protocol/bodies.md §3).
    public struct SealedBodyCase: Sendable {
        public let id: [UInt8]
        public let key: [UInt8]
        public let content: [UInt8]
        public let sealed: [UInt8]
        public let sha256: String
    }

    public struct File: Sendable {
        public let recipient: Recipient
        public let members: [Member]
        public let cases: [Case]
        public let sealedBody: SealedBodyCase?
    }

    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
    }

    /// `$SOTTO_VECTORS`, else `<package root>/../shared/vectors/envelope-v1.json`.
    public static func path() -> String {
        if let override = ProcessInfo.processInfo.environment["SOTTO_VECTORS"], !override.isEmpty { return override }
        return PackagePaths.shared.appendingPathComponent("vectors/envelope-v1.json").path
    }

    public static var isAvailable: Bool { FileManager.default.fileExists(atPath: path()) }

    /// The project's own vectors for bodies by reference, made by a second implementation
    /// (docs/protocol/vectors/make_body_vectors.py).
    public static func bodyPath() -> String {
        PackagePaths.root.appendingPathComponent("docs/protocol/vectors/body-v1.json").path
    }

    public static func loadBodies() throws -> File {
        guard let file = try load(path: bodyPath()) else { throw FormatError(description: "no \(bodyPath())") }
        return file
    }

    public static var bodyCaseNames: [String] { (try? loadBodies())?.cases.map(\.name) ?? [] }

    /// Nil when the file is absent; throws when it exists but is not a vectors file.
    public static func load(path: String = Vectors.path()) throws -> File? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let root = try JSONParser.parse(Array(data), limits: .init(maxBytes: 16 << 20, maxDepth: 16))
        func string(_ value: JSONValue?, _ what: String) throws -> String {
            guard let text = value?.string else { throw FormatError(description: "vectors: \(what) is not a string") }
            return text
        }
        let (recipient, members) = try head(root)
        let cases = try (root["cases"]?.array ?? []).map { c -> Case in
            let name = try string(c["name"], "case.name")
            guard let expect = c["expect"], let ok = expect["ok"]?.bool else {
                throw FormatError(description: "vectors: \(name).expect")
            }
            let expected: Expect
            if ok {
                guard let message = expect["message"]?.object else { throw FormatError(description: "vectors: \(name).message") }
                expected = .ok(message: message)
            } else {
                expected = .error(try string(expect["error"], "\(name).error"))
            }
            var body: [UInt8]?
            if let text = c["body"]?.string {
                guard let bytes = Base64URL.decode(text) else { throw FormatError(description: "vectors: \(name).body") }
                body = bytes
            }
            return Case(name: name, note: c["note"]?.string ?? "", payload: Array(try string(c["payload"], "payload").utf8),
                        body: body, expect: expected)
        }
        var sealedBody: SealedBodyCase?
        if let b = root["sealedBody"] {
            func bytes(_ key: String, hex: Bool = false) throws -> [UInt8] {
                let text = try string(b[key], "sealedBody.\(key)")
                guard let value = hex ? Hex.decode(text) : Base64URL.decode(text) else {
                    throw FormatError(description: "vectors: sealedBody.\(key)")
                }
                return value
            }
            sealedBody = SealedBodyCase(id: try bytes("id", hex: true), key: try bytes("key", hex: true), content: try bytes("content"),
                                        sealed: try bytes("sealed"), sha256: try string(b["sha256"], "sealedBody.sha256"))
        }
        return File(recipient: recipient, members: members, cases: cases, sealedBody: sealedBody)
    }

    /// A vectors file's `recipient` and `members` (every project vectors file has them).
    public static func head(_ root: JSONValue) throws -> (Recipient, [Member]) {
        func string(_ value: JSONValue?, _ what: String) throws -> String {
            guard let text = value?.string else { throw FormatError(description: "vectors: \(what) is not a string") }
            return text
        }
        guard let r = root["recipient"] else { throw FormatError(description: "vectors: no recipient") }
        guard let key = Hex.decode(try string(r["privateKey"], "recipient.privateKey"), count: 32) else {
            throw FormatError(description: "vectors: recipient.privateKey")
        }
        let recipient = Recipient(
            privateKey: key, publicKey: try string(r["publicKey"], "publicKey"), inboxId: try string(r["inboxId"], "inboxId"),
            clientId: try string(r["clientId"], "clientId"), conversationId: try string(r["conversationId"], "conversationId"),
            topic: try string(r["topic"], "topic"))
        let members = try (root["members"]?.array ?? []).map { m in
            Member(inboxId: try string(m["inboxId"], "member.inboxId"), publicKey: try string(m["publicKey"], "member.publicKey"),
                   profileName: m["profileName"]?.string ?? "")
        }
        return (recipient, members)
    }

    /// Case names, for parameterized tests (empty when the file is absent or unreadable).
    public static var caseNames: [String] { ((try? load()) ?? nil)?.cases.map(\.name) ?? [] }
}
