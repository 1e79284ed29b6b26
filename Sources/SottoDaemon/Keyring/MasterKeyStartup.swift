import ControlProtocol
import DaemonLogging
import Foundation
import ServiceLifecycle
import SharedStore
import SottoCrypto
import SottoWire

/// How the daemon gets the keystore's master key at start (docs/adr/0045), and where it
/// leaves it for the worker.
///
/// `SOTTO_KEY_STORE=keyring` (the default): the key lives in the user's Secret Service; the
/// daemon reads it there (or moves an old `master.key` there, or makes the first key of a
/// new install there) and copies it into the kernel keyring, where the sandboxed worker
/// reads it. While the Secret Service is locked, absent or has no default collection to store
/// in (docs/adr/0060) the daemon waits, saying why in
/// `<runtime>/keyring-wait` and systemd's STATUS=; it never makes a new key over sealed
/// identities. `SOTTO_KEY_STORE=credential`: the systemd credential `sotto-keystore-key` the
/// unit received (docs/adr/0054: a headless machine; the worker's unit receives it too); an
/// old `master.key` holding the same key is wiped, one holding another is refused.
/// `SOTTO_KEY_STORE=file`: `keystore/master.key`, as asked.
///
/// ```swift
/// let keystore = try await MasterKeyStartup(group: group, runtime: runtime, environment: env).openKeystore()
/// ```
struct MasterKeyStartup {
    enum Mode: String { case keyring, credential, file }

    /// Start-up cannot go on: a garbage entry, a key file that disagrees with the keyring,
    /// sealed identities without their key. Nothing was changed.
    struct Refusal: Error, CustomStringConvertible { let description: String }
    /// A stop arrived while waiting for the keyring.
    struct Stopped: Error {}

    let group: GroupDirectory
    let runtime: RuntimeDirectory
    let environment: [String: String]

    static func mode(_ environment: [String: String]) throws(Refusal) -> Mode {
        guard let text = environment["SOTTO_KEY_STORE"], !text.isEmpty else { return .keyring }
        guard let mode = Mode(rawValue: text) else {
            throw Refusal(description: "SOTTO_KEY_STORE=\(text): expected keyring, credential or file")
        }
        return mode
    }

    /// The sentence `sotto status` shows about the key.
    static func statusText(_ source: MasterKeySource, keystore: String) -> String {
        switch source {
        case .keyFile:
            return "in a key file, \(keystore)/master.key (SOTTO_KEY_STORE=file): anyone who can read the group "
                + "directory or a copy of it can open every identity"
        case .credential:
            return "from the systemd credential \(Keystore.credentialName) (SOTTO_KEY_STORE=credential)"
        case .kernelKeyring:
            return "in the Secret Service; the worker reads it from the kernel keyring"
        }
    }

