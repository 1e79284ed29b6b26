import SottoWire

/// Envelope v1 (PROTOCOL §3): ECIES over secp256k1 with HKDF-SHA256 and ChaCha20-Poly1305.
///
/// `0x01 || E (33) || nonce (12) || ciphertext || tag (16)`, key = HKDF(x(e·R), salt E||R,
/// "sotto/envelope/v1"), AAD = `0x01 || E || clientId || topic`.
///
/// ```swift
/// let sealed = Envelope.seal(plain, recipient: bob.publicKey, clientId: bob.clientId, topic: topic)
/// let plain2 = try Envelope.open(sealed, recipientKey: bob.privateKey, clientId: bob.clientId, topic: topic)
/// ```
public enum Envelope {
    public static let version: UInt8 = 0x01
    public static let info = Array("sotto/envelope/v1".utf8)
    /// version + E + nonce + tag: an envelope with an empty plaintext.
    public static let minimumByteCount = 1 + PublicKey.byteCount + ChaCha20Poly1305.nonceByteCount + ChaCha20Poly1305.tagByteCount

    public static func seal(_ plaintext: [UInt8], recipient: PublicKey, clientId: String, topic: String) -> [UInt8] {
        let ephemeral = PrivateKey.generate()
        let e = ephemeral.publicKey.bytes
        let nonce = SecureRandom.bytes(ChaCha20Poly1305.nonceByteCount)
        // The recipient key was validated when parsed, so ECDH cannot fail.
        var x = (try? ephemeral.sharedSecretX(with: recipient)) ?? []
        var key = HKDFSHA256.derive(ikm: x, salt: e + recipient.bytes, info: info, length: 32)
        defer {
            SecretBytes.zero(&x)
            SecretBytes.zero(&key)
        }
        let aad = associatedData(e: e, clientId: clientId, topic: topic)
        let sealed = (try? ChaCha20Poly1305.seal(plaintext, key: key, nonce: nonce, aad: aad)) ?? []
        return [version] + e + nonce + sealed
    }

    /// Errors: empty → `malformed_payload`; byte 0 ≠ 0x01 → `unsupported_version`; anything
    /// else that does not authenticate (too short, E not a curve point, wrong key, tampered
    /// bytes, other clientId or topic) → `decrypt_failed`.
    public static func open(_ envelope: [UInt8], recipientKey: PrivateKey, clientId: String, topic: String) throws(PushError) -> [UInt8] {
        guard let first = envelope.first else { throw PushError(.malformedPayload, "envelope is empty") }
        guard first == version else { throw PushError(.unsupportedVersion, "envelope version \(first) is not supported") }
        guard envelope.count >= minimumByteCount else {
            throw PushError(.decryptFailed, "envelope is too short (\(envelope.count) bytes)")
        }
        let e = Array(envelope[1..<34])
        let nonce = Array(envelope[34..<46])
        let sealed = Array(envelope[46...])
        guard let ephemeral = try? PublicKey(compressed: e) else {
            throw PushError(.decryptFailed, "envelope ephemeral key is not a curve point")
        }
        guard var x = try? recipientKey.sharedSecretX(with: ephemeral) else {
            throw PushError(.decryptFailed, "key agreement failed")
        }
        var key = HKDFSHA256.derive(ikm: x, salt: e + recipientKey.publicKey.bytes, info: info, length: 32)
        defer {
            SecretBytes.zero(&x)
            SecretBytes.zero(&key)
        }
        let aad = associatedData(e: e, clientId: clientId, topic: topic)
        guard let plaintext = try? ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, aad: aad) else {
            throw PushError(.decryptFailed, "envelope authentication failed")
        }
        return plaintext
    }

    static func associatedData(e: [UInt8], clientId: String, topic: String) -> [UInt8] {
        [version] + e + Array(clientId.utf8) + Array(topic.utf8)
    }
}
