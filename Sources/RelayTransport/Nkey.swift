import CSodium

/// A NATS nkey: an ed25519 key pair whose public key and seed are written the NATS way
/// (a prefix byte naming its kind, the key, a CRC-16/XMODEM little-endian, all in RFC 4648
/// base32 without padding): a user's public key starts with `U` (56 characters), an account's
/// with `A`, their seeds with `SU` / `SA` (58 characters). Decoding checks the length, the
/// alphabet, the checksum and the kind, and never quotes the text it refuses.
///
/// ```swift
/// let user = Nkey.generate(.user)
/// user.publicKey                          // "UAB…" (56 characters)
/// let again = try Nkey(seed: user.seedText, kind: .user)
/// let signature = user.sign(Array("nonce".utf8))   // 64 bytes
/// ```
public struct Nkey: Sendable {
    public enum Kind: UInt8, Sendable {
        case account = 0        // 'A'
        case user = 160         // 20 << 3, 'U'
    }

    static let seedPrefix: UInt8 = 18 << 3  // 'S'

    public let kind: Kind
    /// The 32-byte ed25519 seed.
    let seed: [UInt8]
    /// The 32-byte ed25519 public key.
    let rawPublicKey: [UInt8]
    /// libsodium's 64-byte secret key (seed and public key).
    private let secretKey: [UInt8]

    private init(kind: Kind, seed: [UInt8]) {
        _ = Self.sodiumReady
        var publicKey = [UInt8](repeating: 0, count: 32)
        var secretKey = [UInt8](repeating: 0, count: 64)
        _ = crypto_sign_seed_keypair(&publicKey, &secretKey, seed)
        self.kind = kind
        self.seed = seed
        self.rawPublicKey = publicKey
        self.secretKey = secretKey
    }

    /// A fresh key pair from the system's random generator.
    public static func generate(_ kind: Kind) -> Nkey {
        _ = sodiumReady
        var seed = [UInt8](repeating: 0, count: 32)
        randombytes_buf(&seed, 32)
        return Nkey(kind: kind, seed: seed)
    }

    /// The key pair of an encoded seed (`SU…`, `SA…`) of `kind`; throws `.malformedCredentials`
    /// naming what is wrong, never the seed.
    public init(seed text: String, kind: Kind) throws(RelayError) {
        guard text.utf8.count == 58, let raw = Self.decode(text), raw.count == 34 else {
            throw .malformedCredentials("not an nkey seed (58 base32 characters with a valid checksum)")
        }
        guard raw[0] & 0xf8 == Self.seedPrefix else { throw .malformedCredentials("not an nkey seed (no S prefix)") }
        let encodedKind = ((raw[0] & 0x07) << 5) | (raw[1] >> 3)
        guard encodedKind == kind.rawValue else {
            throw .malformedCredentials("the nkey seed is not a\(kind == .user ? " user" : "n account") seed")
        }
        self.init(kind: kind, seed: Array(raw[2...]))
    }

    /// The public key as NATS writes it (`U…`, `A…`).
    public var publicKey: String { Self.encode([kind.rawValue] + rawPublicKey) }

    /// The seed as NATS writes it (`SU…`, `SA…`): a secret.
    public var seedText: String {
        Self.encode([Self.seedPrefix | (kind.rawValue >> 5), (kind.rawValue & 31) << 3] + seed)
    }

    /// The detached ed25519 signature of `message` (64 bytes).
    public func sign(_ message: [UInt8]) -> [UInt8] {
        var signature = [UInt8](repeating: 0, count: 64)
        _ = crypto_sign_detached(&signature, nil, message, UInt64(message.count), secretKey)
        return signature
    }

    /// Whether `text` is a well-formed public key of `kind` (length, alphabet, checksum, prefix).
    public static func isPublicKey(_ text: String, kind: Kind) -> Bool {
        guard text.utf8.count == 56, let raw = decode(text), raw.count == 33 else { return false }
        return raw[0] == kind.rawValue
    }

    private static let sodiumReady: Bool = sodium_init() >= 0

    // MARK: - Encoding

    private static let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567".utf8)

    static func crc16(_ bytes: [UInt8]) -> UInt16 {
        var crc: UInt16 = 0
        for byte in bytes {
            crc ^= UInt16(byte) << 8
            for _ in 0..<8 { crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1 }
        }
        return crc
    }

    static func base32(_ bytes: [UInt8]) -> String {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for byte in bytes {
            buffer = (buffer << 8) | Int(byte)
            bits += 8
            while bits >= 5 {
                out.append(alphabet[(buffer >> (bits - 5)) & 31])
                bits -= 5
            }
        }
        if bits > 0 { out.append(alphabet[(buffer << (5 - bits)) & 31]) }
        return String(decoding: out, as: UTF8.self)
    }

    static func encode(_ raw: [UInt8]) -> String {
        let crc = crc16(raw)
        return base32(raw + [UInt8(crc & 0xff), UInt8(crc >> 8)])
    }

    /// The bytes before the checksum; nil for a character outside the alphabet or a bad checksum.
    static func decode(_ text: String) -> [UInt8]? {
        var out: [UInt8] = []
        var buffer = 0, bits = 0
        for character in text.utf8 {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            buffer = ((buffer << 5) | value) & 0xffff
            bits += 5
            if bits >= 8 {
                out.append(UInt8((buffer >> (bits - 8)) & 0xff))
                bits -= 8
            }
        }
        guard out.count > 2 else { return nil }
        let body = Array(out.dropLast(2))
        let crc = crc16(body)
        return out[out.count - 2] == UInt8(crc & 0xff) && out[out.count - 1] == UInt8(crc >> 8) ? body : nil
    }
}
