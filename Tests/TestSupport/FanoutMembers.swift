import SharedStore
import SottoCrypto

/// A large conversation made directly in the sender's database (issue #17's fan-out tests and
/// benchmark): `count` members with fresh real identities, each reached at `endpoint` (a relay
/// URL, or one socket for all), written in one IMMEDIATE transaction on a connection of its
/// own (a foreign writer, like `RemoteMember.join`). No roster message travels: the sender
/// alone needs to know them, and it is the fan-out that is measured.
///
/// ```swift
/// let members = try FanoutMembers.seed(conversationId: id, databasePath: home.databasePath,
///                                      count: 999, endpoint: server.url)
/// members[0].identity.clientId   // its relay mailbox: Mailbox(clientId:)
/// ```
public enum FanoutMembers {
    public struct Member: Sendable {
        public let identity: Identity
        public let endpoint: String
    }

    @discardableResult
    public static func seed(conversationId: String, databasePath: String, count: Int,
                            endpoint: (Int) -> String) throws -> [Member] {
        let members = (0..<count).map { Member(identity: Identity.generate(), endpoint: endpoint($0)) }
        let conn = try SQLiteConnection.open(path: databasePath, profile: .worker)
        try conn.immediateTransaction { () throws(StoreError) in
            for (index, member) in members.enumerated() {
                try conn.run("""
                    INSERT INTO member(conversationId, inboxId, publicKey, endpoint, clientId, role)
                    VALUES (?, ?, ?, ?, ?, 'member')
                    """, [.text(conversationId), .text(member.identity.inboxId), .text(member.identity.publicKey.hex),
                          .text(member.endpoint), .text(member.identity.clientId)])
                try conn.run("INSERT INTO member_profile(conversationId, inboxId, name) VALUES (?, ?, ?)",
                             [.text(conversationId), .text(member.identity.inboxId), .text("m\(index)")])
            }
        }
        return members
    }

    @discardableResult
    public static func seed(conversationId: String, databasePath: String, count: Int,
                            endpoint: String) throws -> [Member] {
        try seed(conversationId: conversationId, databasePath: databasePath, count: count) { _ in endpoint }
    }
}
