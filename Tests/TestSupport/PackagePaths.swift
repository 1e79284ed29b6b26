import Foundation
import SharedStore

/// Where the package, its build products and the shared test material are, found from this
/// file's own path so tests work from any working directory.
///
/// ```swift
/// let worker = try builtExecutable("sotto-notify")
/// let vectors = PackagePaths.shared.appendingPathComponent("vectors/envelope-v1.json")
/// ```
public enum PackagePaths {
    /// The package root (the directory holding Package.swift).
    public static let root: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    /// `../shared` beside the package.
    public static let shared: URL = root.deletingLastPathComponent().appendingPathComponent("shared")
}

/// The path of an executable of this package built next to the tests
/// (`.build/<triple>/debug/NAME`); throws when it was not built.
public func builtExecutable(_ name: String) throws -> String {
    var candidates: [URL] = []
    // Another build's binaries (e.g. main's, to show a test fails without a feature).
    if let other = ProcessInfo.processInfo.environment["SOTTO_TEST_EXECUTABLES"] {
        candidates.append(URL(fileURLWithPath: other).appendingPathComponent(name))
    }
    var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    for _ in 0..<4 {
        candidates.append(directory.appendingPathComponent(name))
        directory.deleteLastPathComponent()
    }
    candidates.append(PackagePaths.root.appendingPathComponent(".build/debug/\(name)"))
    for candidate in candidates where FileManager.default.isExecutableFile(atPath: candidate.path) {
        return candidate.path
    }
    throw StoreError.io("\(name) not built; run swift build --build-tests")
}
