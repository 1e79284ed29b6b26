import SottoWire

/// What the daemon needs of the keystore directory while the master key moves into the
/// user's keyring (docs/adr/0045): the old key file, read and then wiped, the kernel key's
/// serial for sandboxed readers, and the count of what a new key could never open.
///
/// ```swift
/// if let old = try Keystore.keyFileKey(directory: dir) { /* store it in the Secret Service */ }
/// try Keystore.wipeKeyFile(directory: dir)
/// ```
extension Keystore {
    /// `master.key`, or nil when there is none.
    public static func keyFileKey(directory: String) throws(KeystoreError) -> SecretBytes? {
        let dir = try SecureDirectory(path: directory, create: true)
        defer { dir.close() }
        guard var bytes = try dir.read(masterKeyName, maxBytes: 128) else { return nil }
        defer { SecretBytes.zero(&bytes) }
        return try parseMasterKey(bytes, source: masterKeyName)
    }

    /// Whether `other` is this keystore's master key (a key file left from an earlier mode).
    public func masterKeyIsEqual(to other: SecretBytes) -> Bool {
        masterKey.isEqual(to: other)
    }

    /// Takes `master.key` out of the namespace (a rename, so no reader sees it half-zeroed),
    /// then overwrites it with zeros, fsyncs and unlinks it. A kill in between leaves a
    /// `.deleted-*` file that the daemon's next `sweepLeftovers` wipes. False: there was none.
    @discardableResult
    public static func wipeKeyFile(directory: String) throws(KeystoreError) -> Bool {
        let dir = try SecureDirectory(path: directory, create: false)
        defer { dir.close() }
        let doomed = ".deleted-" + Hex.encode(SecureRandom.bytes(8))
        guard try dir.rename(masterKeyName, to: doomed) else { return false }
        try dir.syncDirectory()
        CrashPoint.reach("keyring.keyFileRenamed")
        return try dir.wipe(doomed)
    }

    /// How many sealed identities (not the unused slot) the directory holds: any, and a new
    /// master key must never be made (docs/adr/0019).
    public static func sealedIdentityCount(directory: String) throws(KeystoreError) -> Int {
        let dir = try SecureDirectory(path: directory, create: true)
        defer { dir.close() }
        return try identityClientIds(in: dir).count
    }

    /// Before a new master key: the unused slot, sealed under a lost key, is worthless.
    public static func discardUnusedSlot(directory: String) throws(KeystoreError) {
        let dir = try SecureDirectory(path: directory, create: true)
        defer { dir.close() }
        _ = try dir.wipe(unusedName)
    }

    /// The key the kernel keyring holds for this directory (see `MasterKeySource`), or nil.
    public static func kernelKeyringKey(directory: String) throws(KeystoreError) -> SecretBytes? {
        let dir = try SecureDirectory(path: directory, create: true)
        defer { dir.close() }
        return try MasterKeySource.readKernelKeyring(dir: dir)
    }

    /// Records the kernel key's serial for readers in another user namespace.
    public static func recordKernelKeySerial(_ serial: Int32, directory: String) throws(KeystoreError) {
        let dir = try SecureDirectory(path: directory, create: true)
        defer { dir.close() }
        _ = try dir.writeAtomically(MasterKeySource.serialFileName, Array(String(serial).utf8), replace: true)
    }

    /// Whether every sealed file opens with `key` (identities and the unused slot): how many
    /// opened, and how many there are.
    public static func opens(with key: SecretBytes, directory: String) throws(KeystoreError) -> (opened: Int, total: Int) {
        let dir = try SecureDirectory(path: directory, create: true)
        defer { dir.close() }
        return try opens(with: key, in: dir)
    }

    /// ``opens(with:directory:)`` on a directory already open: the recovery key's import checks
    /// the same before it writes.
    static func opens(with key: SecretBytes, in dir: SecureDirectory) throws(KeystoreError) -> (opened: Int, total: Int) {
        let names = try identityClientIds(in: dir).map { $0 + ".identity" }
            + (try dir.read(unusedName, maxBytes: maxFileBytes) == nil ? [] : [unusedName])
        var opened = 0
        for name in names {
            guard let bytes = try dir.read(name, maxBytes: maxFileBytes) else { continue }
            let clientId = name == unusedName ? nil : String(name.dropLast(".identity".count))
            if (try? IdentityRecord.open(bytes, masterKey: key, expectedClientId: clientId)) != nil { opened += 1 }
        }
        return (opened, names.count)
    }
}
