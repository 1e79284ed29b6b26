/// The keystore's master key as a recovery key a person can write down and type again:
/// `sotto key export` prints it, `sotto key import` takes it (docs/adr/0038).
///
/// Text: `SOTTO1-` and 11 groups of 5 characters of the RFC 4648 base32 alphabet (A–Z, 2–7)
/// joined by `-`, encoding 34 bytes: the 32-byte key, then the first 2 bytes of
/// SHA-256("sotto/recovery/v1" || key). The last character carries 2 bits; its 3 low bits
/// are zero. Reading ignores case, spaces, tabs, line breaks and dashes, and the prefix.
///
/// ```swift
/// let text = RecoveryKey.encode(masterKey)        // "SOTTO1-ABCDE-…"
/// let key = try RecoveryKey.decode(text)          // the same 32 bytes
/// ```
public enum RecoveryKey {
    public static let prefix = "SOTTO1-"
    static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)
    static let checkLabel = Array("sotto/recovery/v1".utf8)
    static let characterCount = 55

    /// Why a text is not a recovery key. Never carries the text itself.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        case tooLong
        case wrongLength(Int)
        case notBase32
        case checkFailed

        public var description: String {
            switch self {
            case .tooLong: return "that is far too long for a recovery key"
            case .wrongLength(let count):
                return "a recovery key has \(characterCount) characters after \(prefix) (without dashes), this has \(count)"
            case .notBase32: return "a recovery key uses only the letters A–Z and the digits 2–7"
            case .checkFailed: return "that recovery key has a typo: its check characters do not match"
            }
        }
    }

    public static func encode(_ key: SecretBytes) -> String {
        var bytes = key.copyBytes()
        defer { SecretBytes.zero(&bytes) }
        bytes += check(bytes)
        var characters: [UInt8] = []
        var buffer = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                characters.append(alphabet[(buffer >> bits) & 31])
            }
        }
        if bits > 0 { characters.append(alphabet[(buffer << (5 - bits)) & 31]) }
        buffer = 0
        let groups = stride(from: 0, to: characters.count, by: 5).map {
            String(decoding: characters[$0..<min($0 + 5, characters.count)], as: UTF8.self)
        }
        SecretBytes.zero(&characters)
        return prefix + groups.joined(separator: "-")
    }

    public static func decode(_ text: String) throws(Failure) -> SecretBytes {
        guard text.utf8.count <= 1_024 else { throw .tooLong }
        var characters: [UInt8] = text.utf8.filter { ![0x20, 0x09, 0x0a, 0x0d, 0x2d].contains($0) }
            .map { (0x61...0x7a).contains($0) ? $0 - 0x20 : $0 }
        defer { SecretBytes.zero(&characters) }
        let bare = Array(prefix.utf8.filter { $0 != 0x2d })
        if characters.starts(with: bare) { characters.removeFirst(bare.count) }
        guard characters.allSatisfy({ alphabet.contains($0) }) else { throw .notBase32 }
        guard characters.count == characterCount else { throw .wrongLength(characters.count) }
        var bytes: [UInt8] = []
        defer { SecretBytes.zero(&bytes) }
        var buffer = 0, bits = 0
        for character in characters {
            guard let value = alphabet.firstIndex(of: character) else { throw .notBase32 }
            buffer = ((buffer << 5) | value) & 0xffff
            bits += 5
            if bits >= 8 {
                bits -= 8
                bytes.append(UInt8((buffer >> bits) & 0xff))
            }
        }
        guard buffer & ((1 << bits) - 1) == 0, bytes.count == 34 else { throw .checkFailed }
        let key = Array(bytes[0..<32])
        guard check(key) == Array(bytes[32..<34]) else { throw .checkFailed }
        return SecretBytes(key)
    }

    static func check(_ key: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(checkLabel + key).prefix(2))
    }
}
