import Foundation

/// Where the package, its build products and the shared test material are, found from this
/// file's own path so tests work from any working directory.
///
/// ```swift
/// let worker = PackagePaths.executable("sotto-notify")
/// ```
public enum PackagePaths {
    /// The package root (the directory holding Package.swift).
    public static let root: URL = {
        var url = URL(fileURLWithPath: #filePath)
        while url.path != "/" {
            url.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("Package.swift").path) {
                return url
            }
        }
        fatalError("Package.swift not found above \(#filePath)")
    }()

    /// The directory of the running test bundle's build products (`.build/<triple>/debug`).
    public static let buildDirectory: URL = {
        let argument0 = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var url = argument0.deletingLastPathComponent()
        // The XCTest/Swift Testing runner may live inside a .xctest bundle directory.
        while url.path != "/" {
            if FileManager.default.fileExists(atPath: url.appendingPathComponent("sotto-notify").path) {
                return url
            }
            url.deleteLastPathComponent()
        }
        return root.appendingPathComponent(".build/debug")
    }()

    /// A built executable of this package, e.g. `sotto`, `sotto-notify`.
    public static func executable(_ name: String) -> String {
        buildDirectory.appendingPathComponent(name).path
    }

    /// `../shared` beside the package.
    public static let shared: URL = root.deletingLastPathComponent().appendingPathComponent("shared")
}
