import SharedStore
import SottoCrypto
import SottoWire

/// `sotto key export|import` wherever the master key lives (docs/adr/0038, 0043): export
/// reads it from the kernel keyring, the Secret Service or the key file; import puts it in
/// the Secret Service (or, with `SOTTO_KEY_STORE=file`, the key file), only when it opens
/// every sealed identity.
///
/// ```swift
/// let recovery = MasterKeyRecovery(group: group, environment: env)
/// print(try recovery.recoveryKey())
/// ```
public struct MasterKeyRecovery: Sendable {
    public enum Outcome: Equatable, Sendable {
        case installed(opened: Int)
        case alreadyInPlace(opened: Int)
        case storedInKeyring(opened: Int)
    }

    public struct Failure: Error, CustomStringConvertible { public let description: String }

    let group: GroupDirectory
    let environment: [String: String]

    public init(group: GroupDirectory, environment: [String: String]) {
        self.group = group
        self.environment = environment
    }

    public func recoveryKey() throws -> String {
        do throws(KeystoreError) {
            return try Keystore(directory: group.keystorePath, environment: environment).recoveryKey()
        } catch .locked(let reason) {
            switch SecretService(group: group.path, timeoutMs: Int32(MasterKeyStartup.timeoutMs(environment))).lookup() {
            case .found(let key): return RecoveryKey.encode(key)
            case .notFound, .noDefaultCollection:
                throw Failure(description: "no master key in the Secret Service either (\(reason))")
            case .locked(let why), .unreachable(let why), .garbage(let why): throw Failure(description: why)
            }
        }
    }

    /// After the data was deleted: removes the key from the Secret Service and the kernel
    /// keyring. Returns what it did, or nil when there was nothing (or no Secret Service).
    public func forgetKey() -> String? {
        MasterKeyStartup.forgetKernelCopy(keystoreDirectory: group.keystorePath)
        let service = SecretService(group: group.path, timeoutMs: Int32(MasterKeyStartup.timeoutMs(environment)))
        do {
            return try service.clear() ? "removed the master key of \(group.path) from the Secret Service" : nil
        } catch {
            return "the master key of \(group.path) may still be in the Secret Service (\(error)); "
                + "remove it with: secret-tool clear application sotto group \(group.path)"
        }
    }

    public func importKey(_ key: SecretBytes) throws -> Outcome {
        if try MasterKeyStartup.mode(environment) == .file {
            switch try Keystore.importMasterKey(key, directory: group.keystorePath) {
            case .installed(let opened): return .installed(opened: opened)
            case .alreadyInPlace(let opened): return .alreadyInPlace(opened: opened)
            }
        }
        let (opened, total) = try Keystore.opens(with: key, directory: group.keystorePath)
        guard opened == total else {
            throw Failure(description: "this recovery key opens \(opened) of the \(total) sealed identities in "
                + "\(group.keystorePath): it is not the key they were sealed with; nothing was changed")
        }
        let service = SecretService(group: group.path, timeoutMs: Int32(MasterKeyStartup.timeoutMs(environment)))
        switch service.lookup() {
        case .found(let existing):
            guard existing.isEqual(to: key) else {
                throw Failure(description: "the Secret Service holds another master key for \(group.path); nothing was "
                    + "changed (remove it with: secret-tool clear application sotto group \(group.path))")
            }
            return .alreadyInPlace(opened: opened)
        case .notFound, .garbage:
            break
        case .locked(let why), .unreachable(let why):
            throw Failure(description: "cannot reach the keyring: \(why); nothing was changed")
        case .noDefaultCollection:
            throw Failure(description: "\(SecretService.noDefaultCollectionAdvice); nothing was changed")
        }
        do {
            try service.store(key)
        } catch {
            throw Failure(description: "\(error); nothing was changed")
        }
        return .storedInKeyring(opened: opened)
    }
}
