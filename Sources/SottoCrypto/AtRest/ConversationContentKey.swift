/// The key that seals one conversation's content columns in the shared database
/// (docs/adr/0052): HKDF-SHA256 over the conversation's identity `databaseKey`, with no salt
/// and `info` = `"sotto/db-cell/v1"` || 0x00 || the conversation id (UTF-8). Destroying the
/// identity (explode, leave) destroys every way to derive it: crypto-shredding.
///
/// A sealed cell is `0x01 || nonce (24) || XChaCha20-Poly1305(plain) || tag (16)`, with AAD
/// `"sotto/db-cell/v1"` || 0x00 || conversation id || 0x00 || table || 0x00 || column || 0x00 || row id.
///
/// ```swift
/// let key = ConversationContentKey(databaseKey: identity.databaseKey, conversationId: cid)
/// let address = CellAddress(table: "message", column: "content", rowId: mid)
/// let cell = key.seal(Array("hi".utf8), at: address)
/// try key.open(cell, at: address)   // "hi"
/// ```
public struct ConversationContentKey: Sendable {
    public static let label = "sotto/db-cell/v1"
    public static let version: UInt8 = 0x01
    /// Bytes a sealed cell adds to its plaintext.
    public static let overhead = 1 + XChaCha20Poly1305.nonceByteCount + XChaCha20Poly1305.tagByteCount

    public let conversationId: String
    private let key: SecretBytes

    public init(databaseKey: SecretBytes, conversationId: String) {
        self.conversationId = conversationId
        var ikm = databaseKey.copyBytes()
        var derived = HKDFSHA256.derive(ikm: ikm, salt: [], info: Array(Self.label.utf8) + [0] + Array(conversationId.utf8),
                                        length: XChaCha20Poly1305.keyByteCount)
        SecretBytes.zero(&ikm)
        key = SecretBytes(consuming: &derived)
    }

    /// Whether `value` has the shape of a sealed cell of this version (not whether it opens).
    public static func looksSealed(_ value: [UInt8]) -> Bool {
        value.count >= overhead && value.first == version
    }

    public func seal(_ plaintext: [UInt8], at address: CellAddress) -> [UInt8] {
        let nonce = SecureRandom.bytes(XChaCha20Poly1305.nonceByteCount)
        let sealed = key.withUnsafeBytes { key in
            // The key and nonce lengths are fixed above, the only way this can throw.
            try! XChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, aad: aad(address))
        }
        return [Self.version] + nonce + sealed
    }

    public func open(_ cell: [UInt8], at address: CellAddress) throws(SealedCellError) -> [UInt8] {
        guard let first = cell.first else { throw .truncated }
        guard first == Self.version else { throw .unknownVersion(first) }
        guard cell.count >= Self.overhead else { throw .truncated }
        let nonceEnd = 1 + XChaCha20Poly1305.nonceByteCount
        do {
            return try key.withUnsafeBytes { (key) throws(CryptoError) -> [UInt8] in
                try XChaCha20Poly1305.open(cell[nonceEnd...], key: key, nonce: cell[1..<nonceEnd], aad: aad(address))
            }
        } catch {
            throw .authenticationFailed
        }
    }

    private func aad(_ address: CellAddress) -> [UInt8] {
        var out = Array(Self.label.utf8)
        for part in [conversationId, address.table, address.column, address.rowId] {
            out.append(0)
            out.append(contentsOf: part.utf8)
        }
        return out
    }
}
