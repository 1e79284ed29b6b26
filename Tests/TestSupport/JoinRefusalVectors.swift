import Foundation
import SottoCrypto
import SottoWire

/// docs/protocol/vectors/join-refusal-v1.json (made by make_join_refusal_vectors.py, a second
/// implementation of docs/protocol/join-refusal.md), typed. The recipient is a device whose
/// join is pending (the request `joinRequestId`); each case is a refusal push to it.
///
/// ```swift
/// let file = try JoinRefusalVectors.load()
/// for vector in file.cases { … vector.payload … vector.expect … }
/// ```
public enum JoinRefusalVectors {
    public enum Expect: Sendable, Equatable {
        /// Recorded; the reason the device shows (a raw value of `JoinRefusal.Reason`).
        case ok(reason: String)
        case error(String)
    }

    public struct Case: Sendable {
        public let name: String
        public let payload: [UInt8]
        /// The refusal's content bytes (what the signed message carries).
        public let content: [UInt8]
        public let expect: Expect
    }

    public struct File: Sendable {
        public let recipient: Vectors.Recipient
        public let members: [Vectors.Member]
        public let creatorInboxId: String
        /// The join request the recipient sent and waits on.
        public let joinRequestId: String
        public let cases: [Case]
    }

    public static func path() -> String {
        PackagePaths.root.appendingPathComponent("docs/protocol/vectors/join-refusal-v1.json").path
    }

    public static var caseNames: [String] { (try? load())?.cases.map(\.name) ?? [] }

    public static func load() throws -> File {
        guard let data = FileManager.default.contents(atPath: path()) else {
            throw Vectors.FormatError(description: "no \(path())")
        }
        let root = try JSONParser.parse(Array(data), limits: .init(maxBytes: 4 << 20, maxDepth: 16))
        func string(_ value: JSONValue?, _ what: String) throws -> String {
            guard let text = value?.string else { throw Vectors.FormatError(description: "join refusal vectors: \(what)") }
            return text
        }
        let (recipient, members) = try Vectors.head(root)
        let cases = try (root["cases"]?.array ?? []).map { c -> Case in
            let name = try string(c["name"], "case.name")
            guard let expect = c["expect"], let ok = expect["ok"]?.bool,
                  let content = Base64URL.decode(try string(c["content"], "\(name).content")) else {
                throw Vectors.FormatError(description: "join refusal vectors: \(name)")
            }
            let expected: Expect = ok ? .ok(reason: try string(expect["reason"], "\(name).reason"))
                                      : .error(try string(expect["error"], "\(name).error"))
            return Case(name: name, payload: Array(try string(c["payload"], "\(name).payload").utf8), content: content,
                        expect: expected)
        }
        return File(recipient: recipient, members: members, creatorInboxId: try string(root["creatorInboxId"], "creatorInboxId"),
                    joinRequestId: try string(root["joinRequestId"], "joinRequestId"), cases: cases)
    }
}
