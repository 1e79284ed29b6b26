#if canImport(Glibc)
import Glibc
#endif
import SottoWire

/// File operations relative to one open directory, refusing anything a hostile local user
/// could have planted: symlinks (`O_NOFOLLOW`), non-regular files, files owned by someone
/// else or readable/writable by group or others. Writes are atomic (temp file, fsync,
/// rename or link, fsync of the directory), so readers never see a torn file.
///
/// ```swift
/// let dir = try SecureDirectory(path: "/home/me/.local/share/sotto/keystore", create: true)
/// try dir.writeAtomically("a.identity", bytes, replace: false)
/// let bytes = try dir.read("a.identity", maxBytes: 4096)   // nil when absent
/// ```
struct SecureDirectory: Sendable {
    let fd: Int32
    let path: String

    init(path: String, create: Bool) throws(KeystoreError) {
        if create, mkdir(path, 0o700) != 0, errno != EEXIST {
            throw .unavailable("cannot create the keystore directory (errno \(errno))")
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: throw .unavailable("the keystore directory does not exist")
            case ELOOP, ENOTDIR: throw .insecure("the keystore path is a symlink or not a directory")
            default: throw .unavailable("cannot open the keystore directory (errno \(errno))")
            }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            _ = Glibc.close(fd)
            throw .unavailable("cannot stat the keystore directory (errno \(errno))")
        }
        if let problem = Self.ownershipProblem(info) {
            _ = Glibc.close(fd)
            throw .insecure("keystore directory: \(problem)")
        }
        self.fd = fd
        self.path = path
    }

    func close() { _ = Glibc.close(fd) }

    /// Why a file with this `stat` must not be trusted, or nil.
    static func ownershipProblem(_ info: stat) -> String? {
        if info.st_uid != geteuid() { return "owned by another user" }
        if info.st_mode & 0o077 != 0 { return "group or other permission bits are set" }
        return nil
    }

    // MARK: - Reading

    /// The whole file, or nil if it does not exist.
    func read(_ name: String, maxBytes: Int) throws(KeystoreError) -> [UInt8]? {
        let file = openat(fd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard file >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP: throw .insecure("\(name) is a symlink")
            default: throw .unavailable("cannot open \(name) (errno \(errno))")
            }
        }
        defer { _ = Glibc.close(file) }
        return try Self.readChecked(file, name: name, maxBytes: maxBytes)
    }

    /// Reads an absolute path with the same checks (for the systemd credential).
    static func readFile(atPath path: String, maxBytes: Int) throws(KeystoreError) -> [UInt8]? {
        let file = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard file >= 0 else {
            switch errno {
            case ENOENT: return nil
            case ELOOP: throw .insecure("\(path) is a symlink")
            default: throw .unavailable("cannot open \(path) (errno \(errno))")
            }
        }
        defer { _ = Glibc.close(file) }
        return try readChecked(file, name: path, maxBytes: maxBytes)
    }

    private static func readChecked(_ file: Int32, name: String, maxBytes: Int) throws(KeystoreError) -> [UInt8] {
        var info = stat()
        guard fstat(file, &info) == 0 else { throw .unavailable("cannot stat \(name) (errno \(errno))") }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .insecure("\(name) is not a regular file") }
        if let problem = ownershipProblem(info) { throw .insecure("\(name): \(problem)") }
        guard info.st_size <= maxBytes else { throw .corrupt("\(name) is larger than \(maxBytes) bytes") }
        // Read one byte past the limit so a file that grew after fstat is still caught.
        var out = [UInt8](repeating: 0, count: maxBytes + 1)
        var total = 0
        while total < out.count {
            let count = out.withUnsafeMutableBytes { buffer in
                Glibc.read(file, buffer.baseAddress! + total, buffer.count - total)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .unavailable("cannot read \(name) (errno \(errno))")
            }
            if count == 0 { break }
            total += count
        }
        guard total <= maxBytes else { throw .corrupt("\(name) is larger than \(maxBytes) bytes") }
        out.removeSubrange(total...)
        return out
    }

    // MARK: - Writing

    /// Writes `bytes` to a temp file, fsyncs it, then moves it into place: `rename` when
    /// `replace`, else `link` (atomic create-if-absent; returns false if `name` exists).
    /// `syncDirectory: false` leaves the directory fsync to a caller that makes more changes.
    @discardableResult
    func writeAtomically(_ name: String, _ bytes: [UInt8], replace: Bool,
                         syncDirectory sync: Bool = true) throws(KeystoreError) -> Bool {
        let temp = ".tmp-" + Hex.encode(SecureRandom.bytes(8))
        let file = openat(fd, temp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard file >= 0 else { throw .unavailable("cannot create a temp file (errno \(errno))") }
        var ok = fchmod(file, 0o600) == 0 && Self.writeAll(file, bytes) && (SyncMutation.skips(.keystoreFile) || fsync(file) == 0)
        let writeErrno = errno
        ok = Glibc.close(file) == 0 && ok
        guard ok else {
            unlinkat(fd, temp, 0)
            throw .unavailable("cannot write \(name) (errno \(writeErrno))")
        }
        if replace {
            guard renameat(fd, temp, fd, name) == 0 else {
                let code = errno
                unlinkat(fd, temp, 0)
                throw .unavailable("cannot rename into \(name) (errno \(code))")
            }
        } else {
            let linked = linkat(fd, temp, fd, name, 0) == 0
            let code = errno
            unlinkat(fd, temp, 0)
            if !linked {
                if code == EEXIST { return false }
                throw .unavailable("cannot link \(name) (errno \(code))")
            }
        }
        if sync { try syncDirectory() }
        return true
    }

    /// Overwrites the file's bytes with zeros and fsyncs, then unlinks it and fsyncs the
    /// directory. False when it did not exist.
    @discardableResult
    func wipe(_ name: String) throws(KeystoreError) -> Bool {
        let file = openat(fd, name, O_WRONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if file < 0 {
            switch errno {
            case ENOENT: return false
            case ELOOP: break   // a symlink: nothing of ours to zero, just unlink it
            default: throw .unavailable("cannot open \(name) for wiping (errno \(errno))")
            }
        } else {
            defer { _ = Glibc.close(file) }
            var info = stat()
            if fstat(file, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 {
                let zeros = [UInt8](repeating: 0, count: Int(info.st_size))
                guard Self.writeAll(file, zeros), SyncMutation.skips(.keystoreWipe) || fsync(file) == 0 else {
                    throw .unavailable("cannot wipe \(name) (errno \(errno))")
                }
            }
        }
        guard unlinkat(fd, name, 0) == 0 || errno == ENOENT else {
            throw .unavailable("cannot unlink \(name) (errno \(errno))")
        }
        if !SyncMutation.skips(.keystoreUnlinkDirectory) { try syncDirectory() }
        return true
    }

    /// Whether another entry of this directory is the same file as `name` (a second hard link).
    /// Compares inodes rather than trusting `st_nlink` alone: a link outside the directory (a
    /// backup's, a test file system's own) must not count.
    func hasOtherName(_ name: String) throws(KeystoreError) -> Bool {
        var info = stat()
        guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_nlink > 1 else { return false }
        for other in try names() where other != name && other != "." && other != ".." {
            var candidate = stat()
            if fstatat(fd, other, &candidate, AT_SYMLINK_NOFOLLOW) == 0,
               candidate.st_dev == info.st_dev, candidate.st_ino == info.st_ino { return true }
        }
        return false
    }

    /// Removes the name only and fsyncs the directory: for a file that has another name, whose
    /// bytes a wipe would zero too. False when it did not exist.
    func unlinkName(_ name: String) throws(KeystoreError) -> Bool {
        guard unlinkat(fd, name, 0) == 0 else {
            if errno == ENOENT { return false }
            throw .unavailable("cannot unlink \(name) (errno \(errno))")
        }
        try syncDirectory()
        return true
    }

    /// Atomically renames `name` to `newName`; false if `name` does not exist.
    func rename(_ name: String, to newName: String) throws(KeystoreError) -> Bool {
        guard renameat(fd, name, fd, newName) == 0 else {
            if errno == ENOENT { return false }
            throw .unavailable("cannot rename \(name) (errno \(errno))")
        }
        return true
    }

    /// Moves `name` to `newName` without replacing an existing `newName` (link, then unlink);
    /// false if `newName` exists. The caller syncs the directory.
    func move(_ name: String, to newName: String) throws(KeystoreError) -> Bool {
        guard linkat(fd, name, fd, newName, 0) == 0 else {
            if errno == EEXIST { return false }
            throw .unavailable("cannot link \(name) (errno \(errno))")
        }
        guard unlinkat(fd, name, 0) == 0 else { throw .unavailable("cannot unlink \(name) (errno \(errno))") }
        return true
    }

    func syncDirectory() throws(KeystoreError) {
        if SyncMutation.skips(.keystoreDirectory) { return }
        guard fsync(fd) == 0 else { throw .unavailable("cannot fsync the keystore directory (errno \(errno))") }
    }

    /// Names of the directory's entries (for `list`; lookups never scan).
    func names() throws(KeystoreError) -> [String] {
        let copy = dup(fd)
        guard copy >= 0, let stream = fdopendir(copy) else {
            throw .unavailable("cannot list the keystore directory (errno \(errno))")
        }
        defer { closedir(stream) }
        rewinddir(stream)
        var out: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            out.append(name)
        }
        return out
    }

    private static func writeAll(_ file: Int32, _ bytes: [UInt8]) -> Bool {
        FileWrite.all(file, bytes) == nil
    }
}
