import SottoWire

/// The mark a member leaves on a relay once it has an attachment whole
/// (docs/protocol/attachment-relay.md §6): the first 16 bytes of
/// SHA-256("sotto-attachment-fetched v1" ‖ the reference's 32-byte key ‖ the member's 33-byte
/// compressed public key), as 32 lowercase hex. One member always makes the same mark for one
/// file, so it counts once; the relay, without the key, can link neither two marks of one
/// member nor a mark to a member.
///
/// ```swift
/// let token = AttachmentFetchedMark.token(key: reference.key, memberPublicKey: me)   // "3f0c…" (32 hex)
/// ```
public enum AttachmentFetchedMark {
    public static let label = Array("sotto-attachment-fetched v1".utf8)

    /// nil unless `key` is 32 bytes and `memberPublicKey` 33.
    public static func token(key: [UInt8], memberPublicKey: [UInt8]) -> String? {
        guard key.count == 32, memberPublicKey.count == 33 else { return nil }
        return Hex.encode(SHA256.hash(label + key + memberPublicKey).prefix(16))
    }
}
