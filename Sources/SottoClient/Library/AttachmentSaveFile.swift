import Glibc
import SottoWire

/// Where `sotto save` writes a file, and the writing itself (docs/protocol/attachments.md
/// "Saving", docs/adr/0077): the bytes go to a hidden temporary file in the destination's
/// directory (created with `O_CREAT|O_EXCL`, mode 0600); only when the daemon says they were
/// the file is it fsynced and linked under its final name, which is never an existing file
/// (`link` fails rather than replace), then the temporary name is removed and the directory
/// fsynced. Any failure before that removes the temporary file: nothing is ever left under
/// the final name that is not the whole file.
///
/// The destination: a directory (the default is the current one) gets `safe(name)`
/// (`AttachmentFileName`); when that exists, `NAME (1).EXT`, `NAME (2).EXT` … (the first
/// free one). A path that does not exist, in a directory that does, is the name itself; an
/// existing file is refused.
///
/// ```swift
/// var file = try AttachmentSaveFile(destination: "/home/ann/Downloads")
/// try file.write(bytes)                                // as they arrive
/// let path = try file.commit(name: saved.name)         // "/home/ann/Downloads/photo (1).jpg"
/// // or, on any failure: file.discard()
/// ```
public struct AttachmentSaveFile {
    /// Why a file was not saved; `description` is what `sotto save` prints.
    public enum Failure: Error, Equatable, CustomStringConvertible {
        /// DEST is unusable: it exists and is not a directory, or its directory does not exist.
        case destination(String)
        /// Creating, writing, syncing or linking failed (a full disk, permissions): errno's words.
        case io(String)

        public var description: String {
            switch self {
            case .destination(let why), .io(let why): return why
            }
        }
    }

    /// The most `NAME (n).EXT` tried before giving up.
    public static let maxCollisions = 9_999

    /// The directory the file goes into.
    public let directory: String
    /// The exact final path when DEST named a file that does not exist; nil for a directory.
    public let exactPath: String?
    /// The hidden temporary file, in `directory`.
    public private(set) var temporaryPath: String
    private var fd: Int32
    /// Bytes written so far.
    public private(set) var written: Int64 = 0

    // MARK: Starting

    /// Resolves `destination` (a directory, or a path that does not exist in one) and creates
    /// the temporary file in its directory.
    public init(destination: String) throws(Failure) {
        let trimmed = destination.count > 1 && destination.hasSuffix("/") ? String(destination.dropLast()) : destination
        var info = stat()
        if stat(trimmed, &info) == 0 {
            guard info.st_mode & S_IFMT == S_IFDIR else {
                throw .destination("\(destination) exists and is not a directory: sotto save never overwrites a file")
            }
            (directory, exactPath) = (trimmed, nil)
        } else {
            guard errno == ENOENT else { throw .destination("\(destination): \(String(cString: strerror(errno)))") }
            guard !destination.hasSuffix("/") else { throw .destination("the directory \(destination) does not exist") }
            let parent = Self.parent(of: trimmed)
            guard stat(parent, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
                throw .destination("\(parent) is not a directory: give a directory, or a new file's path in one")
            }
            (directory, exactPath) = (parent, trimmed)
        }
        Self.removeAbandoned(in: directory)
        (temporaryPath, fd) = try Self.createTemporary(in: directory)
    }

    /// `.sotto-save-<pid>-<n>.partial` in `directory`, created exclusively (0600).
    private static func createTemporary(in directory: String) throws(Failure) -> (String, Int32) {
        for attempt in 0..<100 {
            let path = join(directory, ".sotto-save-\(getpid())-\(attempt).partial")
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd >= 0 { return (path, fd) }
            guard errno == EEXIST else { throw .io("cannot create a file in \(directory): \(String(cString: strerror(errno)))") }
        }
        throw .io("cannot create a temporary file in \(directory): too many left by other saves")
    }

    // MARK: Writing

    /// Appends `bytes` to the temporary file.
    public mutating func write(_ bytes: UnsafeRawBufferPointer) throws(Failure) {
        if let code = FileWrite.all(fd, bytes) { throw .io("writing \(directory): \(String(cString: strerror(code)))") }
        written += Int64(bytes.count)
    }

    public mutating func write(_ bytes: [UInt8]) throws(Failure) {
        let result: Result<Void, Failure> = bytes.withUnsafeBytes { raw in Result { () throws(Failure) in try write(raw) } }
        try result.get()
    }

    // MARK: Ending

    /// The bytes are the file: fsync it, link it under its final name (never over a file),
    /// remove the temporary name, fsync the directory. Returns the final path. On a failure
    /// the temporary file is removed (call nothing else).
    public mutating func commit(name: String) throws(Failure) -> String {
        defer { discard() }
        guard fsync(fd) == 0 else { throw .io("fsync in \(directory): \(String(cString: strerror(errno)))") }
        let final: String
        if let exactPath {
            guard link(temporaryPath, exactPath) == 0 else {
                throw errno == EEXIST ? .destination("\(exactPath) exists now: sotto save never overwrites a file")
                                      : .io("cannot name the file \(exactPath): \(String(cString: strerror(errno)))")
            }
            final = exactPath
        } else {
            final = try linkFree(Self.safeName(name))
        }
        unlink(temporaryPath)
        temporaryPath = ""
        guard DirectorySync.fsync(directory) == nil else { throw .io("fsync of \(directory) failed; \(final) may not survive a power cut") }
        return final
    }

    /// `safe`, then the first of `safe`, `NAME (1).EXT` … that does not exist, linked.
    private func linkFree(_ safe: String) throws(Failure) -> String {
        for number in 0...Self.maxCollisions {
            let candidate = Self.join(directory, Self.numbered(safe, number))
            if link(temporaryPath, candidate) == 0 { return candidate }
            guard errno == EEXIST else { throw .io("cannot name the file \(candidate): \(String(cString: strerror(errno)))") }
        }
        throw .destination("\(Self.join(directory, safe)) and \(Self.maxCollisions) numbered names exist; choose another DEST")
    }

    /// Closes and removes the temporary file (nothing else is touched). Safe to call twice.
    public mutating func discard() {
        if fd >= 0 { close(fd) }
        fd = -1
        if !temporaryPath.isEmpty { unlink(temporaryPath) }
        temporaryPath = ""
    }

    // MARK: Names

    /// The sender's name as a file name: docs/protocol/attachments.md §6.
    public static func safeName(_ name: String) -> String { AttachmentFileName.safe(name) }

    /// `safe` with ` (n)` before its extension (none for 0), cut to stay ≤ 255 bytes:
    /// `photo.jpg` → `photo (2).jpg`, `notes` → `notes (2)`, `archive.tar.gz` → `archive.tar (2).gz`.
    public static func numbered(_ safe: String, _ number: Int) -> String {
        guard number > 0 else { return safe }
        let scalars = Array(safe.unicodeScalars)
        var split = scalars.count
        if let dot = scalars.lastIndex(of: "."), dot > 0, scalars.count - dot <= AttachmentFileName.maxSuffixBytes { split = dot }
        var stem = scalars[..<split]
        let tail = " (\(number))" + String(String.UnicodeScalarView(scalars[split...]))
        while stem.reduce(0, { $0 + UTF8.width($1) }) + tail.utf8.count > AttachmentFileName.maxBytes { stem = stem.dropLast() }
        return String(String.UnicodeScalarView(stem)) + tail
    }

    static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    static func join(_ directory: String, _ name: String) -> String {
        directory.hasSuffix("/") ? directory + name : directory + "/" + name
    }
}
