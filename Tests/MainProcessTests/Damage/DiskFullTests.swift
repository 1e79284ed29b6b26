import Foundation
import SharedStore
import Testing
import TestSupport

extension DamageTests {
    /// A full disk, made real: the group directory on a small tmpfs (root may mount one),
    /// filled up with a file of the test's own.
    @Suite("Disk full", .enabled(if: SmallFileSystem.canMount, SmallFileSystem.skipReason))
    struct DiskFull {
        @Test("a full disk is called a full disk; reading keeps working; refused pushes are stored once space is back")
        func diskFull() throws {
            let home = try DaemonHome()
            let fileSystem = try SmallFileSystem(at: home.groupPath, megabytes: 4)
            defer { fileSystem.unmount() }
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let conversationId = try #require(try daemon.result("newConversation", ["name": "Full"])["conversationId"] as? String)
            let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
            var acked: [String] = []
            for index in 0..<2 {
                acked.append(try #require(try DamageHarness.push(try remote.push("before \(index)"), home: home).ack["messageId"] as? String))
            }

            let filler = fileSystem.fill()
            var refused: (payload: [UInt8], result: (ack: [String: Any], status: Int32, log: String))?
            for index in 0..<200 where refused == nil {
                let payload = try remote.push(String(repeating: "full \(index) ", count: 150))
                let result = try DamageHarness.push(payload, home: home)
                if result.ack["ok"] as? Bool == true {
                    acked.append(try #require(result.ack["messageId"] as? String))
                } else {
                    refused = (payload, result)
                }
            }
            let refusal = try #require(refused, "200 pushes fitted on a full disk")
            DamageHarness.expectRefusedRetryable(refusal.result)
            #expect(refusal.result.log.contains("disk full"), "the worker did not say disk full: \(refusal.result.log)")
            #expect((refusal.result.ack["detail"] as? String ?? "").contains("disk full"), "\(refusal.result.ack)")

            // Reading works on a full disk, and shows everything acked.
            let read = try runCLI(["read", conversationId, "--limit", "500", "--json"], home: home)
            #expect(read.status == 0, "sotto read failed on a full disk: \(read.stderr)")
            let shown = Set((((try? jsonObject(read.stdout))?["messages"]) as? [[String: Any]] ?? []).compactMap { $0["id"] as? String })
            #expect(shown.isSuperset(of: acked))
            let send = try runCLI(["send", conversationId, String(repeating: "x", count: 2000)], home: home)
            #expect(send.status != 0 && send.stderr.contains("disk full"), "sending on a full disk said: \(send)")

            // Space back: the sender's retry is stored.
            try FileManager.default.removeItem(atPath: filler)
            #expect(try DamageHarness.push(refusal.payload, home: home).ack["ok"] as? Bool == true)
        }
    }
}

/// A tmpfs of a few megabytes mounted over a directory, for a real ENOSPC. Needs root (or
/// CAP_SYS_ADMIN); `canMount` finds out once, so the suite is skipped with a reason elsewhere.
final class SmallFileSystem {
    let path: String

    static let canMount: Bool = {
        guard let probe = try? TemporaryDirectory(prefix: "sotto-mnt") else { return false }
        let mounted = mount("tmpfs", probe.path, "tmpfs", 0, "size=64k") == 0
        if mounted { umount2(probe.path, Int32(MNT_DETACH)) }
        return mounted
    }()
    static let skipReason: Comment = "a full disk needs a small tmpfs, and mount(2) is not permitted here (not root / no CAP_SYS_ADMIN)"

    init(at path: String, megabytes: Int) throws {
        self.path = path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        guard mount("tmpfs", path, "tmpfs", 0, "size=\(megabytes)m,mode=0700") == 0 else {
            throw DaemonProcess.Failure(description: "mount tmpfs on \(path): errno \(errno)")
        }
    }

    /// Writes a file until the file system is full; returns its path.
    func fill() -> String {
        let filler = path + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let block = [UInt8](repeating: 0x55, count: 4096)
        while write(fd, block, block.count) > 0 {}
        var byte: UInt8 = 0
        while write(fd, &byte, 1) > 0 {}
        close(fd)
        return filler
    }

    func unmount() {
        umount2(path, Int32(MNT_DETACH))
    }
}
