import Foundation
import SharedStore

/// docs/protocol/vectors/roster-v1.json (made by make_roster_vectors.py, a second
/// implementation of docs/protocol/roster.md), typed.
///
/// ```swift
/// let file = try RosterVectors.load()
/// for c in file.parse { … try MessageContent.decode(contentType: c.contentType, content: c.content, fallback: nil) … }
/// ```
public enum RosterVectors {
    public struct ParseCase: Sendable {
        public let name: String
        public let contentType: String
        public let content: [UInt8]
        /// "ok" or a PROTOCOL §2 error code.
        public let expect: String
    }

    public struct Arrival: Sendable {
        public let id: String
        /// A member label ("C" is the creator).
        public let from: String
        public let contentType: String
        public let content: [UInt8]
        /// "written", "duplicate", or a PROTOCOL §2 error code.
        public let expect: String

        public init(id: String, from: String, contentType: String, content: [UInt8], expect: String) {
            (self.id, self.from, self.contentType, self.content, self.expect) = (id, from, contentType, content, expect)
        }
    }

    public struct Roster: Sendable, Equatable {
        public let version: Int64
        /// Member labels, sorted.
        public let members: [String]
        public let pending: [Int64]

        public init(version: Int64, members: [String], pending: [Int64]) {
            (self.version, self.members, self.pending) = (version, members, pending)
        }
    }

    public struct Sequence: Sendable {
        public let name: String
        public let start: Roster
        public let arrive: [Arrival]
        public let end: Roster
    }

    public struct File: Sendable {
        /// By label: C (creator), R (the receiving device), A, B, D, E.
        public let members: [String: MemberEntry]
        public let parse: [ParseCase]
        public let sequences: [Sequence]

        public func label(of inboxId: String) -> String? { members.first { $0.value.inboxId == inboxId }?.key }
    }

    public struct FormatError: Error, CustomStringConvertible {
        public let description: String
    }

    public static var path: String {
        PackagePaths.root.appendingPathComponent("docs/protocol/vectors/roster-v1.json").path
    }

    public static func load() throws -> File {
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        guard let root = try JSONSerialization.jsonObject(with: data) as? [String: Any],
              let members = root["members"] as? [String: [String: String]],
              let parse = root["parse"] as? [[String: Any]], let sequences = root["sequences"] as? [[String: Any]]
        else { throw FormatError(description: "\(path) is not a roster vectors file") }
        func text(_ object: [String: Any], _ key: String) throws -> String {
            guard let value = object[key] as? String else { throw FormatError(description: "no \(key) in \(object)") }
            return value
        }
        func roster(_ object: Any?) throws -> Roster {
            guard let object = object as? [String: Any], let version = object["version"] as? Int,
                  let labels = object["members"] as? [String] else { throw FormatError(description: "bad roster") }
            return Roster(version: Int64(version), members: labels.sorted(),
                          pending: ((object["pending"] as? [Int]) ?? []).map(Int64.init))
        }
        return File(
            members: try members.mapValues { m in
                guard let inboxId = m["inboxId"], let publicKey = m["publicKey"], let endpoint = m["endpoint"],
                      let clientId = m["clientId"] else { throw FormatError(description: "bad member") }
                return MemberEntry(inboxId: inboxId, publicKey: publicKey, endpoint: endpoint, clientId: clientId,
                                   profileName: m["profileName"])
            },
            parse: try parse.map { c in
                ParseCase(name: try text(c, "name"), contentType: try text(c, "contentType"),
                          content: Array(try text(c, "content").utf8), expect: try text(c, "expect"))
            },
            sequences: try sequences.map { s in
                Sequence(name: try text(s, "name"), start: try roster(s["start"]),
                         arrive: try ((s["arrive"] as? [[String: Any]]) ?? []).map { a in
                             Arrival(id: try text(a, "id"), from: try text(a, "from"), contentType: try text(a, "contentType"),
                                     content: Array(try text(a, "content").utf8), expect: try text(a, "expect"))
                         },
                         end: try roster(s["end"]))
            })
    }
}
