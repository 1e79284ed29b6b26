import Foundation
import SottoWire

/// The power-cut test file system (`sotto-powercut-fs`, Tests/PowerCutFS, docs/adr/0037)
/// mounted over a backing directory: what was not made durable by fsync/fsyncdir is forgotten
/// when a cut is armed and the file system unmounted, as a power cut would.
///
/// ```swift
/// let disk = try PowerCutFileSystem.mount(in: tmp.path)       // tmp/disk at tmp/mnt
/// … run real processes on disk.mountpoint …
/// try disk.arm(.all)                  // the power goes: every later change fails with EIO
/// … stop the processes …
/// let summary = try disk.unmount()    // "writes kept=0 dropped=12 torn=0; entries removed=1 restored=0"
/// let again = try PowerCutFileSystem.mount(in: tmp.path)      // what the disk kept
/// // or, in one step:
/// try disk.powerCycle(.all) { device.stop() }
/// ```
public final class PowerCutFileSystem: @unchecked Sendable {
    public enum Cut: Sendable, CustomStringConvertible {
        /// Every write and directory change not made durable is lost.
        case all
        /// Each write not made durable survives with `keepPercent` % probability; directory
        /// changes are all lost.
        case subset(seed: UInt32, keepPercent: Int)
        /// Every write survives except the last one, torn at a 512-byte boundary.
        case torn(seed: UInt32)

        public var description: String {
            switch self {
            case .all: "all"
            case .subset(let seed, let keepPercent): "subset \(seed) \(keepPercent)"
            case .torn(let seed): "torn \(seed)"
            }
        }
    }

    public enum Fault: String, Sendable { case write, sync }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let backing: String
    /// With `mount(in:keepFreed: true)`: the files that lost their last name before a cut, with
    /// the bytes the disk kept, as a read of the disk's free blocks would find them (a key whose
    /// zero-overwrite was never fsynced is still there).
    ///
    /// ```swift
    /// let disk = try PowerCutFileSystem.mount(in: tmp.path, keepFreed: true)
    /// … delete a file; try disk.powerCycle(.all) { … }
    /// let leaked = FileSearch.files(containing: secret, under: disk.freed)
    /// ```
    public var freed: String { backing + ".freed" }
    public let mountpoint: String
    public let controlPath: String
    private var process: LoggedProcess
    private var mounted = true

    private init(backing: String, mountpoint: String, controlPath: String, process: LoggedProcess) {
        self.backing = backing
        self.mountpoint = mountpoint
        self.controlPath = controlPath
        self.process = process
    }

    /// FUSE needs /dev/fuse, fusermount3 and root here.
    public static var isAvailable: Bool {
        getuid() == 0 && access("/dev/fuse", R_OK | W_OK) == 0 && access("/usr/bin/fusermount3", X_OK) == 0
            && (try? builtExecutable("sotto-powercut-fs")) != nil
    }

    /// Mounts `directory/disk` (created if missing) at `directory/mnt` and waits until the
    /// kernel has mounted it. `keepFreed`: each cut leaves the inodes it left without a name
    /// in `freed` instead of deleting them (see `freed`).
    public static func mount(in directory: String, keepFreed: Bool = false) throws -> PowerCutFileSystem {
        let backing = directory + "/disk", mountpoint = directory + "/mnt", control = directory + "/powercut.sock"
        for path in [backing, mountpoint] + (keepFreed ? [backing + ".freed"] : [])
        where mkdir(path, 0o700) != 0 && errno != EEXIST {
            throw Failure(description: "mkdir \(path): errno \(errno)")
        }
        return PowerCutFileSystem(backing: backing, mountpoint: mountpoint, controlPath: control,
                                  process: try launch(backing: backing, mountpoint: mountpoint, control: control))
    }

    private static func launch(backing: String, mountpoint: String, control: String) throws -> LoggedProcess {
        let process = try LoggedProcess.launch(try builtExecutable("sotto-powercut-fs"), [backing, mountpoint, control],
                                               environment: ProcessInfo.processInfo.environment)
        guard process.waitForLine(containing: "ready", timeout: 30) else {
            process.signal(SIGKILL)
            _ = process.waitForExit()
            throw Failure(description: "sotto-powercut-fs did not mount: \(process.output.suffix(5))")
        }
        return process
    }

