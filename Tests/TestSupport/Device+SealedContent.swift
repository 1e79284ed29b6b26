import DaemonStore
import SharedStore
import SottoCrypto

extension Device {
    /// A connection that opens sealed content (docs/adr/0052) with the identities of this
    /// device's keystore (the key file the tests ask for), as the daemon would. Raw SQL on it
    /// still sees the sealed cells; repositories open them.
    ///
    /// ```swift
    /// let row = try MessageRowRepository.find(id: id, on: try device.keyedConnection())
    /// ```
    public func keyedConnection() throws -> SQLiteConnection {
        let conn = try SQLiteConnection.open(path: group.databasePath, profile: .worker)
        let keystore = try Keystore(directory: group.keystorePath, environment: [:])
        conn.contentKeys = ContentKeyring { inboxId in (try? keystore.identity(inboxId: inboxId))?.databaseKey }
        return conn
    }

    /// The stored message, its content opened.
    public func storedMessage(id: String) throws -> DBMessage? {
        try MessageRowRepository.find(id: id, on: try keyedConnection())
    }

    /// A member's profile name here, opened.
    public func profileName(conversation: String, inboxId: String) throws -> String? {
        try MemberNamesRepository.profileName(conversationId: conversation, inboxId: inboxId, on: try keyedConnection())
    }
}

extension Device {
    /// Every stored message (of `conversation`, or all), its content opened as UTF-8: what a
    /// test used to match with `CAST(content AS TEXT)` before content was sealed.
    public func storedTexts(conversation: String? = nil) throws -> [(id: String, contentType: String, text: String)] {
        let conn = try keyedConnection()
        let rows = try conversation.map { try conn.query("SELECT id FROM message WHERE conversationId = ? ORDER BY rowid", [.text($0)]) }
            ?? conn.query("SELECT id FROM message ORDER BY rowid")
        return try rows.compactMap { row in
            try MessageRowRepository.find(id: try row.string(0), on: conn).map {
                ($0.id, $0.contentType, String(decoding: $0.content, as: UTF8.self))
            }
        }
    }
}
