import Glibc

/// fsync of a directory: what makes its entries (a new name, a rename, an unlink) survive a
/// power cut (docs/adr/0058). nil once durable, else why not; every caller treats a failure
/// as a failed write.
///
/// ```swift
/// if let why = DirectorySync.fsync(groupDirectory) { return .notWritten(why) }
/// ```
public enum DirectorySync {
    public static func fsync(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return "cannot open \(path) to fsync it: \(String(cString: strerror(errno)))" }
        defer { close(fd) }
        return Glibc.fsync(fd) == 0 ? nil : "cannot fsync \(path): \(String(cString: strerror(errno)))"
    }

    /// The directory holding `file` ("." for a bare name).
    public static func parent(of file: String) -> String {
        guard let slash = file.lastIndex(of: "/") else { return "." }
        return slash == file.startIndex ? "/" : String(file[..<slash])
    }
}
