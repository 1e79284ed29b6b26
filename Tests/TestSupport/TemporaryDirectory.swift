import Foundation
import SharedStore

/// A fresh private directory (0700) under /tmp, removed when released or by `remove()`.
/// Paths stay short: a Unix socket path must fit in 108 bytes.
///
/// ```swift
/// let tmp = try TemporaryDirectory()
/// let group = tmp.path + "/group"
/// ```
public final class TemporaryDirectory: @unchecked Sendable {
    public let path: String
    public var url: URL { URL(fileURLWithPath: path) }

    public init(prefix: String = "sotto-test") throws {
        var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw StoreError.io("mkdtemp failed") }
        path = String(cString: made)
    }

    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    deinit { remove() }
}