    func openKeystore(notifier: SystemdNotifier? = nil) async throws -> Keystore {
        let directory = group.keystorePath
        switch try Self.mode(environment) {
        case .file:
            return try Keystore(directory: directory, environment: environment, createIfMissing: true)
        case .credential:
            return try keystoreFromCredential(directory: directory)
        case .keyring:
            let key = try await keyFromSecretService(directory: directory, notifier: notifier)
            if let old = try Keystore.keyFileKey(directory: directory), !old.isEqual(to: key) {
                throw Refusal(description: "\(directory)/master.key holds another key than the Secret Service has for "
                    + "\(group.path); nothing was changed. Keep the one that opens your identities: `sotto key export` "
                    + "with SOTTO_KEY_STORE=file shows the file's, then remove the other")
            }
            let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: directory))
            let serial = try ring.store(key)
            try Keystore.recordKernelKeySerial(serial, directory: directory)
            // Only once the key is in both keyrings: the old file goes (a kill before leaves it
            // for the next start, which finds the same key in the Secret Service and finishes).
            if try Keystore.wipeKeyFile(directory: directory) {
                DaemonLog.info("master key moved from \(directory)/master.key into the Secret Service; the file was "
                    + "overwritten and removed")
            }
            return try Keystore(directory: directory, masterKey: key, source: .kernelKeyring)
        }
    }

    /// The credential's key, never a key file: none is made, and an old one goes once it is
    /// known to hold the same key (a move from `--key-store file`).
    private func keystoreFromCredential(directory: String) throws -> Keystore {
        guard let credentials = environment["CREDENTIALS_DIRECTORY"], !credentials.isEmpty else {
            throw Refusal(description: "SOTTO_KEY_STORE=credential, but this process received no credentials "
                + "($CREDENTIALS_DIRECTORY is not set): sotto.service needs LoadCredential=\(Keystore.credentialName) "
                + "(sotto install --user --key-store credential) and your service manager the credential itself "
                + "(docs/adr/0054)")
        }
        let keystore: Keystore
        do {
            keystore = try Keystore(directory: directory, environment: environment, createIfMissing: true)
        } catch {
            throw Refusal(description: "the systemd credential \(credentials)/\(Keystore.credentialName): \(error) "
                + "(docs/adr/0054 has the administrator's step that gives it to your service manager)")
        }
        if let old = try Keystore.keyFileKey(directory: directory) {
            guard keystore.masterKeyIsEqual(to: old) else {
                throw Refusal(description: "\(directory)/master.key holds another key than the systemd credential "
                    + "\(Keystore.credentialName); nothing was changed. Keep the one that opens your identities: "
                    + "`sotto key export` with SOTTO_KEY_STORE=file shows the file's, then remove the other")
            }
            if try Keystore.wipeKeyFile(directory: directory) {
                DaemonLog.info("master key: \(directory)/master.key held the credential's key; the file was overwritten and removed")
            }
        }
        return keystore
    }

    private func keyFromSecretService(directory: String, notifier: SystemdNotifier?) async throws -> SecretBytes {
        let service = SecretService(group: group.path, timeoutMs: Int32(Self.timeoutMs(environment)))
        let note = KeyringWaitNote(runtime: runtime)
        var waiting: String?
        while true {
            let found: SecretBytes?
            var lookup = service.lookup()
            if case .notFound = lookup { lookup = try firstKey(directory: directory, service: service) }
            switch lookup {
            case .found(let key): found = key
            case .notFound: found = nil  // firstKey never answers so
            case .garbage(let reason): throw Refusal(description: reason)
            case .noDefaultCollection:
                found = nil
                waiting = announceWait(SecretService.noDefaultCollectionAdvice + "; sotto continues once a default "
                    + "keyring exists", previous: waiting, note: note, notifier: notifier)
            case .locked(let reason):
                found = nil
                waiting = announceWait("the keyring that holds the master key is locked (\(reason)); "
                    + "unlock it and sotto continues", previous: waiting, note: note, notifier: notifier)
            case .unreachable(let reason):
                found = nil
                waiting = announceWait("no Secret Service answers (\(reason)); start one (GNOME Keyring, KWallet, "
                    + "KeePassXC) or set SOTTO_KEY_STORE=file to keep the key in a file", previous: waiting, note: note,
                    notifier: notifier)
            }
            if found == nil, let kept = try Keystore.kernelKeyringKey(directory: directory) {
                // A restart while the Secret Service is locked: the copy this user's kernel
                // keyring still holds (it is gone after a boot) is the same key.
                DaemonLog.info("the Secret Service does not answer or is locked; using the master key already in the kernel keyring")
                note.remove()
                return kept
            }
            if let found {
                if waiting != nil { DaemonLog.info("the keyring answers: master key found, starting") }
                note.remove()
                return found
            }
            // READY=1 was sent with the wait's status: systemd's watchdog now expects pings.
            notifier?.watchdog()
            let retry = Duration.milliseconds(Self.retryMs(environment))
            let pause = notifier?.watchdogInterval.map { min($0, retry) } ?? retry
            do {
                try await cancelWhenGracefulShutdown { try await Task.sleep(for: pause) }
            } catch {
                note.remove()
                throw Stopped()
            }
        }
    }

    /// Nothing in the Secret Service: the old key file moves there, or a new install gets its
    /// first key there (`.found`). `.noDefaultCollection`, `.locked` or `.unreachable` when
    /// the Secret Service cannot keep it yet: the caller waits, and nothing was changed.
    private func firstKey(directory: String, service: SecretService) throws -> SecretService.Lookup {
        if let old = try Keystore.keyFileKey(directory: directory) {
            if let wait = try store(old, in: service) { return wait }
            CrashPoint.reach("keyring.keyStored")
            return .found(try verified(old, in: service))
        }
        let sealed = try Keystore.sealedIdentityCount(directory: directory)
        guard sealed == 0 else {
            throw Refusal(description: "the Secret Service has no master key for \(group.path) while \(sealed) sealed "
                + "identities exist in \(directory) (was the keyring changed or reset?); sotto will not create a new key, "
                + "which could never open them. Import your recovery key (sotto key import), then start sotto again")
        }
        try Keystore.discardUnusedSlot(directory: directory)
        let fresh = SecretBytes(SecureRandom.bytes(32))
        if let wait = try store(fresh, in: service) { return wait }
        DaemonLog.info("created the master key in the Secret Service")
        return .found(try verified(fresh, in: service))
    }

    /// Nil once stored; else the state to wait in, as for a lookup: no default collection, one
    /// that is locked (a fresh install after a boot that left the login keyring locked:
    /// nothing to find, nowhere to write), or a service that went away meanwhile.
    private func store(_ key: SecretBytes, in service: SecretService) throws -> SecretService.Lookup? {
        do throws(SecretService.Failure) {
            try service.store(key)
            return nil
        } catch let failure where failure.state != nil {
            return failure.state
        } catch {
            throw Refusal(description: "cannot keep the master key in the Secret Service: \(error)")
        }
    }

    /// What was stored reads back as the same key, or start-up stops before anything is wiped.
    private func verified(_ key: SecretBytes, in service: SecretService) throws -> SecretBytes {
        guard case .found(let back) = service.lookup(), back.isEqual(to: key) else {
            throw Refusal(description: "the master key stored in the Secret Service did not read back; nothing was removed")
        }
        return key
    }

    private func announceWait(_ reason: String, previous: String?, note: KeyringWaitNote,
                              notifier: SystemdNotifier?) -> String {
        guard reason != previous else { return reason }
        DaemonLog.warning("waiting for the master key: \(reason)")
        note.write("waiting for the master key: " + reason)
        // Ready (the unit is up), and systemctl status says why it does not serve yet.
        notifier?.ready(status: "waiting for the master key: " + reason)
        return reason
    }

    /// Removes this daemon's kernel keyring copy of the key (at a clean stop).
    static func forgetKernelCopy(keystoreDirectory: String) {
        let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: keystoreDirectory))
        if let serial = ring.search() { ring.invalidate(serial: serial) }
    }

    static func retryMs(_ environment: [String: String]) -> Int {
        environment["SOTTO_KEYRING_RETRY_MS"].flatMap(Int.init).map { max(10, min($0, 60_000)) } ?? 2_000
    }

    static func timeoutMs(_ environment: [String: String]) -> Int {
        environment["SOTTO_KEYRING_TIMEOUT_MS"].flatMap(Int.init).map { max(50, min($0, 30_000)) } ?? 5_000
    }
}
