import Foundation

/// `sotto install --user --key-store file|keyring`: the choice of where the daemon keeps the
/// master key (docs/adr/0045), as a drop-in next to the installed sotto.service, so an
/// upgrade (which rewrites the unit) keeps it.
///
/// ```swift
/// print(try KeyStoreDropIn(unitDirectory: units).apply("file"))
/// ```
struct KeyStoreDropIn {
    let unitDirectory: URL

    var path: URL { unitDirectory.appendingPathComponent("sotto.service.d/key-store.conf") }

    /// Writes (file) or removes (keyring) the drop-in; returns what it did.
    func apply(_ keyStore: String) throws -> String {
        guard keyStore == "file" else {
            guard FileManager.default.fileExists(atPath: path.path) else { return "master key: in the Secret Service" }
            try FileManager.default.removeItem(at: path)
            try? FileManager.default.removeItem(at: path.deletingLastPathComponent())  // only when empty
            return "removed \(path.path): the master key moves into the Secret Service at the next start"
        }
        try FileManager.default.createDirectory(at: path.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("""
            # Written by `sotto install --user --key-store file` (docs/adr/0045): the master key stays in
            # keystore/master.key, readable by anyone who can read the group directory or a copy of it.
            [Service]
            Environment=SOTTO_KEY_STORE=file

            """.utf8).write(to: path, options: .atomic)
        return "wrote \(path.path): the master key stays in a file (sotto status says so)"
    }
}
