import Glibc

/// The names in a directory, "." and ".." left out: what relayd's keystore scan, its reading of
/// the awake marks and the daemon's marks read, without opening any file.
///
/// ```swift
/// let names = try DirectoryNames.read(group.awakeMailboxesPath)   // ["3f0c7a52-…", …]
/// ```
public enum DirectoryNames {
    /// `.io` with the reason when the directory cannot be opened (missing, not a directory,
    /// not readable).
    public static func read(_ path: String) throws(DirectoryError) -> [String] {
        guard let dir = opendir(path) else {
            throw .io("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != ".", name != ".." { names.append(name) }
        }
        return names
    }
}
