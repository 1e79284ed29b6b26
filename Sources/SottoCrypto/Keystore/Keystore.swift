#if canImport(Glibc)
import Glibc
import SottoWire
#endif
import Synchronization

/// The file keystore (`<group>/keystore/`): one sealed file per identity, readable by many
/// processes at once, written atomically by one.
///
/// Layout: `<clientId>.identity` (the sealed `IdentityRecord`), `<inboxId>.inbox` (the
/// clientId, so a lookup by inboxId opens two small files and never scans),
/// `unused.identity` (the pre-generated inbox slot), `master.key` (unless systemd passes the
/// key as the `sotto-keystore-key` credential). Directory 0700, files 0600, all owned by the
/// effective user; anything else is refused as `insecure`.
///
/// ```swift
/// let keystore = try Keystore(directory: group + "/keystore", createIfMissing: true)   // daemon
/// try keystore.save(Identity.generate())
/// let me = try keystore.identity(clientId: push.clientId)                             // worker
/// ```
public final class Keystore: Sendable {
    public static let credentialName = "sotto-keystore-key"
    static let masterKeyName = "master.key"
    static let unusedName = "unused.identity"
    static let maxFileBytes = 4096

    public let directory: String
    private let dir: SecureDirectory
    let masterKey: SecretBytes

    /// Where `masterKey` came from; `sotto status` names it.
    public let masterKeySource: MasterKeySource

    /// One operation on the unused slot at a time in this process. The daemon claims the slot
    /// for a new conversation while its refill writes the next identity into it; unserialized,
    /// the refill's rename could land between the claim's read and its move, and the claimed
    /// clientId's file would hold the next identity (`claimRacingRefillsNeverMovesTheNextIdentity`).
    /// Only the daemon touches the slot, so a lock in the process is enough.
    private let slotLock = Mutex(())

    /// Opens the keystore and loads its master key. A reader (`createIfMissing` false: the
    /// worker, the CLI) takes it from the first `MasterKeySource` that has it and gets
    /// `.locked` when none has. The daemon in key-file mode (`SOTTO_KEY_STORE=file`) passes
    /// `createIfMissing`: `$CREDENTIALS_DIRECTORY/sotto-keystore-key`, else `master.key`,
    /// created when there is none and nothing is sealed yet.
    public init(directory: String, environment: [String: String] = Keystore.processEnvironment(),
                createIfMissing: Bool = false) throws(KeystoreError) {
        let dir = try SecureDirectory(path: directory, create: createIfMissing)
        do {
            if createIfMissing {
                (masterKey, masterKeySource) = try Self.loadOrCreateKeyFile(dir: dir, environment: environment)
            } else {
                (masterKey, masterKeySource) = try MasterKeySource.read(dir: dir, environment: environment)
            }
        } catch {
            dir.close()
            throw error
        }
        self.dir = dir
        self.directory = directory
    }

    /// Opens the keystore with a master key the caller already holds (the daemon's, from the
    /// Secret Service: docs/adr/0045), creating the directory if needed.
    public init(directory: String, masterKey: SecretBytes, source: MasterKeySource) throws(KeystoreError) {
        guard masterKey.count == 32 else { throw .unavailable("a master key has 32 bytes") }
        dir = try SecureDirectory(path: directory, create: true)
        self.directory = directory
        self.masterKey = masterKey
        self.masterKeySource = source
    }

    deinit { dir.close() }

    /// The variables the keystore reads, from the process environment (no Foundation).
    public static func processEnvironment() -> [String: String] {
        ProcessEnvironment.current(only: ["CREDENTIALS_DIRECTORY"])
    }

    // MARK: - Identities

    /// Stores a new identity. `.duplicateClientId` if its clientId already has a file, unless
    /// `overwrite` (then the file is atomically replaced: readers see the old or the new one).
    public func save(_ identity: Identity, overwrite: Bool = false) throws(KeystoreError) {
        guard ProtocolIds.isClientId(identity.clientId) else { throw .corrupt("clientId is not a lowercase UUID") }
        var record = try IdentityRecord.seal(identity, masterKey: masterKey)
        defer { SecretBytes.zero(&record) }
        guard try dir.writeAtomically(Self.fileName(clientId: identity.clientId), record, replace: overwrite) else {
            throw .duplicateClientId
        }
        try dir.writeAtomically(Self.aliasName(inboxId: identity.inboxId), Array(identity.clientId.utf8), replace: true)
    }

