import Foundation
import TestSupport
import Testing
import SottoCrypto
import SottoWire

/// The worker's side of docs/adr/0045: the master key read from the kernel keyring the
/// daemon filled, and every kind of garbage there refused without a crash or a guess.
@Suite("Keystore: the master key from the kernel keyring", .serialized)
struct KernelKeyringTests {
    /// A keystore made with a key file, whose key then moves to the kernel keyring.
    func withKernelKey(_ body: (String, SecretBytes, KernelKeyring) throws -> Void) throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let dir = temp.path + "/keystore"
        let identity = Identity.generate()
        let key: SecretBytes
        do {
            let keystore = try Keystore(directory: dir, environment: [:], createIfMissing: true)
            try keystore.save(identity)
            key = try #require(try Keystore.keyFileKey(directory: dir))
        }
        let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: dir))
        defer { if let serial = ring.search() { ring.invalidate(serial: serial) } }
        try body(dir, key, ring)
    }

    /// The reason of a `.locked` error `body` throws; nil when it throws anything else or nothing.
    static func lockedReason(_ body: () throws -> Void) -> String? {
        do {
            try body()
        } catch let error as KeystoreError {
            if case .locked(let reason) = error { return reason }
        } catch {}
        return nil
    }

    @Test("a reader takes the key from the kernel keyring, before a key file")
    func readsKernelKey() throws {
        try withKernelKey { dir, key, ring in
            _ = try ring.store(key)
            let wiped = try Keystore.wipeKeyFile(directory: dir)
            #expect(wiped)
            let keystore = try Keystore(directory: dir, environment: [:])
            #expect(keystore.masterKeySource == .kernelKeyring)
            #expect(try keystore.list().count == 1)
            #expect(keystore.recoveryKey() == RecoveryKey.encode(key))
        }
    }

    @Test("no key anywhere is locked (retryable), not unavailable")
    func lockedWhenEmpty() throws {
        try withKernelKey { dir, _, _ in
            let wiped = try Keystore.wipeKeyFile(directory: dir)
            #expect(wiped)
            #expect(Self.lockedReason { _ = try Keystore(directory: dir, environment: [:]) }?.contains("kernel keyring") == true)
        }
    }

    @Test("a kernel keyring entry of the wrong size is corrupt, not a key")
    func wrongSize() throws {
        try withKernelKey { dir, _, ring in
            for size in [0, 16, 31, 33, 64] {
                _ = try ring.store(SecretBytes([UInt8](repeating: 7, count: max(size, 1))))
                if size == 0 { continue }  // add_key refuses an empty user key; 1 byte stands in
                #expect(throws: KeystoreError.self) { try Keystore(directory: dir, environment: [:]) }
            }
            // The key file is still there and untouched: garbage in the keyring changed nothing.
            #expect(try Keystore.keyFileKey(directory: dir) != nil)
        }
    }

    @Test("a planted or stale keyring.serial is ignored: another key, garbage, a huge number")
    func garbageSerialFile() throws {
        try withKernelKey { dir, key, _ in
            let other = KernelKeyring(description: "sotto:master-key:/somewhere/else")
            let otherSerial = try other.store(SecretBytes(SecureRandom.bytes(32)))
            defer { other.invalidate(serial: otherSerial) }
            let wiped = try Keystore.wipeKeyFile(directory: dir)
            #expect(wiped)
            for planted in [String(otherSerial), "abc", "99999999999", "-4", "", "1\n2"] {
                let path = dir + "/" + MasterKeySource.serialFileName
                _ = FileManager.default.createFile(atPath: path, contents: Data(planted.utf8), attributes: [.posixPermissions: 0o600])
                #expect(Self.lockedReason { _ = try Keystore(directory: dir, environment: [:]) } != nil, "\(planted)")
            }
            // The right serial (what the daemon writes) works from the file alone.
            try Keystore.recordKernelKeySerial(try KernelKeyring(description: KernelKeyring.description(keystoreDirectory: dir))
                .store(key), directory: dir)
            #expect(try Keystore(directory: dir, environment: [:]).masterKeySource == .kernelKeyring)
        }
    }
}
