import SottoWire

/// Where a keystore's master key came from (docs/adr/0045). Readers (the worker, the CLI)
/// try them in this order and take the first that has the key:
///
/// 1. `kernelKeyring`: the user keyring entry the daemon filled, found in the reader's own
///    `@u` or, from another user namespace, by the serial the daemon wrote to
///    `keystore/keyring.serial`;
/// 2. `credential`: `$CREDENTIALS_DIRECTORY/sotto-keystore-key` (a systemd credential);
/// 3. `keyFile`: `keystore/master.key`, there only when the user asked for it
///    (`SOTTO_KEY_STORE=file`) or not yet migrated.
///
/// None of them: `.locked`, which the worker answers as a retryable `internal`.
///
/// ```swift
/// let (key, source) = try MasterKeySource.read(keystoreDirectory: dir, environment: env)
/// ```
public enum MasterKeySource: String, Sendable, Equatable {
    case kernelKeyring = "kernel keyring"
    case credential = "systemd credential"
    case keyFile = "key file"

    /// The file in the keystore directory where the daemon leaves the kernel key's serial.
    public static let serialFileName = "keyring.serial"

    /// The first source that has the key, or `.locked` when none has.
    public static func read(keystoreDirectory: String,
                            environment: [String: String]) throws(KeystoreError) -> (SecretBytes, MasterKeySource) {
        let dir = try SecureDirectory(path: keystoreDirectory, create: false)
        defer { dir.close() }
        return try read(dir: dir, environment: environment)
    }

    static func read(dir: SecureDirectory, environment: [String: String]) throws(KeystoreError) -> (SecretBytes, MasterKeySource) {
        if let key = try readKernelKeyring(dir: dir) { return (key, .kernelKeyring) }
        if let credentials = environment["CREDENTIALS_DIRECTORY"], !credentials.isEmpty {
            guard var bytes = try SecureDirectory.readFile(atPath: credentials + "/" + Keystore.credentialName, maxBytes: 128) else {
                throw .unavailable("credential \(Keystore.credentialName) is missing")
            }
            defer { SecretBytes.zero(&bytes) }
            return (try Keystore.parseMasterKey(bytes, source: "credential \(Keystore.credentialName)"), .credential)
        }
        if var bytes = try dir.read(Keystore.masterKeyName, maxBytes: 128) {
            defer { SecretBytes.zero(&bytes) }
            return (try Keystore.parseMasterKey(bytes, source: Keystore.masterKeyName), .keyFile)
        }
        throw .locked("the master key of \(dir.path) is not in the kernel keyring (the daemon puts it there once "
            + "the Secret Service is unlocked) and there is no key file")
    }

    /// The daemon's entry for this directory: in the reader's own `@u` (same user namespace),
    /// else by the serial the daemon recorded (a sandboxed worker's `@u` is another keyring).
    static func readKernelKeyring(dir: SecureDirectory) throws(KeystoreError) -> SecretBytes? {
        let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: dir.path))
        if let serial = ring.search(), let key = try ring.read(serial: serial) { return key }
        guard let text = try dir.read(serialFileName, maxBytes: 16),
              let serial = Int32(String(decoding: text, as: UTF8.self)), serial > 0 else { return nil }
        return try ring.read(serial: serial)
    }
}
