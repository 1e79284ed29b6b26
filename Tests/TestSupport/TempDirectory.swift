import Foundation

/// A fresh directory under the system temp dir, removed by `remove()`.
///
/// ```swift
/// let temp = try TempDirectory()
/// defer { temp.remove() }
/// let path = temp.path + "/keystore"
/// ```
public struct TempDirectory: Sendable {
    public let path: String

    public init(prefix: String = "sotto-test") throws {
        path = NSTemporaryDirectory() + "\(prefix)-\(UUID().uuidString.lowercased())"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
    }

    public func remove() { try? FileManager.default.removeItem(atPath: path) }
}

/// Finds a built executable of this package next to the test bundle (`.build/<config>/NAME`).
public func builtExecutable(_ name: String, filePath: String = #filePath) -> String? {
    var candidates: [URL] = []
    var url = Bundle.main.bundleURL
    for _ in 0..<4 {
        candidates.append(url.appendingPathComponent(name))
        url.deleteLastPathComponent()
    }
    let root = URL(fileURLWithPath: filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    candidates.append(root.appendingPathComponent(".build/debug/\(name)"))
    return candidates.map(\.path).first { FileManager.default.isExecutableFile(atPath: $0) }
}
