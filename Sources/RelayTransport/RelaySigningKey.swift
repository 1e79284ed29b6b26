import CSodium
import Glibc

/// The relay's scoped signing key, which its operator hands to every device
/// (`SOTTO_RELAY_SIGNING_KEY=/path/device-signing.key`, written by
/// `scripts/relay-operator.py init`; docs/relay.md, docs/adr/0051). The file holds two lines:
/// the mailbox account's public key (`A…`) and the signing key's seed (`SA…`). A device mints
/// with it a user JWT for each nkey of its own; nats-server gives such a user only the
/// permissions of the key's template, scoped to the user's own public key, whatever the JWT
/// says (a JWT with permissions of its own is refused). The key is the same for every device
/// of the relay, so it links nothing.
///
/// ```swift
/// let key = try RelaySigningKey.load(path: "/home/me/.config/sotto/relay-signing.key")
/// let user = Nkey.generate(.user)
/// let jwt = key.userJWT(for: user)      // "eyJ0eXAi…"
/// ```
public struct RelaySigningKey: Sendable, Equatable {
    public static let variable = "SOTTO_RELAY_SIGNING_KEY"
    public static let maxBytes = 1_024

    public let path: String
    /// The account the users belong to (`issuer_account`).
    public let account: String
    let key: Nkey

    init(path: String, account: String, key: Nkey) {
        self.path = path
        self.account = account
        self.key = key
    }

    /// Reads and checks the file: absolute path, a regular file private to its owner, at most
    /// 1 KiB, exactly an account public key line and an account seed line. Errors name the
    /// file and the problem, never its content.
    public static func load(path: String) throws(RelayError) -> RelaySigningKey {
        guard path.hasPrefix("/") else {
            throw .malformedCredentials("signing key file path \(RelayURL.quote(path)) is not absolute")
        }
        let text = try SettingsFile.read(path, what: "signing key file", maxBytes: maxBytes, forbiddenMode: 0o077,
                                         modeProblem: "readable by others", chmod: "600", fail: RelayError.malformedCredentials)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { String($0).trimmingCharacters(in: " \t") }
            .filter { !$0.isEmpty }
        guard lines.count == 2 else {
            throw .malformedCredentials("\(path) must hold two lines (the account's public key, the signing key's seed); it holds \(lines.count)")
        }
        guard Nkey.isPublicKey(lines[0], kind: .account) else {
            throw .malformedCredentials("\(path): the first line is not an account public key (A…, 56 base32 characters)")
        }
        let key: Nkey
        do throws(RelayError) {
            key = try Nkey(seed: lines[1], kind: .account)
        } catch {
            throw .malformedCredentials("\(path): the second line is not an account signing key seed (SA…, 58 base32 characters)")
        }
        return RelaySigningKey(path: path, account: lines[0], key: key)
    }

    public static func == (lhs: RelaySigningKey, rhs: RelaySigningKey) -> Bool {
        lhs.path == rhs.path && lhs.account == rhs.account && lhs.key.publicKey == rhs.key.publicKey
    }

    /// The public key of the signing key (the scope nats-server looks up in the account).
    public var publicKey: String { key.publicKey }

    /// A user JWT for `user`, issued now by this key for `account`, with no permissions of its
    /// own (a scoped user must have none: the scope's template applies) and no name.
    public func userJWT(for user: Nkey, issuedAt: Int64 = Int64(time(nil))) -> String {
        let nats = #"{"issuer_account":"\#(account)","type":"user","version":2}"#
        let unidentified = #"{"iat":\#(issuedAt),"iss":"\#(key.publicKey)","name":"","sub":"\#(user.publicKey)","nats":\#(nats)}"#
        // jti: an id of the claims (nats-server does not check it; nsc hashes the claims too).
        var digest = [UInt8](repeating: 0, count: 32)
        let bytes = Array(unidentified.utf8)
        _ = crypto_hash_sha256(&digest, bytes, UInt64(bytes.count))
        let claims = #"{"jti":"\#(Nkey.base32(digest))",\#(unidentified.dropFirst())"#
        let signed = Self.base64URL(Array(#"{"typ":"JWT","alg":"ed25519-nkey"}"#.utf8)) + "." + Self.base64URL(Array(claims.utf8))
        return signed + "." + Self.base64URL(key.sign(Array(signed.utf8)))
    }

    /// RFC 4648 base64url without padding (JWT parts, the nonce signature).
    static func base64URL(_ bytes: [UInt8]) -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".utf8)
        var out: [UInt8] = []
        out.reserveCapacity((bytes.count * 4 + 2) / 3)
        var index = 0
        while index < bytes.count {
            let chunk = Array(bytes[index..<min(index + 3, bytes.count)])
            let value = (Int(chunk[0]) << 16) | (chunk.count > 1 ? Int(chunk[1]) << 8 : 0) | (chunk.count > 2 ? Int(chunk[2]) : 0)
            out.append(alphabet[(value >> 18) & 63])
            out.append(alphabet[(value >> 12) & 63])
            if chunk.count > 1 { out.append(alphabet[(value >> 6) & 63]) }
            if chunk.count > 2 { out.append(alphabet[value & 63]) }
            index += 3
        }
        return String(decoding: out, as: UTF8.self)
    }
}

extension String {
    fileprivate func trimmingCharacters(in set: String) -> String {
        var slice = self[...]
        while let first = slice.first, set.contains(first) { slice = slice.dropFirst() }
        while let last = slice.last, set.contains(last) { slice = slice.dropLast() }
        return String(slice)
    }
}
