import Glibc

/// Why a private directory could not be made or trusted. The description says what to do.
public enum DirectoryError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No candidate: neither the explicit path nor any environment variable gave one.
    case unresolved
    /// It exists but is a symlink, not a directory, or open to group/other.
    case unsafe(String)
    case io(String)

    public var description: String {
        switch self {
        case .unresolved: return "no directory: set SOTTO_GROUP_DIR, XDG_DATA_HOME or HOME"
        case .unsafe(let reason), .io(let reason): return reason
        }
    }
}

/// Where the shared database and keystore live: `--group-dir` > `SOTTO_GROUP_DIR` >
/// `$XDG_DATA_HOME/sotto` > `$HOME/.local/share/sotto`. A pure function of its inputs, so the
/// worker can pass its own environment and tests their own.
///
/// ```swift
/// let dir = GroupDirectory.resolve(explicit: nil, environment: ProcessEnvironment.current())
/// try dir.create()          // 0700, refuses a symlink or a group/other-accessible dir
/// dir.databasePath          // ".../sotto/shared.sqlite"
/// ```
public struct GroupDirectory: Sendable, Equatable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// Without any usable variable, the passwd entry's home directory stands in for `$HOME`.
    public static func resolve(explicit: String?, environment: [String: String]) -> GroupDirectory {
        if let explicit, !explicit.isEmpty { return GroupDirectory(path: explicit) }
        if let dir = environment["SOTTO_GROUP_DIR"], !dir.isEmpty { return GroupDirectory(path: dir) }
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return GroupDirectory(path: PrivateDirectory.join(data, "sotto"))
        }
        if let home = environment["HOME"], home.hasPrefix("/") {
            return GroupDirectory(path: PrivateDirectory.join(home, ".local/share/sotto"))
        }
        return GroupDirectory(path: PrivateDirectory.join(PrivateDirectory.passwdHome(), ".local/share/sotto"))
    }

    public var databasePath: String { PrivateDirectory.join(path, "shared.sqlite") }
    public var keystorePath: String { PrivateDirectory.join(path, "keystore") }
    /// One empty file per awake inbox, named by its clientId: written by the daemon, read by
    /// sotto-relayd, which keeps a relay connection for those only (docs/adr/0056).
    public var awakeMailboxesPath: String { PrivateDirectory.join(path, "awake-mailboxes") }

    /// Each conversation's stored attachment files, `attachments/<conversationId>/<messageId>`
    /// (docs/adr/0074): written by the daemon only.
    public var attachmentsPath: String { PrivateDirectory.join(path, "attachments") }

    /// Where a conversation's stored attachment files are.
    public func attachmentsPath(conversationId: String) -> String {
        PrivateDirectory.join(attachmentsPath, conversationId)
    }

    /// Creates the directory 0700 if missing (parents too, also 0700), else checks it is safe.
    public func create() throws(DirectoryError) {
        try PrivateDirectory.create(path)
    }

    /// A message's stored attachment file `S`, whole: the sender's copy, or a recipient's once
    /// fetched and checked (docs/protocol/attachments.md §7, attachment-relay.md §5.1).
    public func storedAttachmentPath(conversationId: String, messageId: String) -> String {
        attachmentsPath(conversationId: conversationId) + "/" + messageId
    }

    /// Creates a conversation's attachment directory 0700 (and `attachments/`) if missing,
    /// else checks it is safe; returns its path. Both new entries are made durable (their
    /// parents fsynced): a file renamed into it and its directory fsynced must survive a power
    /// cut, which it does not if the directory's own entry is lost (docs/adr/0078).
    public func createAttachmentsDirectory(conversationId: String) throws(DirectoryError) -> String {
        let directory = attachmentsPath(conversationId: conversationId)
        let existed = access(directory, F_OK) == 0
        try PrivateDirectory.create(directory)
        if !existed {
            for parent in [attachmentsPath, path] {
                if let why = DirectorySync.fsync(parent) { throw .io(why) }
            }
        }
        return directory
    }

    /// The check `create()` makes, without creating anything: the worker's side of the one
    /// rule (docs/adr/0019). One `lstat`. A missing directory passes here (opening the
    /// database then fails as it always did).
    public func verify() throws(DirectoryError) {
        var st = stat()
        guard lstat(path, &st) == 0 else {
            if errno == ENOENT { return }
            throw .io("cannot inspect \(path): errno \(errno)")
        }
        try PrivateDirectory.check(path, st)
    }
}

