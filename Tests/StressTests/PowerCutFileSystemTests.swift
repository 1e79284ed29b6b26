import Foundation
import SharedStore
import Testing
import TestSupport

extension StressSuite {
/// The power-cut file system itself (Tests/PowerCutFS, docs/adr/0037): it must forget exactly
/// what a disk forgets, or the power-cut tests prove nothing.
@Suite("Stress: the power-cut file system", .enabled(if: PowerCutFileSystem.isAvailable, "needs root, /dev/fuse and fusermount3"))
struct PowerCutFileSystemTests {
    @Test("A cut forgets writes and directory changes that were never fsynced, and keeps what was")
    func cutForgetsWhatWasNotSynced() throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-pcfs")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let root = disk.mountpoint
        try Files.write(root + "/old", Array("before".utf8), sync: true)
        try Files.syncDirectory(root)
        try Files.write(root + "/synced", Array(repeating: 0x41, count: 1_000), sync: true)
        try Files.syncDirectory(root)
        try Files.append(root + "/synced", Array(repeating: 0x42, count: 600))            // never fsynced
        try Files.write(root + "/file-only", Array("x".utf8), sync: true)                   // its directory never fsynced
        try Files.write(root + "/tmp-new", Array("new".utf8), sync: true)
        #expect(rename(root + "/tmp-new", root + "/old") == 0)                               // a rename never made durable
        #expect(unlink(root + "/synced") == 0)                                               // an unlink never made durable
        #expect(mkdir(root + "/sub", 0o700) == 0)
        #expect(try disk.pending().writes > 0)

        try disk.powerCycle(.all) {}
        #expect(try Files.read(root + "/synced") == Array(repeating: 0x41, count: 1_000))
        #expect(try Files.read(root + "/old") == Array("before".utf8))
        #expect(access(root + "/file-only", F_OK) != 0)
        #expect(access(root + "/tmp-new", F_OK) != 0)
        #expect(access(root + "/sub", F_OK) != 0)
        try disk.unmount()
    }

