import DaemonLogging
import Glibc
import NIOPosix
import SottoCrypto
import SottoWire

/// The daemon's stored attachment files: `attachments/<conversationId>/<messageId>` in the
/// group directory, each the stored form of one file (docs/protocol/attachments.md §4),
/// named by the message that carries its reference (docs/adr/0074).
///
/// A file is read once, 64 KiB at a time, on a thread of its own (never the cooperative
/// pool's), encrypted into `.<messageId>.partial`, fsynced, renamed to its name and the
/// directory fsynced: a crash leaves no half file under a final name, and
/// `sweep(existing:)` at start-up removes what has no message (a partial file, or a whole
/// one whose message was never committed).
///
/// ```swift
/// let store = AttachmentStore(group: group)
/// let stored = try await store.store(path: "/home/ann/photo.jpg", conversationId: c, messageId: m)
/// stored.sha256   // of the stored bytes, for the reference
/// store.deleteConversations([c])   // explode, leave
/// ```
public final class AttachmentStore: Sendable {
    /// Why a file was not stored; the description is what `sotto send --file` prints.
    public enum Failure: Error, Equatable, Sendable, CustomStringConvertible {
        /// Over `AttachmentLayout.maxSize` (before or while read).
        case tooLarge(path: String, bytes: Int)
        /// Not a regular file (a directory, a device, a FIFO).
        case notAFile(path: String, kind: String)
        /// It cannot be opened or read (missing, no permission): errno's words.
        case unreadable(path: String, reason: String)
        /// It gave more or fewer bytes than its size, or its size changed while it was read.
        case changed(path: String)
        /// Writing the stored file failed (a full disk, the directory): nothing was kept.
        case notStored(reason: String)

        public var description: String {
            switch self {
            case .tooLarge(let path, let bytes):
                return "\(path) is \(bytes) bytes; a file may have at most \(AttachmentLayout.maxSize) bytes (100 MiB): "
                    + "nothing was stored or sent"
            case .notAFile(let path, let kind): return "\(path) is \(kind), not a file: nothing was stored or sent"
            case .unreadable(let path, let reason): return "cannot read \(path): \(reason)"
            case .changed(let path):
                return "\(path) changed while it was read (its size is not what it was): nothing was stored or sent"
            case .notStored(let reason): return "the file could not be stored: \(reason); nothing was sent"
            }
        }
    }

    public let group: GroupDirectory
    /// One file stored at a time, on a thread that may block on the disk for seconds.
    private let lane: NIOThreadPool

    public init(group: GroupDirectory) {
        self.group = group
        lane = NIOThreadPool(numberOfThreads: 1)
        lane.start()
    }

    deinit { lane.shutdownGracefully { _ in } }

    // MARK: Storing

    /// Reads the regular file at `path` once and stores its encrypted form for `messageId`;
    /// throws with nothing left behind.
    public func store(path: String, conversationId: String, messageId: String) async throws(Failure) -> AttachmentFile.Encrypted {
        let result: Result<AttachmentFile.Encrypted, Failure>
        do {
            result = try await lane.runIfActive { [group] in
                Result { () throws(Failure) in try Self.store(path: path, group: group, conversationId: conversationId, messageId: messageId) }
            }
        } catch {
            throw .notStored(reason: "the daemon is shutting down")
        }
        return try result.get()
    }

    /// Where a message's stored file is (whether or not it has one).
    public func storedPath(conversationId: String, messageId: String) -> String {
        group.storedAttachmentPath(conversationId: conversationId, messageId: messageId)
    }

    /// Where a message's stored file is written before it is whole: by `store` (the sender),
    /// by the fetcher (a recipient, resumed from there after a crash).
    public func partialPath(conversationId: String, messageId: String) -> String {
        group.attachmentsPath(conversationId: conversationId) + "/." + messageId + ".partial"
    }

    private static func store(path: String, group: GroupDirectory, conversationId: String,
                              messageId: String) throws(Failure) -> AttachmentFile.Encrypted {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; a regular file ignores it.
        let source = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK)
        guard source >= 0 else { throw .unreadable(path: path, reason: openFailure(errno, path: path)) }
        defer { close(source) }
        var before = stat()
        guard fstat(source, &before) == 0 else { throw .unreadable(path: path, reason: String(cString: strerror(errno))) }
        guard before.st_mode & S_IFMT == S_IFREG else { throw .notAFile(path: path, kind: kind(before.st_mode)) }
        let size = Int(before.st_size)
        guard size <= AttachmentLayout.maxSize else { throw .tooLarge(path: path, bytes: size) }

