import Foundation

/// Searches every regular file under a directory for a byte string: how the explode tests
/// prove that no plaintext or key material is left in a group directory (database, -wal,
/// -shm, keystore).
///
/// ```swift
/// #expect(FileSearch.files(containing: Array("secret".utf8), under: group.path).isEmpty)
/// ```
public enum FileSearch {
    /// The paths (relative to `directory`) of the files that hold `needle`.
    public static func files(containing needle: [UInt8], under directory: String) -> [String] {
        guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
        var found: [String] = []
        for case let relative as String in walker {
            let path = directory + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory), !isDirectory.boolValue,
                  let data = FileManager.default.contents(atPath: path) else { continue }
            if data.range(of: Data(needle)) != nil { found.append(relative) }
        }
        return found
    }
}
