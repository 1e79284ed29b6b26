import Foundation

/// docs/protocol/vectors/attachment-direct-v1.json, made by an independent script from
/// docs/protocol/attachment-direct.md: request lines and what an endpoint makes of them,
/// answer lines and what a fetcher makes of them, and the exact answers for stored files of
/// attachment-v1.json.
///
/// ```swift
/// for request in try AttachmentDirectVectors.load().requests { … request.line, request.refusal … }
/// ```
public struct AttachmentDirectVectors: Sendable {
    public struct Request: Sendable {
        public let name: String
        public let line: [UInt8]
        /// The request it makes, or nil when an endpoint refuses it (`bad_request`).
        public let parsed: (messageId: String, attachmentId: String, firstPiece: Int)?
    }

    public struct Answer: Sendable {
        public let name: String
        public let line: [UInt8]
        /// `ok`, a refusal code, or `not_spoken`.
        public let expect: String
    }

    public struct Response: Sendable {
        public let file: String
        public let storedLength: Int
        public let firstPiece: Int
        public let offset: Int
        public let answerLength: Int
        public let answerSha256: String
    }

    public let requests: [Request]
    public let answers: [Answer]
    public let responses: [Response]

    public static func load() throws -> AttachmentDirectVectors {
        let url = PackagePaths.root.appendingPathComponent("docs/protocol/vectors/attachment-direct-v1.json")
        let root = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any] ?? [:]
        func bytes(_ value: Any?) -> [UInt8] {
            var text = (value as? String ?? "").replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            text += String(repeating: "=", count: (4 - text.count % 4) % 4)
            return Data(base64Encoded: text).map { [UInt8]($0) } ?? []
        }
        let requests = (root["requests"] as? [[String: Any]] ?? []).map { row -> Request in
            let expect = row["expect"] as? [String: Any] ?? [:]
            let request = expect["request"] as? [String: Any]
            return Request(name: row["name"] as? String ?? "", line: bytes(row["line"]),
                           parsed: request.map { ($0["messageId"] as? String ?? "", $0["attachmentId"] as? String ?? "",
                                                  $0["firstPiece"] as? Int ?? -1) })
        }
        let answers = (root["answers"] as? [[String: Any]] ?? []).map {
            Answer(name: $0["name"] as? String ?? "", line: bytes($0["line"]), expect: $0["expect"] as? String ?? "")
        }
        let responses = (root["responses"] as? [[String: Any]] ?? []).map {
            Response(file: $0["file"] as? String ?? "", storedLength: $0["storedLength"] as? Int ?? 0,
                     firstPiece: $0["firstPiece"] as? Int ?? 0, offset: $0["offset"] as? Int ?? 0,
                     answerLength: $0["answerLength"] as? Int ?? 0, answerSha256: $0["answerSha256"] as? String ?? "")
        }
        return AttachmentDirectVectors(requests: requests, answers: answers, responses: responses)
    }
}
