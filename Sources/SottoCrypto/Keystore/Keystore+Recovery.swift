/// The master key leaves and comes back as a recovery key (docs/adr/0038): export for the
/// user's safekeeping, import on a new machine or after the key file was lost.
///
/// ```swift
/// let text = try Keystore(directory: group.keystorePath).recoveryKey()
/// let outcome = try Keystore.importMasterKey(try RecoveryKey.decode(text), directory: group.keystorePath)
/// ```
extension Keystore {
    /// What `importMasterKey` found and did.
    public enum ImportOutcome: Equatable, Sendable {
        /// `master.key` written; `opened` sealed files (identities and the unused slot) open with it.
        case installed(opened: Int)
        /// The same key was in place already.
        case alreadyInPlace(opened: Int)
    }

    /// The master key this keystore uses, as a recovery key.
    public func recoveryKey() -> String { RecoveryKey.encode(masterKey) }

    /// Installs `key` as the keystore's `master.key`, only when every sealed file in
    /// `directory` opens with it (a wrong key is refused before anything is written) and no
    /// other key is in place. The daemon must not be running (the caller holds its lock).
    public static func importMasterKey(_ key: SecretBytes, directory: String) throws(KeystoreError) -> ImportOutcome {
        guard key.count == 32 else { throw .unavailable("a master key has 32 bytes") }
        let dir = try SecureDirectory(path: directory, create: false)
        defer { dir.close() }
        let (opened, total) = try opens(with: key, in: dir)
        guard opened == total else {
            throw .unavailable("this recovery key opens \(opened) of the \(total) sealed identities in \(directory): "
                + "it is not the key they were sealed with; nothing was changed")
        }
        if var existing = try dir.read(masterKeyName, maxBytes: 128) {
            defer { SecretBytes.zero(&existing) }
            let inPlace = try parseMasterKey(existing, source: masterKeyName)
            guard inPlace.isEqual(to: key) else {
                throw .unavailable("another master key is already in \(directory)/\(masterKeyName); nothing was changed "
                    + "(move it aside first if you are sure it is the wrong one)")
            }
            return .alreadyInPlace(opened: opened)
        }
        var bytes = key.copyBytes()
        defer { SecretBytes.zero(&bytes) }
        guard try dir.writeAtomically(masterKeyName, bytes, replace: false) else {
            throw .unavailable("\(masterKeyName) appeared while importing; nothing was changed")
        }
        return .installed(opened: opened)
    }
}