    /// `.missing` when no identity has this clientId (including a string that is not a clientId).
    public func identity(clientId: String) throws(KeystoreError) -> Identity {
        guard ProtocolIds.isClientId(clientId) else { throw .missing }
        let name = Self.fileName(clientId: clientId)
        guard var bytes = try dir.read(name, maxBytes: Self.maxFileBytes) else {
            throw .missing
        }
        defer { SecretBytes.zero(&bytes) }
        do {
            return try IdentityRecord.open(bytes, masterKey: masterKey, expectedClientId: clientId)
        } catch .corrupt(let reason) {
            // `delete` renames a file away before zeroing it: a reader that opened it just
            // before sees zeros, but by then the name is gone. That is a deletion, not damage.
            if try dir.read(name, maxBytes: Self.maxFileBytes) == nil { throw .missing }
            throw .corrupt(reason)
        }
    }

    public func identity(inboxId: String) throws(KeystoreError) -> Identity {
        let clientId = try clientId(forInboxId: inboxId)
        let identity = try identity(clientId: clientId)
        // A stale or planted alias never yields another inbox's identity.
        guard identity.inboxId == inboxId else { throw .missing }
        return identity
    }

    /// Zeroes the identity file on disk, fsyncs, unlinks it and its alias, fsyncs the directory.
    public func delete(inboxId: String) throws(KeystoreError) {
        let clientId = try clientId(forInboxId: inboxId)
        let name = Self.fileName(clientId: clientId)
        if let bytes = try dir.read(name, maxBytes: Self.maxFileBytes) {
            // Only wipe a file that claims this inbox (its content may be corrupt; its header decides).
            guard IdentityRecord.claimedIds(bytes)?.inboxId == inboxId else { throw .missing }
            try wipeAfterUnlinking(name)
        }
        try wipeAfterUnlinking(Self.aliasName(inboxId: inboxId))
    }

    /// The same wipe when both ids are known (a tombstone, ADR 0016): needs no alias, so it
    /// also finishes a deletion that a crash interrupted after the alias was gone. Idempotent:
    /// files already gone are skipped. The ids come from the database, not from an alias, so
    /// the file is wiped even when its header is unreadable; only one whose header claims
    /// another inbox is left alone.
    public func delete(clientId: String, inboxId: String) throws(KeystoreError) {
        guard ProtocolIds.isClientId(clientId), ProtocolIds.isInboxId(inboxId) else { throw .missing }
        let name = Self.fileName(clientId: clientId)
        if let bytes = try dir.read(name, maxBytes: Self.maxFileBytes),
           (IdentityRecord.claimedIds(bytes)?.inboxId ?? inboxId) == inboxId {
            try wipeAfterUnlinking(name)
        }
        CrashPoint.reach("keystore.identityWiped")
        try wipeAfterUnlinking(Self.aliasName(inboxId: inboxId))
    }

    /// Wipes what a process killed mid-operation left behind: `.deleted-*` (a wipe in
    /// progress), `.taken-*` (a taken unused slot) and `.tmp-*` (an atomic write). Only the
    /// daemon calls it, at start-up, before anything else writes the keystore. Returns how
    /// many it wiped.
    ///
    /// A leftover that has another name in the keystore is only unlinked: a `.tmp-*` that
    /// `writeAtomically` had already linked into place when it was killed (or whose unlink a
    /// power cut lost) is the identity's or `master.key`'s own inode, and zeroing it would
    /// zero them.
    ///
    /// An unused slot that is a second name of a named identity is a claim (`claimUnused`)
    /// killed between its link and its unlink: the claim is finished by removing the slot's
    /// name. Left there, the slot would be handed out again (`duplicateClientId` at every
    /// claim) and a `takeUnused` would zero the claimed identity through it.
    @discardableResult
    public func sweepLeftovers() throws(KeystoreError) -> Int {
        var wiped = 0
        for name in try dir.names() where Self.leftoverPrefixes.contains(where: { name.hasPrefix($0) }) {
            let removed = try dir.hasOtherName(name) ? try dir.unlinkName(name) : try dir.wipe(name)
            if removed { wiped += 1 }
        }
        if try dir.hasOtherName(Self.unusedName), try dir.unlinkName(Self.unusedName) { wiped += 1 }
        return wiped
    }

    static let leftoverPrefixes = [".deleted-", ".taken-", ".tmp-"]