        let directory: String
        do { directory = try group.createAttachmentsDirectory(conversationId: conversationId) } catch {
            throw .notStored(reason: error.description)
        }
        let partial = directory + "/." + messageId + Self.partialSuffix
        let sink = open(partial, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard sink >= 0 else { throw .notStored(reason: "cannot create \(partial): \(String(cString: strerror(errno)))") }
        var kept = false
        defer {
            close(sink)
            if !kept { unlink(partial) }
        }
        let encrypted: AttachmentFile.Encrypted
        do {
            encrypted = try AttachmentFile.encrypt(from: source, size: size, to: sink)
        } catch {
            switch error.code {
            case .tooLarge: throw .tooLarge(path: path, bytes: size)
            case .sourceChanged: throw .changed(path: path)
            default: throw .notStored(reason: error.description)
            }
        }
        var after = stat()
        guard fstat(source, &after) == 0, after.st_size == before.st_size else {
            if after.st_size > AttachmentLayout.maxSize { throw .tooLarge(path: path, bytes: Int(after.st_size)) }
            throw .changed(path: path)
        }
        guard fsync(sink) == 0 else { throw .notStored(reason: "fsync of \(partial): \(String(cString: strerror(errno)))") }
        let final = directory + "/" + messageId
        guard rename(partial, final) == 0 else { throw .notStored(reason: "rename to \(final): \(String(cString: strerror(errno)))") }
        kept = true
        if let why = DirectorySync.fsync(directory) {
            unlink(final)
            throw .notStored(reason: why)
        }
        return encrypted
    }

    /// errno's words, and for a path in /tmp or /var/tmp that is not there why it may be
    /// there for the user all the same: `sotto.service` runs with `PrivateTmp=yes`.
    static func openFailure(_ code: Int32, path: String) -> String {
        let words = String(cString: strerror(code))
        guard code == ENOENT, path.hasPrefix("/tmp/") || path.hasPrefix("/var/tmp/") else { return words }
        return words + " (as the daemon sees it: under systemd it has a /tmp of its own; send the file from another directory)"
    }

    private static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFDIR: return "a directory"
        case S_IFIFO: return "a pipe"
        case S_IFSOCK: return "a socket"
        case S_IFCHR, S_IFBLK: return "a device"
        default: return "not a regular file"
        }
    }

    // MARK: Deleting

    /// Removes one message's stored file (its message was not stored after all, or went
    /// while its file was fetched), and its directory when nothing else is left in it.
    public func delete(conversationId: String, messageId: String) {
        let path = storedPath(conversationId: conversationId, messageId: messageId)
        if unlink(path) == 0 { _ = DirectorySync.fsync(DirectorySync.parent(of: path)) }
        if rmdir(group.attachmentsPath(conversationId: conversationId)) == 0 { _ = DirectorySync.fsync(group.attachmentsPath) }
    }

    /// Removes one message's partial file (a fetch that cannot succeed).
    public func deletePartial(conversationId: String, messageId: String) {
        let path = partialPath(conversationId: conversationId, messageId: messageId)
        if unlink(path) == 0 { _ = DirectorySync.fsync(DirectorySync.parent(of: path)) }
    }

    private static let partialSuffix = ".partial"

    /// The message a stored or partial file's name is for: `<id>` or `.<id>.partial`.
    static func messageId(ofFile name: String) -> String? {
        guard name.hasPrefix(".") else { return name }
        guard name.hasSuffix(partialSuffix), name.count > 1 + partialSuffix.count else { return nil }
        return String(name.dropFirst().dropLast(partialSuffix.count))
    }

    /// Removes every stored file of these conversations, then their directories (explode,
    /// leave, an abandoned join). The files were already unreadable: each one's key is only
    /// in its message's content, sealed with the conversation's key that was just wiped
    /// (docs/adr/0052). Returns how many files it removed.
    @discardableResult
    public func deleteConversations(_ conversationIds: [String]) -> Int {
        var removed = 0
        for conversationId in conversationIds {
            let directory = group.attachmentsPath(conversationId: conversationId)
            for name in Self.entries(of: directory) where unlink(directory + "/" + name) == 0 { removed += 1 }
            if rmdir(directory) == 0 { _ = DirectorySync.fsync(group.attachmentsPath) }
        }
        return removed
    }

    /// At start-up, before anything is sent: removes every stored or partial file whose
    /// message is not in the database (a crash between storing it and committing its message,
    /// a sender's interrupted store, an explode), then each directory left empty. A partial
    /// file of a message that exists is a fetch to resume (docs/adr/0078) and stays. `existing`
    /// maps the message ids given to the conversation each is in (ids only: no sealed cell is
    /// opened).
    @discardableResult
    public func sweep(existing: (Set<String>) throws -> [String: String]) rethrows -> Int {
        var removed = 0
        for conversationId in Self.entries(of: group.attachmentsPath) {
            let directory = group.attachmentsPath(conversationId: conversationId)
            let names = Self.entries(of: directory)
            let known = try existing(Set(names.compactMap(Self.messageId(ofFile:))))
            for name in names {
                if let messageId = Self.messageId(ofFile: name), known[messageId] == conversationId { continue }
                if unlink(directory + "/" + name) == 0 { removed += 1 }
            }
            rmdir(directory)  // only when nothing is left in it
        }
        if removed > 0 {
            _ = DirectorySync.fsync(group.attachmentsPath)
            DaemonLog.info("removed \(removed) stored attachment file(s) with no message (an interrupted send or explode)")
        }
        return removed
    }

    /// The names in a directory, without `.` and `..`; none when it is missing.
    private static func entries(of directory: String) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}
