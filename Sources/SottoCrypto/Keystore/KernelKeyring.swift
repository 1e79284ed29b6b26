import CKeyctl
#if canImport(Glibc)
import Glibc
#endif

/// The master key in the kernel's key retention service (keyctl(2)): a `user` key named by
/// `description`, in the caller's user keyring `@u`, readable by the user (not only its
/// possessor), so a worker in another user namespace (`PrivateUsers=yes`) can read it by
/// its serial number (docs/adr/0045).
///
/// ```swift
/// let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: dir))
/// let serial = try ring.store(key)          // daemon
/// let key = try ring.read(serial: serial)   // worker; nil when gone
/// ```
public struct KernelKeyring: Sendable {
    /// The key's name: Sotto's and the keystore directory's, so two installs never share one.
    public let description: String

    public init(description: String) { self.description = description }

    public static func description(keystoreDirectory: String) -> String { "sotto:master-key:" + keystoreDirectory }

    /// Possessor: everything; user: view, read, write, search, link, setattr; group, other:
    /// nothing. The user bits are what a process in another user namespace is checked against.
    static let permissions: UInt32 = 0x3f3f_0000

    /// Adds (or replaces) the key in `@u`; returns its serial.
    public func store(_ key: SecretBytes) throws(KeystoreError) -> Int32 {
        var bytes = key.copyBytes()
        defer { SecretBytes.zero(&bytes) }
        let serial = bytes.withUnsafeBytes { raw in
            sotto_add_key("user", description, raw.baseAddress, raw.count, SOTTO_KEY_SPEC_USER_KEYRING)
        }
        guard serial > 0 else { throw .unavailable("cannot add the key to the kernel keyring (errno \(errno))") }
        guard sotto_keyctl_setperm(Int32(serial), Self.permissions) == 0 else {
            let saved = errno
            _ = sotto_keyctl_invalidate(Int32(serial))
            throw .unavailable("cannot set the kernel key's permissions (errno \(saved))")
        }
        return Int32(serial)
    }

    /// The serial of this description in the caller's own `@u`, or nil.
    public func search() -> Int32? {
        let serial = sotto_keyctl_search(SOTTO_KEY_SPEC_USER_KEYRING, "user", description)
        return serial > 0 ? Int32(serial) : nil
    }

    /// The key with this serial when it is a `user` key with this description; nil when it is
    /// gone, another key or not readable. A payload that is not 32 bytes is `.corrupt`.
    public func read(serial: Int32) throws(KeystoreError) -> SecretBytes? {
        guard matches(serial: serial) else { return nil }
        var buffer = [UInt8](repeating: 0, count: 64)
        defer { SecretBytes.zero(&buffer) }
        let length = buffer.withUnsafeMutableBytes { sotto_keyctl_read(serial, $0.baseAddress, $0.count) }
        guard length >= 0 else { return nil }
        guard length == 32 else {
            throw .corrupt("the kernel keyring entry \(description) holds \(length) bytes, not a 32-byte key")
        }
        return SecretBytes(buffer[0..<32])
    }

    /// Removes the key for every keyring that links it.
    public func invalidate(serial: Int32) {
        if matches(serial: serial) { _ = sotto_keyctl_invalidate(serial) }
    }

    /// keyctl DESCRIBE answers "type;uid;gid;perm;description".
    private func matches(serial: Int32) -> Bool {
        var buffer = [CChar](repeating: 0, count: 4096 + 64)
        let length = buffer.withUnsafeMutableBufferPointer { sotto_keyctl_describe(serial, $0.baseAddress, $0.count) }
        guard length > 0, length <= buffer.count else { return false }
        let text = String(decoding: buffer.prefix(Int(length) - 1).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let fields = text.split(separator: ";", maxSplits: 4, omittingEmptySubsequences: false)
        return fields.count == 5 && fields[0] == "user" && fields[4] == description
    }
}
