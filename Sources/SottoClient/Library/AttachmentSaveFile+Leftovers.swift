import Glibc

extension AttachmentSaveFile {
    /// Removes the temporary files an earlier `sotto save` into `directory` left when it was
    /// SIGKILLed (or the power went) before it could: `.sotto-save-<pid>-<n>.partial`, a regular
    /// file of this user, whose process no longer exists. A live save's file (its pid runs) and
    /// anything else are left alone. Returns how many it removed.
    ///
    /// ```swift
    /// AttachmentSaveFile.removeAbandoned(in: "/home/ann/Downloads")   // 1: a save killed last week
    /// ```
    @discardableResult
    public static func removeAbandoned(in directory: String) -> Int {
        guard let stream = opendir(directory) else { return 0 }
        defer { closedir(stream) }
        var removed = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = savingProcess(name), pid != getpid(), kill(pid, 0) == -1, errno == ESRCH else { continue }
            let path = join(directory, name)
            var info = stat()
            guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_uid == geteuid() else { continue }
            if unlink(path) == 0 { removed += 1 }
        }
        return removed
    }

    /// The pid in a temporary file's name `.sotto-save-<pid>-<n>.partial`; nil for any other name.
    static func savingProcess(_ name: String) -> pid_t? {
        let prefix = ".sotto-save-", suffix = ".partial"
        guard name.hasPrefix(prefix), name.hasSuffix(suffix) else { return nil }
        let fields = name.dropFirst(prefix.count).dropLast(suffix.count).split(separator: "-", omittingEmptySubsequences: false)
        guard fields.count == 2, fields.allSatisfy({ !$0.isEmpty && $0.count <= 10 && $0.allSatisfy { $0.isASCII && $0.isNumber } }),
              let pid = pid_t(fields[0]), pid > 0 else { return nil }
        return pid
    }
}