    /// The power goes (`cut`), `stopEverything` stops every process that uses the file system
    /// (a machine without power runs nothing), and the disk comes back with what it kept.
    /// Returns the cut's summary.
    @discardableResult
    public func powerCycle(_ cut: Cut, stopEverything: () throws -> Void) throws -> String {
        try arm(cut)
        try stopEverything()
        let summary = try unmount()
        process = try Self.launch(backing: backing, mountpoint: mountpoint, control: controlPath)
        mounted = true
        return summary
    }

    // MARK: - Commands

    /// Sends one control line and returns the reply after "ok"; throws on "error …".
    @discardableResult
    public func command(_ line: String) throws -> String {
        let fd = UnixSocket.connect(controlPath)
        guard fd >= 0 else { throw Failure(description: "connect \(controlPath): errno \(errno)") }
        defer { close(fd) }
        guard UnixSocket.sendAll(fd, Array((line + "\n").utf8)) else { throw Failure(description: "write: errno \(errno)") }
        let reply = try PushClient.readAll(fd).trimmingCharacters(in: .newlines)
        guard reply == "ok" || reply.hasPrefix("ok ") else { throw Failure(description: "\(line): \(reply)") }
        return String(reply.dropFirst(2)).trimmingCharacters(in: .whitespaces)
    }

    /// Everything written so far is durable (a `sync` before the test's own story begins).
    public func syncEverything() throws { try command("sync") }

    /// The power goes now: every later change fails with EIO; the rollback happens at unmount.
    public func arm(_ cut: Cut) throws { try command("cut \(cut)") }

    /// The `first`-th write (or fsync) from now on, and `count - 1` after it (0: all until
    /// `clearFaults`), fail with `error` ("EIO", "ENOSPC").
    public func fail(_ fault: Fault, first: Int, error: String, count: Int = 1) throws {
        try command("fail \(fault.rawValue) \(first) \(error) \(count)")
    }

    public func clearFaults() throws { try command("clear") }

    /// How many writes and fsyncs the file system counted since the last `fail` of each
    /// (counting stops at `clearFaults`): `seen(.write) >= first` means the armed fault was met.
    ///
    /// ```swift
    /// try disk.fail(.write, first: 3, error: "EIO")
    /// … run the operation …
    /// let met = try disk.seen(.write) >= 3
    /// ```
    public func seen(_ fault: Fault) throws -> Int {
        let reply = try command("seen")
        let field = fault == .write ? "writes=" : "syncs="
        guard let pair = reply.split(separator: " ").first(where: { $0.hasPrefix(field) }),
              let value = Int(pair.dropFirst(field.count)) else { throw Failure(description: "seen: \(reply)") }
        return value
    }

    /// What is not durable yet: files with unsynced writes, the writes, their bytes, directories.
    public func pending() throws -> (files: Int, writes: Int, bytes: Int, directories: Int) {
        let fields = Dictionary(uniqueKeysWithValues: try command("stats").split(separator: " ").compactMap { pair -> (String, Int)? in
            let parts = pair.split(separator: "=")
            guard parts.count == 2, let value = Int(parts[1]) else { return nil }
            return (String(parts[0]), value)
        })
        return (fields["files"] ?? -1, fields["ops"] ?? -1, fields["bytes"] ?? -1, fields["dirs"] ?? -1)
    }

    // MARK: - Unmounting

    /// Unmounts once every process using it has exited, waits for the file system to apply
    /// an armed cut and exit, and returns its "cut: …" summary (empty without a cut).
    @discardableResult
    public func unmount() throws -> String {
        guard mounted else { return "" }
        // A worker's last close can still be on its way after its ack (MountUsers).
        try MountUsers.waitUntilNone(under: mountpoint, timeout: 30)
        let result = try ChildProcess.run("/usr/bin/fusermount3", ["-u", mountpoint])
        guard result.status == 0 else {
            throw Failure(description: "fusermount3 -u: \(result.stderr) (users: \(MountUsers.holders(under: mountpoint)))")
        }
        mounted = false
        let status = process.waitForExit()
        guard status == 0 else { throw Failure(description: "sotto-powercut-fs exited \(status): \(process.output.suffix(5))") }
        return process.output.last { $0.hasPrefix("cut: ") }.map { String($0.dropFirst(5)) } ?? ""
    }

    /// For a test that failed half-way: detach lazily and kill the file system.
    public func abandon() {
        guard mounted else { return }
        _ = try? ChildProcess.run("/usr/bin/fusermount3", ["-u", "-z", mountpoint])
        process.signal(SIGKILL)
        _ = process.waitForExit()
        mounted = false
    }

    deinit { abandon() }
}
