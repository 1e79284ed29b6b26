import CSodium
import SottoWire

/// One attachment's chunk AEAD (docs/protocol/attachments.md §4): the chunk key derived from
/// the reference's secret, and per chunk a nonce from its index and an AAD binding the id,
/// the header, the index and whether it is the final chunk. Seals and opens into buffers the
/// caller owns, so a stream of any length uses the same two.
///
/// ```swift
/// let cipher = AttachmentChunkCipher(secret: key, id: id)
/// cipher.seal(plain, index: 0, final: true, into: out)      // out: plain.count + 16 bytes
/// ```
struct AttachmentChunkCipher: Sendable {
    static let label = Array("sotto/attachment/v1".utf8)
    static let keyInfo = Array("sotto/attachment/v1/chunk-key".utf8)

    private let key: SecretBytes
    private let id: [UInt8]

    // MARK: Derivation

    /// `HKDF-SHA256(ikm: secret, salt: id, info: "sotto/attachment/v1/chunk-key", 32)`.
    init(secret: [UInt8], id: [UInt8]) {
        precondition(secret.count == 32 && id.count == 16, "an attachment has a 32-byte secret and a 16-byte id")
        var derived = HKDFSHA256.derive(ikm: secret, salt: id, info: Self.keyInfo, length: 32)
        key = SecretBytes(consuming: &derived)
        self.id = id
    }

    /// 4 zero bytes || u64be(index).
    static func nonce(_ index: Int) -> [UInt8] {
        [0, 0, 0, 0] + bigEndian64(UInt64(index))
    }

    /// "sotto/attachment/v1" || id || header || u64be(index) || (final ? 0x01 : 0x00).
    func aad(_ index: Int, final: Bool) -> [UInt8] {
        Self.label + id + AttachmentLayout.header + Self.bigEndian64(UInt64(index)) + [final ? 1 : 0]
    }

    // MARK: Sealing and opening

    /// Seals `plaintext` as chunk `index` into `out` (exactly `plaintext.count + 16` bytes).
    func seal(_ plaintext: UnsafeRawBufferPointer, index: Int, final: Bool, into out: UnsafeMutableRawBufferPointer) {
        precondition(out.count == plaintext.count + AttachmentLayout.tagSize, "the sealed chunk's buffer")
        let nonce = Self.nonce(index), aad = aad(index, final: final)
        let result = key.withUnsafeBytes { key in
            crypto_aead_chacha20poly1305_ietf_encrypt(
                out.baseAddress!.assumingMemoryBound(to: UInt8.self), nil,
                plaintext.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(plaintext.count),
                aad, UInt64(aad.count), nil, nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        precondition(result == 0, "ChaCha20-Poly1305 refused a chunk of \(plaintext.count) bytes")
    }

    /// Opens chunk `index` into `out` (exactly `sealed.count − 16` bytes); false when it does
    /// not authenticate as that chunk of this attachment.
    func open(_ sealed: UnsafeRawBufferPointer, index: Int, final: Bool, into out: UnsafeMutableRawBufferPointer) -> Bool {
        precondition(sealed.count >= AttachmentLayout.tagSize && out.count == sealed.count - AttachmentLayout.tagSize,
                     "the opened chunk's buffer")
        let nonce = Self.nonce(index), aad = aad(index, final: final)
        let result = key.withUnsafeBytes { key in
            crypto_aead_chacha20poly1305_ietf_decrypt(
                out.baseAddress?.assumingMemoryBound(to: UInt8.self), nil, nil,
                sealed.baseAddress!.assumingMemoryBound(to: UInt8.self), UInt64(sealed.count),
                aad, UInt64(aad.count), nonce, key.baseAddress!.assumingMemoryBound(to: UInt8.self))
        }
        return result == 0
    }

    private static func bigEndian64(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * UInt64($0))) }
    }
}
