import SottoCrypto

/// Stress identity `index`, derived from the index alone, so that `sotto-keystore-probe`'s
/// churner, its readers and the test that seals pushes to it agree on every clientId and
/// key without talking to each other.
///
/// ```swift
/// let identity = StressIdentity.make(7)   // the same in every process
/// ```
public enum StressIdentity {
    public static func make(_ index: Int) -> Identity {
        let clientId = SecureRandom.uuidV4(from: SHA256.hash(Array("sotto-stress-client-\(index)".utf8)))
        let key = try! PrivateKey(bytes: SHA256.hash(Array("sotto-stress-key-\(index)".utf8)))  // a hash is a valid key but with negligible odds
        return Identity(clientId: clientId, privateKey: key,
                        databaseKey: SecretBytes(SHA256.hash(Array("db-\(index)".utf8))), createdAtMs: Int64(index))
    }
}
