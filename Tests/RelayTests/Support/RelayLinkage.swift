import Foundation
import TestSupport

/// What a relay operator sees of each client connection, from the relay's own records: the
/// subjects each connection subscribed to or published on (nats-server's protocol trace,
/// `-V`, which keeps every connection's whole history, short-lived ones too), its client
/// name and subscriptions (`/connz?state=all&subs=1`), and the consumers (`/jsz`). Used to
/// check that nothing the relay sees ties two identities of one device together (issue #19,
/// docs/adr/0044).
///
/// ```swift
/// let seen = try RelayLinkage.observe(server: peers.server)
/// seen.identities(of: cid, groups: groups)   // the conversations a connection touched
/// ```
struct RelayLinkage {
    struct Connection {
        let cid: Int
        var name = ""
        /// Every subject the client sent a SUB, PUB or HPUB for, and the reply subjects of its publishes.
        var subjects: Set<String> = []
        /// The clientIds in what it published (a purge names its mailbox only there).
        var payloadIds: Set<String> = []
        /// The relay users' public keys in what it published (a consumer named by its owner's key).
        var payloadKeys: Set<String> = []
        /// Its `_INBOX.…` subscriptions and reply subjects.
        var inboxes: Set<String> = []
    }

    var connections: [Int: Connection] = [:]
    /// Consumer names (`mb-<clientId>`) and their filter subjects, from `/jsz`.
    var consumers: [(name: String, filter: String)] = []

    static func observe(server: NatsServer) throws -> RelayLinkage {
        var seen = RelayLinkage()
        seen.read(trace: server.log)
        guard let port = server.monitorPort else { throw RelayRigFailure("the server has no monitoring port") }
        let monitor = NatsMonitor(port: port)
        let connz = try monitor.json("/connz?state=all&subs=1&limit=100000")
        for entry in connz["connections"] as? [[String: Any]] ?? [] {
            guard let cid = entry["cid"] as? Int else { continue }
            var connection = seen.connections[cid] ?? Connection(cid: cid)
            connection.name = entry["name"] as? String ?? ""
            for subject in entry["subscriptions_list"] as? [String] ?? [] {
                connection.subjects.insert(subject)
                if subject.hasPrefix("_INBOX.") { connection.inboxes.insert(subject) }
            }
            seen.connections[cid] = connection
        }
        let jsz = try monitor.json("/jsz?accounts=true&streams=true&consumers=true&config=true")
        for account in jsz["account_details"] as? [[String: Any]] ?? [] {
            for stream in account["stream_detail"] as? [[String: Any]] ?? [] {
                for consumer in stream["consumer_detail"] as? [[String: Any]] ?? [] {
                    let config = consumer["config"] as? [String: Any] ?? [:]
                    seen.consumers.append((consumer["name"] as? String ?? "", config["filter_subject"] as? String ?? ""))
                }
            }
        }
        return seen
    }

    /// The connections open now, as `/connz` lists them: (client name, subscriptions).
    static func openConnections(server: NatsServer) throws -> [(name: String, subscriptions: [String])] {
        guard let port = server.monitorPort else { throw RelayRigFailure("the server has no monitoring port") }
        let connz = try NatsMonitor(port: port).json("/connz?subs=1&limit=100000")
        return (connz["connections"] as? [[String: Any]] ?? []).map {
            ($0["name"] as? String ?? "", $0["subscriptions_list"] as? [String] ?? [])
        }
    }

    /// The connections open now with the user each logged in as (`/connz?auth=1`): (client name,
    /// user, the key that issued the user's JWT, subscriptions).
    static func openUsers(server: NatsServer) throws -> [(name: String, user: String, issuer: String, subscriptions: [String])] {
        guard let port = server.monitorPort else { throw RelayRigFailure("the server has no monitoring port") }
        let connz = try NatsMonitor(port: port).json("/connz?subs=1&auth=1&limit=100000")
        return (connz["connections"] as? [[String: Any]] ?? []).map {
            ($0["name"] as? String ?? "", $0["authorized_user"] as? String ?? "", $0["issuer_key"] as? String ?? "",
             $0["subscriptions_list"] as? [String] ?? [])
        }
    }