    /// Takes `name` out of the namespace (an atomic rename to a private name) before zeroing
    /// it, so a concurrent lookup finds either the whole file or no file: never the zeros
    /// of a wipe in progress under the real name.
    private func wipeAfterUnlinking(_ name: String) throws(KeystoreError) {
        let doomed = ".deleted-" + Hex.encode(SecureRandom.bytes(8))
        guard try dir.rename(name, to: doomed) else { return }
        _ = try dir.wipe(doomed)
    }

    /// Every stored identity (this one does scan the directory). Throws on the first bad file.
    public func list() throws(KeystoreError) -> [Identity] {
        var out: [Identity] = []
        for clientId in try identityClientIds() {
            do {
                out.append(try identity(clientId: clientId))
            } catch .missing {
                continue   // deleted while listing
            }
        }
        return out
    }

    /// The clientIds that have an identity file (sorted; the unused slot is not one).
    func identityClientIds() throws(KeystoreError) -> [String] {
        try Self.identityClientIds(in: dir)
    }

    static func identityClientIds(in dir: SecureDirectory) throws(KeystoreError) -> [String] {
        try dir.names().sorted().compactMap { name in
            guard name.hasSuffix(".identity"), name != unusedName else { return nil }
            let clientId = String(name.dropLast(".identity".count))
            return ProtocolIds.isClientId(clientId) ? clientId : nil
        }
    }

    // MARK: - Unused inbox slot

    /// Puts a pre-generated identity in the slot, replacing any identity already there.
    public func storeUnused(_ identity: Identity) throws(KeystoreError) {
        try slotLock.withLock { _ throws(KeystoreError) in try storeUnusedLocked(identity) }
    }

    private func storeUnusedLocked(_ identity: Identity) throws(KeystoreError) {
        var record = try IdentityRecord.seal(identity, masterKey: masterKey)
        defer { SecretBytes.zero(&record) }
        try dir.writeAtomically(Self.unusedName, record, replace: true)
    }

    /// Takes the identity out of the slot, or nil if it is empty. Atomic: the slot file is
    /// renamed to a private name first, so of two concurrent takers exactly one gets it.
    public func takeUnused() throws(KeystoreError) -> Identity? {
        try slotLock.withLock { _ throws(KeystoreError) in try takeUnusedLocked() }
    }

    private func takeUnusedLocked() throws(KeystoreError) -> Identity? {
        let taken = ".taken-" + Hex.encode(SecureRandom.bytes(8))
        guard try dir.rename(Self.unusedName, to: taken) else { return nil }
        // A slot whose claim was interrupted is the claimed identity's own inode: its name goes,
        // its bytes stay (see `sweepLeftovers`).
        if try dir.hasOtherName(taken) {
            _ = try dir.unlinkName(taken)
            return nil
        }
        defer { _ = try? dir.wipe(taken) }
        guard var bytes = try dir.read(taken, maxBytes: Self.maxFileBytes) else {
            throw .unavailable("the taken unused identity vanished")
        }
        defer { SecretBytes.zero(&bytes) }
        return try IdentityRecord.open(bytes, masterKey: masterKey, expectedClientId: nil)
    }

    /// Makes the identity in the unused slot a regular identity without re-sealing or
    /// rewriting it: its alias is written, the slot file is linked to its clientId name and
    /// unlinked, and the directory is synced once for both (2 fsyncs instead of the 6 of
    /// take + save).
    /// `expectedInboxId` guards against a slot that changed since it was read.
    /// Returns nil when the slot is empty or holds another identity (a refill replaced it):
    /// the caller, who holds the identity it meant, saves it as a new one.
    public func claimUnused(expectedInboxId: String) throws(KeystoreError) -> Identity? {
        try slotLock.withLock { _ throws(KeystoreError) in try claimUnusedLocked(expectedInboxId: expectedInboxId) }
    }

    private func claimUnusedLocked(expectedInboxId: String) throws(KeystoreError) -> Identity? {
        guard var bytes = try dir.read(Self.unusedName, maxBytes: Self.maxFileBytes) else { return nil }
        defer { SecretBytes.zero(&bytes) }
        let identity = try IdentityRecord.open(bytes, masterKey: masterKey, expectedClientId: nil)
        guard identity.inboxId == expectedInboxId else { return nil }
        try dir.writeAtomically(Self.aliasName(inboxId: identity.inboxId), Array(identity.clientId.utf8), replace: true,
                                syncDirectory: false)
        guard try dir.move(Self.unusedName, to: Self.fileName(clientId: identity.clientId)) else {
            throw .duplicateClientId
        }
        try dir.syncDirectory()
        return identity
    }