/// Where the sockets live: `SOTTO_RUNTIME_DIR` > `$XDG_RUNTIME_DIR/sotto`.
///
/// ```swift
/// let run = RuntimeDirectory.resolve(environment: env)
/// run.pushSocketPath   // "/run/user/1000/sotto/push.sock"
/// ```
public struct RuntimeDirectory: Sendable, Equatable {
    public let path: String

    public init(path: String) {
        self.path = path
    }

    /// Without either variable, `/run/user/<euid>/sotto` (what systemd-logind provides).
    public static func resolve(environment: [String: String]) -> RuntimeDirectory {
        if let dir = environment["SOTTO_RUNTIME_DIR"], !dir.isEmpty { return RuntimeDirectory(path: dir) }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/") {
            return RuntimeDirectory(path: PrivateDirectory.join(runtime, "sotto"))
        }
        return RuntimeDirectory(path: "/run/user/\(geteuid())/sotto")
    }

    public var controlSocketPath: String { PrivateDirectory.join(path, "control.sock") }
    public var eventsSocketPath: String { PrivateDirectory.join(path, "events.sock") }
    /// Bound by the daemon only while it can post desktop notifications (``NotificationDatagram``).
    public var notificationsSocketPath: String { PrivateDirectory.join(path, "notifications.sock") }
    public var pushSocketPath: String { PrivateDirectory.join(path, "push.sock") }

    /// Creates the directory 0700 if missing, else checks it is safe.
    public func create() throws(DirectoryError) {
        try PrivateDirectory.create(path)
    }
}

/// mkdir -p with 0700 and the safety checks both directories share.
enum PrivateDirectory {
    static func passwdHome() -> String {
        if let entry = getpwuid(geteuid()), let dir = entry.pointee.pw_dir {
            let home = String(cString: dir)
            if home.hasPrefix("/") { return home }
        }
        return "/nonexistent"
    }

    static func join(_ base: String, _ name: String) -> String {
        base.hasSuffix("/") ? base + name : base + "/" + name
    }

    static func create(_ path: String) throws(DirectoryError) {
        guard !path.isEmpty else { throw .unresolved }
        var st = stat()
        if lstat(path, &st) == 0 {
            try check(path, st)
            return
        }
        guard errno == ENOENT else { throw .io("cannot inspect \(path): errno \(errno)") }
        // Create missing parents first (0700 for the ones we make).
        if let slash = path.lastIndex(of: "/"), slash != path.startIndex {
            let parent = String(path[..<slash])
            var pst = stat()
            if lstat(parent, &pst) != 0 {
                try create(parent)
            }
        }
        if mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw .io("cannot create \(path): errno \(errno)")
        }
        guard lstat(path, &st) == 0 else { throw .io("cannot inspect \(path): errno \(errno)") }
        try check(path, st)
    }

    /// The one rule for the daemon and the worker (docs/adr/0019): a real directory, ours,
    /// mode 0700. Anything else is refused, with the command that fixes it.
    static func check(_ path: String, _ st: stat) throws(DirectoryError) {
        let type = st.st_mode & S_IFMT
        if type == S_IFLNK { throw .unsafe("\(path) is a symlink; sotto keeps its data in a real directory: point SOTTO_GROUP_DIR at the target instead") }
        guard type == S_IFDIR else { throw .unsafe("\(path) is not a directory") }
        guard st.st_uid == geteuid() else { throw .unsafe("\(path) belongs to another user (uid \(st.st_uid)); sotto uses only a directory of its own user") }
        guard st.st_mode & 0o077 == 0 else {
            let mode = String(st.st_mode & 0o777, radix: 8)
            throw .unsafe("\(path) is accessible to group or others (mode 0\(mode)); sotto keeps it private: run chmod 700 \(path)")
        }
    }
}
