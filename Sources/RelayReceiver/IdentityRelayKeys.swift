import Glibc
import RelayTransport
import SottoWire

/// Each identity's relay user key (an nkey, docs/adr/0051), kept by sotto-relayd in the group
/// directory (`relayd-users/<clientId>.nk`, mode 0600, one `SU…` seed line): random, made the
/// first time relayd holds the identity's mailbox, deleted once the mailbox is retired. It
/// names the identity's consumer on the relay and is the only user that may fetch from, ack
/// or delete it. relayd still opens no identity: the key grants access to the mailbox only.
///
/// ```swift
/// let keys = IdentityRelayKeys(groupDirectory: group.path)
/// switch keys.key(for: clientId, create: true) { case .key(let user): …; case .refused(let why): … }
/// keys.remove(clientId)
/// ```
struct IdentityRelayKeys {
    enum Lookup {
        case key(Nkey)
        /// Absent (with `create: false`), unreadable, or not exactly a user seed: the reason,
        /// never the file's content.
        case refused(String)
        /// A new key could not be made durable (a full disk, an I/O error): nothing is left
        /// under its name, and the next attempt makes another.
        case notWritten(String)
    }

    static let directoryName = "relayd-users"
    let directory: String
    private let groupDirectory: String

    init(groupDirectory: String) {
        self.groupDirectory = groupDirectory
        directory = groupDirectory + "/" + Self.directoryName
    }

    func path(of clientId: String) -> String { directory + "/" + clientId + ".nk" }

    /// The identity's key; with `create`, a new one when it has none. A file that is there but
    /// wrong is never replaced: the consumer on the relay is named by the key it held.
    func key(for clientId: String, create: Bool) -> Lookup {
        let file = path(of: clientId)
        if access(file, F_OK) != 0 {
            guard create else { return .refused("\(file) does not exist") }
            if let why = write(Nkey.generate(.user), to: file) { return .notWritten(why) }
        }
        return read(file)
    }

    func remove(_ clientId: String) {
        unlink(path(of: clientId))
    }

    private func read(_ file: String) -> Lookup {
        var info = stat()
        guard lstat(file, &info) == 0 else { return .refused("cannot read \(file): \(String(cString: strerror(errno)))") }
        guard info.st_mode & S_IFMT == S_IFREG else { return .refused("\(file) is not a regular file") }
        guard info.st_mode & 0o077 == 0 else { return .refused("\(file) is readable by others") }
        guard info.st_size == 59 || info.st_size == 58 else { return .refused("\(file) is \(info.st_size) bytes, not one user seed") }
        let fd = open(file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return .refused("cannot open \(file): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var bytes = [UInt8](repeating: 0, count: 60)
        let count = Glibc.read(fd, &bytes, bytes.count)
        guard count == 58 || (count == 59 && bytes[58] == 0x0a) else { return .refused("\(file) is not one user seed") }
        do throws(RelayError) {
            return .key(try Nkey(seed: String(decoding: bytes[0..<58], as: UTF8.self), kind: .user))
        } catch {
            return .refused("\(file) is not a user seed")
        }
    }

    /// Writes `key` to `file` all or nothing: a private temporary file, synced, then linked to
    /// its name (a key already there wins). nil on success, else the reason.
    private func write(_ key: Nkey, to file: String) -> String? {
        if mkdir(directory, 0o700) == 0 {
            // The new directory's name is an entry of the group directory: without this fsync
            // a power cut can take relayd-users, and every key in it, away (docs/adr/0058).
            if !SyncMutation.skips(.relayKeyParent), let why = DirectorySync.fsync(groupDirectory) {
                rmdir(directory)  // made again, and its parent fsynced, by the next attempt
                return why
            }
        } else if errno != EEXIST {
            return "cannot create \(directory): \(String(cString: strerror(errno)))"
        }
        var template = Array((directory + "/.new-XXXXXX").utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { return "cannot write in \(directory): \(String(cString: strerror(errno)))" }
        let temporary = String(decoding: template.prefix(while: { $0 != 0 }).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let line = Array((key.seedText + "\n").utf8)
        let written = Glibc.write(fd, line, line.count)
        let synced = SyncMutation.skips(.relayKeyFile) || fsync(fd) == 0
        let writeError = errno
        close(fd)
        guard written == line.count, synced else {
            unlink(temporary)
            return "cannot write \(file): \(String(cString: strerror(writeError)))"
        }
        let linked = link(temporary, file) == 0
        let linkError = errno
        // Unlinked before the directory fsync, so a cut cannot bring the temporary (a seed) back.
        unlink(temporary)
        guard linked else {
            guard linkError == EEXIST else { return "cannot create \(file): \(String(cString: strerror(linkError)))" }
            return nil  // another writer's key won; it made its own name durable
        }
        if !SyncMutation.skips(.relayKeyDirectory), let why = DirectorySync.fsync(directory) {
            // A name that a power cut could still take must not name a consumer: the next
            // attempt writes a new key, nothing on the relay has used this one yet.
            unlink(file)
            return why
        }
        return nil
    }
}