    /// The identity in the slot, left there; nil if empty.
    public func peekUnused() throws(KeystoreError) -> Identity? {
        try slotLock.withLock { _ throws(KeystoreError) in try peekUnusedLocked() }
    }

    private func peekUnusedLocked() throws(KeystoreError) -> Identity? {
        guard var bytes = try dir.read(Self.unusedName, maxBytes: Self.maxFileBytes) else { return nil }
        defer { SecretBytes.zero(&bytes) }
        return try IdentityRecord.open(bytes, masterKey: masterKey, expectedClientId: nil)
    }

    // MARK: - Names

    static func fileName(clientId: String) -> String { clientId + ".identity" }
    static func aliasName(inboxId: String) -> String { inboxId + ".inbox" }

    private func clientId(forInboxId inboxId: String) throws(KeystoreError) -> String {
        guard ProtocolIds.isInboxId(inboxId) else { throw .missing }
        guard let bytes = try dir.read(Self.aliasName(inboxId: inboxId), maxBytes: 64) else { throw .missing }
        guard let clientId = String(validating: bytes, as: UTF8.self), ProtocolIds.isClientId(clientId) else {
            // Zeros of an alias being deleted (see `wipeAfterUnlinking`): the name is gone by now.
            if try dir.read(Self.aliasName(inboxId: inboxId), maxBytes: 64) == nil { throw .missing }
            throw .corrupt("inbox alias does not hold a clientId")
        }
        return clientId
    }

    // MARK: - Master key

    private static func loadOrCreateKeyFile(dir: SecureDirectory,
                                            environment: [String: String]) throws(KeystoreError) -> (SecretBytes, MasterKeySource) {
        if let credentials = environment["CREDENTIALS_DIRECTORY"], !credentials.isEmpty {
            guard var bytes = try SecureDirectory.readFile(atPath: credentials + "/" + credentialName, maxBytes: 128) else {
                throw .unavailable("credential \(credentialName) is missing")
            }
            defer { SecretBytes.zero(&bytes) }
            return (try parseMasterKey(bytes, source: "credential \(credentialName)"), .credential)
        }
        if var bytes = try dir.read(masterKeyName, maxBytes: 128) {
            defer { SecretBytes.zero(&bytes) }
            return (try parseMasterKey(bytes, source: masterKeyName), .keyFile)
        }
        // A new key could never open what the lost one sealed: refuse rather than make every
        // identity fail authentication (docs/adr/0019).
        let sealed = try identityClientIds(in: dir)
        if !sealed.isEmpty {
            throw .unavailable("\(dir.path)/\(masterKeyName) is missing while \(sealed.count) sealed identities exist in "
                + "\(dir.path); sotto will not create a new key, which could never open them. Import your recovery key "
                + "(sotto key import), or restore \(masterKeyName) from your backup (or pass it as the \(credentialName) "
                + "credential), then start sotto again")
        }
        // Only the unused slot (no conversation yet) was sealed under the lost key: it is worthless.
        _ = try dir.wipe(unusedName)
        var fresh = SecureRandom.bytes(32)
        defer { SecretBytes.zero(&fresh) }
        if try dir.writeAtomically(masterKeyName, fresh, replace: false) {
            return (SecretBytes(fresh), .keyFile)
        }
        // Another process created it first: use theirs.
        guard var bytes = try dir.read(masterKeyName, maxBytes: 128) else {
            throw .unavailable("\(masterKeyName) vanished")
        }
        defer { SecretBytes.zero(&bytes) }
        return (try parseMasterKey(bytes, source: masterKeyName), .keyFile)
    }

    /// 32 raw bytes, or 64 hex characters with an optional trailing newline.
    static func parseMasterKey(_ bytes: [UInt8], source: String) throws(KeystoreError) -> SecretBytes {
        if bytes.count == 32 { return SecretBytes(bytes) }
        var text = bytes
        if text.last == 0x0a { text.removeLast() }
        if text.count == 64, var decoded = Hex.decode(String(decoding: text, as: UTF8.self), count: 32) {
            defer { SecretBytes.zero(&decoded) }
            return SecretBytes(decoded)
        }
        throw .unavailable("\(source) is not a 32-byte key")
    }
}
