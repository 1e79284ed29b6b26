import SottoWire

/// One inbox: its secp256k1 key, the ids derived from it, and the key of its database.
///
/// ```swift
/// let me = Identity.generate()
/// me.inboxId        // hex(SHA-256(compressed public key)), 64 chars
/// me.clientId       // "3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10", what push transports see
/// ```
public struct Identity: Sendable {
    public static let databaseKeyByteCount = 32

    /// hex(SHA-256(public key)), PROTOCOL §1.
    public let inboxId: String
    /// Random UUID v4, lowercase; the only per-inbox id a push transport sees.
    public let clientId: String
    public let privateKey: PrivateKey
    /// 32 random bytes for encrypting this inbox's database.
    public let databaseKey: SecretBytes
    /// Unix milliseconds.
    public let createdAtMs: Int64

    public var publicKey: PublicKey { privateKey.publicKey }

    /// Builds an identity from stored parts; `inboxId` is derived from the key, so it cannot
    /// disagree with it.
    public init(clientId: String, privateKey: PrivateKey, databaseKey: SecretBytes, createdAtMs: Int64) {
        self.inboxId = privateKey.publicKey.inboxId
        self.clientId = clientId
        self.privateKey = privateKey
        self.databaseKey = databaseKey
        self.createdAtMs = createdAtMs
    }

    /// A fresh identity: new key, new clientId, new database key.
    public static func generate(nowMs: Int64 = WallClock.nowMs()) -> Identity {
        var databaseKey = SecureRandom.bytes(databaseKeyByteCount)
        return Identity(
            clientId: SecureRandom.uuidV4(),
            privateKey: .generate(),
            databaseKey: SecretBytes(consuming: &databaseKey),
            createdAtMs: nowMs)
    }

    /// Same key, ids and database key (constant-time on the secrets).
    public func isSame(as other: Identity) -> Bool {
        inboxId == other.inboxId && clientId == other.clientId && createdAtMs == other.createdAtMs
            && privateKey.secret.isEqual(to: other.privateKey.secret) && databaseKey.isEqual(to: other.databaseKey)
    }
}