    /// A worker acks before its last close, and systemd-socket-activate does not wait for its
    /// children: the unmount of a power cycle must wait for such a late user, not fail EBUSY.
    @Test("A process still holding a file under the mount is named as its user; the unmount waits until it is gone")
    func unmountWaitsForTheLastUser() throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-pcfs")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        try Files.write(disk.mountpoint + "/held", Array("x".utf8), sync: true)
        let holder = try LoggedProcess.launch("/usr/bin/tail", ["-f", disk.mountpoint + "/held"], environment: [:])
        try poll("tail opened the file") { MountUsers.holders(under: disk.mountpoint).contains { $0.hasPrefix("\(holder.pid) ") } }
        #expect(throws: MountUsers.StillInUse.self) { try MountUsers.waitUntilNone(under: disk.mountpoint, timeout: 0.2) }
        let unmounted = Locked<String?>(nil)
        let unmounting = Thread { unmounted.update { $0 = (try? disk.unmount()) ?? "failed" } }
        unmounting.start()
        holder.signal(SIGTERM)
        _ = holder.waitForExit()
        try poll("the unmount finished") { unmounted.value != nil }
        #expect(unmounted.value == "", "unmounted without a cut: \(unmounted.value ?? "nil")")
    }

    private struct TimedOut: Error { let what: String }

    private func poll(_ what: String, timeout: TimeInterval = 60, _ condition: () -> Bool) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition() {
            guard Date() < deadline else { throw TimedOut(what: what) }
            usleep(10_000)
        }
    }

    @Test("What fsync and fsyncdir made durable survives every kind of cut")
    func syncedSurvivesEveryCut() throws {
        for cut in [PowerCutFileSystem.Cut.all, .subset(seed: 5, keepPercent: 0), .torn(seed: 9)] {
            let tmp = try TemporaryDirectory(prefix: "sotto-pcfs")
            let disk = try PowerCutFileSystem.mount(in: tmp.path)
            defer { disk.abandon() }
            let root = disk.mountpoint
            #expect(mkdir(root + "/dir", 0o700) == 0)
            try Files.syncDirectory(root)
            try Files.write(root + "/dir/a", Array(repeating: 7, count: 9_000), sync: true)
            try Files.syncDirectory(root + "/dir")
            try disk.powerCycle(cut) {}
            #expect(try Files.read(root + "/dir/a") == Array(repeating: 7, count: 9_000), "\(cut)")
            try disk.unmount()
        }
    }

    @Test("Positive control: SQLite commits that are not fsynced (synchronous=OFF) are lost to a cut; Sotto's synchronous=FULL ones are not")
    func unsyncedCommitsAreLost() throws {
        for (mode, survivors) in [("OFF", 0), ("FULL", 20)] {
            let tmp = try TemporaryDirectory(prefix: "sotto-pcfs")
            let disk = try PowerCutFileSystem.mount(in: tmp.path)
            defer { disk.abandon() }
            let path = disk.mountpoint + "/control.sqlite"
            do {
                let conn = try SQLiteConnection.open(path: path, profile: .worker, create: true)
                try conn.execute("CREATE TABLE acked (n INTEGER)")
            }
            try disk.syncEverything()
            do {
                let conn = try SQLiteConnection.open(path: path, profile: .worker)
                try conn.execute("PRAGMA synchronous = \(mode)")
                for n in 0..<20 { _ = try conn.run("INSERT INTO acked VALUES (?)", [.integer(Int64(n))]) }
            }
            try disk.powerCycle(.all) {}
            let conn = try SQLiteConnection.open(path: path, profile: .worker)
            #expect(try conn.query("SELECT count(*) FROM acked")[0].int64(0) == Int64(survivors), "synchronous=\(mode)")
            #expect(try conn.query("PRAGMA integrity_check")[0].string(0) == "ok")
        }
    }

    @Test("A torn cut keeps every unsynced write but the last, which ends at a 512-byte boundary; a subset keeps some")
    func tornAndSubset() throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-pcfs")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let path = disk.mountpoint + "/f"
        try Files.write(path, [], sync: true)
        try Files.syncDirectory(disk.mountpoint)
        try Files.append(path, Array(repeating: 1, count: 100))
        try Files.append(path, Array(repeating: 2, count: 4_000))  // offsets 100..<4100: boundaries 512…4096
        let summary = try disk.powerCycle(.torn(seed: 1)) {}
        let torn = try Files.read(path)
        #expect(torn.prefix(100) == ArraySlice(repeating: 1, count: 100))
        #expect(torn.count >= 100 && torn.count <= 4_100)
        #expect(torn.count == 100 || torn.count == 4_100 || torn.count % 512 == 0, "torn at \(torn.count)")
        // The summary counts a write cut short, which the stress line reports (tornWrites).
        #expect(summary.contains(torn.count < 4_100 ? " torn=1;" : " torn=0;"), "\(summary) for \(torn.count) bytes")

        try Files.write(path, [], sync: true)
        for index in 0..<40 {
            let fd = open(path, O_WRONLY)
            #expect(pwrite(fd, [UInt8(index)], 1, off_t(index) * 4_096) == 1)
            close(fd)
        }
        try disk.powerCycle(.subset(seed: 42, keepPercent: 50)) {}
        let kept = try Files.read(path)
        let survivors = (0..<40).filter { $0 * 4_096 < kept.count && kept[$0 * 4_096] == UInt8($0) && $0 > 0 }
        #expect(!survivors.isEmpty && survivors.count < 39, "kept \(survivors.count) of 39 writes")
        try disk.unmount()
    }

    @Test("A write or an fsync fails on command with EIO or ENOSPC, and works again once the fault is cleared")
    func faultsOnCommand() throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-pcfs")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        let fd = open(disk.mountpoint + "/f", O_CREAT | O_RDWR, 0o600)
        try disk.fail(.write, first: 2, error: "ENOSPC")
        #expect(pwrite(fd, [1], 1, 0) == 1)
        #expect(pwrite(fd, [2], 1, 1) == -1 && errno == ENOSPC)
        #expect(pwrite(fd, [3], 1, 2) == 1)
        try disk.fail(.sync, first: 1, error: "EIO", count: 0)
        #expect(fsync(fd) == -1 && errno == EIO)
        #expect(fsync(fd) == -1 && errno == EIO)
        try disk.clearFaults()
        #expect(fsync(fd) == 0)
        #expect(try disk.pending().writes == 0)
        close(fd)
        try disk.unmount()
    }

    @Test("Garbage on the control socket gets an error and changes nothing")
    func garbageCommands() throws {
        let tmp = try TemporaryDirectory(prefix: "sotto-pcfs")
        let disk = try PowerCutFileSystem.mount(in: tmp.path)
        defer { disk.abandon() }
        for line in ["", "cut", "cut sideways", "cut subset x", "fail write 1 EPERM", "fail read 1 EIO", "\u{1}\u{2}", String(repeating: "z", count: 2_000)] {
            #expect(throws: PowerCutFileSystem.Failure.self, "\(line.prefix(20))") { try disk.command(line) }
        }
        try Files.write(disk.mountpoint + "/f", [1], sync: true)  // no cut was armed: changes still work
        #expect(try disk.unmount() == "")
    }
}
}

/// Plain POSIX file helpers for the file-system tests: every call checked, nothing buffered.
private enum Files {
    struct Failure: Error, CustomStringConvertible { let description: String }

    static func write(_ path: String, _ bytes: [UInt8], sync: Bool) throws {
        let fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0o600)
        guard fd >= 0 else { throw Failure(description: "open \(path): errno \(errno)") }
        defer { close(fd) }
        guard bytes.isEmpty || Foundation.write(fd, bytes, bytes.count) == bytes.count else { throw Failure(description: "write: errno \(errno)") }
        if sync, fsync(fd) != 0 { throw Failure(description: "fsync: errno \(errno)") }
    }

    static func append(_ path: String, _ bytes: [UInt8]) throws {
        let fd = open(path, O_WRONLY | O_APPEND)
        guard fd >= 0 else { throw Failure(description: "open \(path): errno \(errno)") }
        defer { close(fd) }
        guard Foundation.write(fd, bytes, bytes.count) == bytes.count else { throw Failure(description: "write: errno \(errno)") }
    }

    static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0, fsync(fd) == 0 else { throw Failure(description: "fsync \(path): errno \(errno)") }
        close(fd)
    }

    static func read(_ path: String) throws -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else { throw Failure(description: "read \(path)") }
        return Array(data)
    }
}
