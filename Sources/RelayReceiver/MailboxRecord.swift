import Glibc
import RelayTransport
import SottoWire

/// The mailboxes whose consumers this device's sotto-relayd holds, kept on disk in the group
/// directory (`relayd-mailboxes`) so a restarted relayd can finish retiring an identity that
/// left the keystore while it was down or in the middle of a retirement (docs/adr/0030). The
/// relay cannot tell: several devices share it, and a consumer's name (`mb-<clientId>`) says
/// nothing of whose it is.
///
/// The file is one header line, then one clientId per line. It is written whole, atomically
/// (temp file, fsync, rename, fsync of the directory); it is read as untrusted: anything but
/// exactly that (too large, not a regular file, not ours, writable by others, a bad line) is
/// refused as a whole, and a refused record retires nothing.
///
/// ```swift
/// let record = MailboxRecord(groupDirectory: options.group.path)
/// switch record.load() {
/// case .absent: …                       // first start
/// case .mailboxes(let boxes): …         // retire those no longer in the keystore
/// case .refused(let why): …             // log it; rewrite from the keystore
/// }
/// try record.save(Set(slots.keys))
/// ```
struct MailboxRecord {
    enum Loaded: Equatable {
        case absent
        case mailboxes(Set<Mailbox>)
        case refused(String)
    }

    struct WriteFailure: Error, CustomStringConvertible {
        let description: String
    }

    static let fileName = "relayd-mailboxes"
    static let header = "sotto-relayd mailboxes 1"
    /// 100,000 mailboxes (37 bytes a line): far more than a device's identities.
    static let maxBytes = 4 << 20

    let path: String
    private let directory: String

    init(groupDirectory: String) {
        directory = groupDirectory
        path = (groupDirectory.hasSuffix("/") ? groupDirectory : groupDirectory + "/") + Self.fileName
    }

    // MARK: - Reading

    func load() -> Loaded {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else {
            if errno == ENOENT { return .absent }
            return .refused("cannot open it: \(String(cString: strerror(errno)))")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return .refused("cannot stat it: \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { return .refused("not a regular file") }
        // Whoever else can write it could name another device's mailbox for retirement.
        guard info.st_uid == geteuid() else { return .refused("owned by another user") }
        guard info.st_mode & 0o022 == 0 else { return .refused("writable by group or others") }
        guard info.st_size <= Self.maxBytes else { return .refused("\(info.st_size) bytes, more than \(Self.maxBytes)") }
        var bytes = [UInt8](repeating: 0, count: Int(info.st_size) + 1)
        var count = 0
        while count < bytes.count {
            let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + count, $0.count - count) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { return .refused("cannot read it: \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            count += n
        }
        guard count <= Self.maxBytes else { return .refused("it grew past \(Self.maxBytes) bytes while read") }
        return Self.parse(Array(bytes[0..<count]))
    }

    static func parse(_ bytes: [UInt8]) -> Loaded {
        guard let text = String(validating: bytes, as: UTF8.self) else { return .refused("not UTF-8") }
        guard text.hasSuffix("\n") else { return .refused("no final newline (cut short?)") }
        let lines = text.dropLast().split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first == Substring(header) else { return .refused("the first line is not '\(header)'") }
        var boxes = Set<Mailbox>()
        for (index, line) in lines.dropFirst().enumerated() {
            guard let box = try? Mailbox(clientId: String(line)) else {
                return .refused("line \(index + 2) is not a clientId")
            }
            boxes.insert(box)
        }
        return .mailboxes(boxes)
    }

    // MARK: - Writing

    static func render(_ mailboxes: Set<Mailbox>) -> [UInt8] {
        let lines = [header] + mailboxes.map(\.clientId).sorted()
        return Array((lines.joined(separator: "\n") + "\n").utf8)
    }

    /// Replaces the record with `mailboxes`: a reader (or a crash) sees the old file or the
    /// new one, never a mix.
    func save(_ mailboxes: Set<Mailbox>) throws(WriteFailure) {
        let bytes = Self.render(mailboxes)
        let temporary = path + ".tmp"
        func failure(_ what: String) -> WriteFailure {
            WriteFailure(description: "\(what) \(temporary): \(String(cString: strerror(errno)))")
        }
        unlink(temporary)  // a leftover of a crash; O_EXCL below refuses anything planted since
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create") }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let error = failure("cannot write")
                close(fd); unlink(temporary)
                throw error
            }
            written += n
        }
        guard SyncMutation.skips(.mailboxRecordFile) || fsync(fd) == 0 else {
            let error = failure("cannot fsync")
            close(fd); unlink(temporary)
            throw error
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot rename into place")
            unlink(temporary)
            throw error
        }
        if SyncMutation.skips(.mailboxRecordDirectory) { return }
        // The new record is in place but its name is not durable yet: a failure here is
        // reported so the caller saves again, as for any other failed save.
        if let why = DirectorySync.fsync(directory) { throw WriteFailure(description: why) }
    }
}
