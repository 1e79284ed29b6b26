import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// The one-line reason a daemon is waiting for the master key (`<runtime>/keyring-wait`),
/// which `sotto status` prints when the daemon does not answer yet (it serves nothing before
/// it has the key). Removed once the key is there.
///
/// ```swift
/// KeyringWaitNote(runtime: runtime).write("the login keyring is locked")
/// print(KeyringWaitNote(runtime: runtime).read() ?? "not waiting")
/// ```
public struct KeyringWaitNote: Sendable {
    let path: String

    /// How a reason about a Secret Service with no default keyring begins: `sotto status`
    /// then offers no `sotto key import`, which could not store the key either.
    public static let noDefaultKeyring = "the Secret Service has no default keyring"

    public init(runtime: RuntimeDirectory) { path = runtime.path + "/keyring-wait" }

    func write(_ reason: String) {
        try? Data((reason.replacingOccurrences(of: "\n", with: " ") + "\n").utf8).write(to: URL(fileURLWithPath: path),
                                                                                        options: .atomic)
    }

    func remove() { unlink(path) }

    /// The reason, or nil when the daemon is not waiting (or never wrote one).
    public func read() -> String? {
        guard let data = FileManager.default.contents(atPath: path), data.count <= 4096 else { return nil }
        let text = String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        return text.isEmpty ? nil : text
    }
}
