import Foundation

/// `sotto install --user --key-store keyring|file|credential`: the choice of where the daemon
/// keeps the master key (docs/adr/0045), as drop-ins next to the installed units, so an
/// upgrade (which rewrites the units) keeps it.
///
/// - keyring: no drop-in (the Secret Service, the default);
/// - file: `sotto.service.d/key-store.conf` says `SOTTO_KEY_STORE=file`;
/// - credential: both the daemon's and the worker's drop-ins take the `sotto-keystore-key`
///   credential that the user's service manager received (`LoadCredential=` without a path;
///   PID 1 decrypts it for user@UID.service: docs/adr/0054).
///
/// ```swift
/// print(try KeyStoreDropIn(unitDirectory: units).apply("credential"))
/// ```
struct KeyStoreDropIn {
    let unitDirectory: URL

    static let modes = ["keyring", "file", "credential"]

    var daemonDropIn: URL { unitDirectory.appendingPathComponent("sotto.service.d/key-store.conf") }
    var workerDropIn: URL { unitDirectory.appendingPathComponent("sotto-push@.service.d/key-store.conf") }

    /// Writes or removes the drop-ins; returns what it did.
    func apply(_ keyStore: String) throws -> String {
        switch keyStore {
        case "file":
            try remove(workerDropIn)
            try write(daemonDropIn, """
                # Written by `sotto install --user --key-store file` (docs/adr/0045): the master key stays in
                # keystore/master.key, readable by anyone who can read the group directory or a copy of it.
                [Service]
                Environment=SOTTO_KEY_STORE=file

                """)
            return "wrote \(daemonDropIn.path): the master key stays in a file (sotto status says so)"
        case "credential":
            let credential = """
                # The credential sotto-keystore-key that this user's service manager received (LoadCredential=
                # without a path): PID 1 decrypts it for user@UID.service (docs/adr/0054).
                LoadCredential=sotto-keystore-key
                """
            try write(daemonDropIn, """
                # Written by `sotto install --user --key-store credential` (docs/adr/0054).
                [Service]
                Environment=SOTTO_KEY_STORE=credential
                \(credential)

                """)
            try write(workerDropIn, """
                # Written by `sotto install --user --key-store credential` (docs/adr/0054).
                [Service]
                \(credential)

                """)
            return "wrote \(daemonDropIn.path) and \(workerDropIn.path): the master key is the systemd credential "
                + "sotto-keystore-key of your service manager (docs/adr/0054 has the administrator's step)"
        default:
            let removed = try [daemonDropIn, workerDropIn].filter { try remove($0) }
            guard !removed.isEmpty else { return "master key: in the Secret Service" }
            return "removed \(removed.map(\.path).joined(separator: " and ")): the master key moves into the Secret "
                + "Service at the next start"
        }
    }

    private func write(_ url: URL, _ text: String) throws {
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url, options: .atomic)
    }

    /// Whether there was one to remove.
    @discardableResult
    private func remove(_ url: URL) throws -> Bool {
        guard FileManager.default.fileExists(atPath: url.path) else { return false }
        try FileManager.default.removeItem(at: url)
        try? FileManager.default.removeItem(at: url.deletingLastPathComponent())  // only when empty
        return true
    }
}
