import Foundation
import SottoCrypto
import SottoWire

/// docs/protocol/vectors/receipt-v1.json (made by make_receipt_vectors.py, a second
/// implementation of docs/protocol/receipts.md), typed. The recipient is the device that
/// sent the messages in `sent` to member Alice; each case is a receipt push to it.
///
/// ```swift
/// let file = try ReceiptVectors.load()
/// for vector in file.cases { … vector.payload … vector.expect … }
/// ```
public enum ReceiptVectors {
    public enum Expect: Sendable, Equatable {
        case ok(delivered: [String], failed: [Receipt.Failure])
        case error(String)
    }

    public struct Case: Sendable {
        public let name: String
        public let payload: [UInt8]
        /// The receipt's content bytes (what the signed message carries).
        public let content: [UInt8]
        public let expect: Expect
    }

    public struct File: Sendable {
        public let recipient: Vectors.Recipient
        public let members: [Vectors.Member]
        /// Message ids the recipient sent, each with a push to Alice.
        public let sent: [String]
        public let cases: [Case]
    }

    public static func path() -> String {
        PackagePaths.root.appendingPathComponent("docs/protocol/vectors/receipt-v1.json").path
    }

    public static var caseNames: [String] { (try? load())?.cases.map(\.name) ?? [] }

    public static func load() throws -> File {
        guard let data = FileManager.default.contents(atPath: path()) else {
            throw Vectors.FormatError(description: "no \(path())")
        }
        let root = try JSONParser.parse(Array(data), limits: .init(maxBytes: 4 << 20, maxDepth: 16))
        func string(_ value: JSONValue?, _ what: String) throws -> String {
            guard let text = value?.string else { throw Vectors.FormatError(description: "receipt vectors: \(what)") }
            return text
        }
        let (recipient, members) = try Vectors.head(root)

        let sent = try (root["sent"]?.array ?? []).map { try string($0, "sent") }
        let cases = try (root["cases"]?.array ?? []).map { c -> Case in
            let name = try string(c["name"], "case.name")
            guard let expect = c["expect"], let ok = expect["ok"]?.bool,
                  let content = Base64URL.decode(try string(c["content"], "\(name).content")) else {
                throw Vectors.FormatError(description: "receipt vectors: \(name)")
            }
            let expected: Expect
            if ok {
                let delivered = try (expect["delivered"]?.array ?? []).map { try string($0, "\(name).delivered") }
                let failed = try (expect["failed"]?.array ?? []).map {
                    Receipt.Failure(messageId: try string($0["id"], "\(name).failed.id"), error: try string($0["error"], "\(name).failed.error"))
                }
                expected = .ok(delivered: delivered, failed: failed)
            } else {
                expected = .error(try string(expect["error"], "\(name).error"))
            }
            return Case(name: name, payload: Array(try string(c["payload"], "\(name).payload").utf8), content: content, expect: expected)
        }
        return File(recipient: recipient, members: members, sent: sent, cases: cases)
    }
}
