import Foundation

/// A fresh private directory (0700) under /tmp, removed by `remove()`.
///
/// ```swift
/// let dir = try TemporaryDirectory(prefix: "worker")
/// defer { dir.remove() }
/// let group = dir.path("group")
/// ```
public struct TemporaryDirectory: Sendable {
    public let url: URL

    public init(prefix: String = "sotto-test") throws {
        // Short paths: a Unix socket path must fit in 108 bytes.
        let base = URL(fileURLWithPath: "/tmp").appendingPathComponent("\(prefix)-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        url = base
    }

    public func path(_ component: String) -> String {
        url.appendingPathComponent(component).path
    }

    public func remove() {
        try? FileManager.default.removeItem(at: url)
    }
}