    /// `[TRC] 127.0.0.1:PORT - cid:N - "name" - <<- [SUB subject sid]` and `[PUB|HPUB subject reply? …]`.
    private mutating func read(trace lines: [String]) {
        for line in lines where line.contains("[TRC]") && (line.contains("<<- [") || line.contains("<<- MSG_PAYLOAD: [")) {
            guard let cidRange = line.range(of: "cid:"),
                  let cid = Int(line[cidRange.upperBound...].prefix { $0.isNumber }),
                  let open = line.range(of: "<<- [") ?? line.range(of: "<<- MSG_PAYLOAD: [") else { continue }
            let words = line[open.upperBound...].dropLast().split(separator: " ").map(String.init)
            if line.contains("<<- MSG_PAYLOAD: [") {
                // A purge's filter and other API requests name their mailbox in the payload.
                connections[cid, default: Connection(cid: cid)].payloadIds.formUnion(Self.clientIds(in: line))
                connections[cid, default: Connection(cid: cid)].payloadKeys.formUnion(Self.userKeys(in: line))
                continue
            }
            guard let verb = words.first, ["SUB", "PUB", "HPUB"].contains(verb), words.count >= 2 else { continue }
            var connection = connections[cid] ?? Connection(cid: cid)
            connection.subjects.insert(words[1])
            let inboxes = words.dropFirst().filter { $0.hasPrefix("_INBOX.") }
            connection.inboxes.formUnion(inboxes)
            connections[cid] = connection
        }
    }

    /// The canonical clientIds (mailbox and consumer names) in a subject.
    static func clientIds(in subject: String) -> [String] {
        let pattern = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/
        return subject.matches(of: pattern).map { String($0.output) }
    }

    /// The relay users' public nkeys in a subject or payload ("U" and 55 base32 characters):
    /// in operator mode a consumer is named by its owner's key (docs/adr/0051).
    static func userKeys(in text: String) -> [String] {
        text.matches(of: /U[A-Z2-7]{55}/).map { String($0.output) }
    }

    /// Problems with the connections' inbox names: an inbox prefix, or the first 12
    /// characters of a NUID (nats.c shares them across one process's connections), seen on
    /// two connections. Also how many inboxes were looked at.
    static func sharedInboxNames(_ connections: [Connection]) -> (inboxes: Int, problems: [String]) {
        var problems: [String] = []
        var inboxes = 0
        var prefixOwner: [String: Int] = [:]
        var nuidOwner: [String: Int] = [:]
        for connection in connections {
            for inbox in connection.inboxes {
                inboxes += 1
                let prefix = inboxPrefix(inbox)
                if let owner = prefixOwner[prefix], owner != connection.cid {
                    problems.append("inbox prefix \(prefix) on connections \(owner) and \(connection.cid)")
                }
                prefixOwner[prefix] = connection.cid
                for token in inbox.split(separator: ".").dropFirst() where token.count == 22 {
                    let nuid = String(token.prefix(12))
                    if let owner = nuidOwner[nuid], owner != connection.cid {
                        problems.append("NUID prefix \(nuid) on connections \(owner) and \(connection.cid)")
                    }
                    nuidOwner[nuid] = connection.cid
                }
            }
        }
        return (inboxes, problems)
    }

    /// The groups (conversations) the connection's subjects name; a clientId in no group is
    /// a group of its own (an unused inbox, or a conversation not listed).
    func groups(of connection: Connection, in groups: [String: String]) -> Set<String> {
        Set((connection.subjects.flatMap(Self.clientIds) + connection.payloadIds).map { groups[$0] ?? "alone " + $0 })
    }

    /// The random part an inbox subject starts with: `_INBOX.<token>` (the client's prefix).
    static func inboxPrefix(_ inbox: String) -> String {
        inbox.split(separator: ".").prefix(2).joined(separator: ".")
    }

    /// The first 12 characters of the token after the prefix: nats.c's NUID prefix, which one
    /// process shares across all its connections (`<prefix>.<NUID>`).
    static func nuidPrefix(_ inbox: String) -> String? {
        let tokens = inbox.split(separator: ".")
        guard tokens.count >= 3, tokens[2].count == 22 else { return nil }
        return String(tokens[2].prefix(12))
    }
}
