import SottoWire

/// The sealed on-disk form of one identity (176 bytes):
///
/// ```
/// header    = "SOTTOKS1" (8) || clientId (36, ASCII) || inboxId (32, raw)
/// file      = header || nonce (12) || ChaCha20-Poly1305(plaintext, AAD = header) (72 + 16)
/// plaintext = private key (32) || database key (32) || createdAtMs (8, big-endian)
/// ```
///
/// The header is authenticated, so a file copied under another identity's name, or edited to
/// claim another clientId or inboxId, fails to open.
///
/// ```swift
/// let bytes = try IdentityRecord.seal(identity, masterKey: key)
/// let back = try IdentityRecord.open(bytes, masterKey: key, expectedClientId: identity.clientId)
/// ```
enum IdentityRecord {
    static let magic = Array("SOTTOKS1".utf8)
    static let headerByteCount = 8 + 36 + 32
    static let plaintextByteCount = 32 + 32 + 8
    static let byteCount = headerByteCount + 12 + plaintextByteCount + 16

    static func header(clientId: String, inboxId: String) -> [UInt8] {
        magic + Array(clientId.utf8) + (Hex.decode(inboxId, count: 32) ?? [])
    }

    static func seal(_ identity: Identity, masterKey: SecretBytes) throws(KeystoreError) -> [UInt8] {
        let header = header(clientId: identity.clientId, inboxId: identity.inboxId)
        var plaintext = identity.privateKey.exportBytes() + identity.databaseKey.copyBytes()
        defer { SecretBytes.zero(&plaintext) }
        for shift in stride(from: 56, through: 0, by: -8) {
            plaintext.append(UInt8(truncatingIfNeeded: UInt64(bitPattern: identity.createdAtMs) >> UInt64(shift)))
        }
        let nonce = SecureRandom.bytes(12)
        do {
            let sealed = try masterKey.withUnsafeBytes { key throws(CryptoError) in
                try ChaCha20Poly1305.seal(plaintext, key: Array(key), nonce: nonce, aad: header)
            }
            return header + nonce + sealed
        } catch {
            throw .unavailable("cannot seal the identity")
        }
    }

    /// The clientId and inboxId the header claims, without authenticating them.
    static func claimedIds(_ bytes: [UInt8]) -> (clientId: String, inboxId: String)? {
        guard bytes.count >= headerByteCount, Array(bytes[0..<8]) == magic,
              let clientId = String(validating: bytes[8..<44], as: UTF8.self), ProtocolIds.isClientId(clientId)
        else { return nil }
        return (clientId, Hex.encode(bytes[44..<76]))
    }

    static func open(_ bytes: [UInt8], masterKey: SecretBytes, expectedClientId: String?) throws(KeystoreError) -> Identity {
        guard bytes.count >= byteCount else { throw .corrupt("identity file is truncated") }
        guard bytes.count == byteCount else { throw .corrupt("identity file has trailing bytes") }
        guard let (clientId, inboxId) = claimedIds(bytes) else { throw .corrupt("not an identity file") }
        if let expectedClientId, clientId != expectedClientId {
            throw .corrupt("identity file belongs to another clientId")
        }
        let header = Array(bytes[0..<headerByteCount])
        let nonce = Array(bytes[headerByteCount..<(headerByteCount + 12)])
        let sealed = Array(bytes[(headerByteCount + 12)...])
        let opened = masterKey.withUnsafeBytes { key in
            try? ChaCha20Poly1305.open(sealed, key: Array(key), nonce: nonce, aad: header)
        }
        guard var plaintext = opened, plaintext.count == plaintextByteCount else {
            throw .corrupt("identity file failed authentication (tampered, or another master key)")
        }
        defer { SecretBytes.zero(&plaintext) }
        guard let privateKey = try? PrivateKey(bytes: Array(plaintext[0..<32])) else {
            throw .corrupt("identity file holds an invalid key")
        }
        guard privateKey.publicKey.inboxId == inboxId else { throw .corrupt("identity file inboxId does not match its key") }
        var createdAtMs: UInt64 = 0
        for byte in plaintext[64..<72] { createdAtMs = createdAtMs << 8 | UInt64(byte) }
        return Identity(clientId: clientId, privateKey: privateKey, databaseKey: SecretBytes(plaintext[32..<64]),
                        createdAtMs: Int64(bitPattern: createdAtMs))
    }
}
