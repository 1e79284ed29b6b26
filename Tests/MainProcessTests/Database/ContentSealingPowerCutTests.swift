import Foundation
import SharedStore
import SottoWire
import TestSupport
import Testing

/// Issue #21 for the v9 → v10 content sealing (docs/adr/0052): the daemon SIGKILLs itself at
/// each of the migration's named steps and the power goes with it, the group directory on the
/// power-cut file system (docs/adr/0037, `keepFreed`), which forgets what was not fsynced.
/// After the remount the file is the v9 one, whole (its five plaintext messages, integrity
/// ok); the next start seals it and every message reads; once that daemon stopped (its
/// checkpoint) the power goes again, and no text, name or profile name is on any file of the
/// disk, named or freed, while every message still reads.
@Suite("Content sealing migration: power cut", .serialized,
       .enabled(if: PowerCutFileSystem.isAvailable, "needs root, /dev/fuse and fusermount3"))
struct ContentSealingPowerCutTests {
    @Test("Killed at a sealing step and the power cut with it: v9 whole after the remount, sealed at the next start, no plaintext on the disk after a second cut",
          arguments: ["migrate.sealing.conversationSealed", "migrate.sealing.allSealed"])
    func sealingSurvivesPowerCut(point: String) throws {
        let tmp = try TemporaryDirectory(prefix: "seal-cut")
        defer { tmp.remove() }
        let disk = try PowerCutFileSystem.mount(in: tmp.path, keepFreed: true)
        defer { disk.abandon() }
        let (dana, conversationId, name, profile, texts) = try ContentSealingMigrationTests.v9Install(in: tmp.path,
                                                                                                      groupIn: disk.mountpoint)
        defer { dana.stop() }
        try disk.syncEverything()  // the v9 install is old

        try dana.launchDaemon(environment: [CrashPoint.variable: point])
        #expect(try dana.diedAtCrashPoint(point, timeoutMs: 60_000), "\(point) was never reached")
        print("SEALING power cut \(point): \(try Self.powerCycle(disk, dana))")
        #expect(try dana.query("PRAGMA user_version")[0].int64(0) == 9)
        #expect(try dana.query("PRAGMA integrity_check")[0].string(0) == "ok")
        #expect(try dana.query("SELECT count(*) FROM message WHERE CAST(content AS TEXT) LIKE 'v9-text-%'")[0].int64(0) == 5)

        try dana.startDaemon()
        #expect(try dana.query("PRAGMA user_version")[0].int64(0) == Schema.currentVersion)
        #expect(Set(dana.messages(conversationId).compactMap { $0["text"] as? String }) == Set(texts))
        dana.stopDaemon()  // its checkpoint
        print("SEALING power cut after the migration: \(try Self.powerCycle(disk, dana))")
        for needle in texts + [name, profile] {
            let found = FileSearch.files(containing: Array(needle.utf8), under: disk.backing).map { "disk/" + $0 }
                + FileSearch.files(containing: Array(needle.utf8), under: disk.freed).map { "freed/" + $0 }
            #expect(found.isEmpty, "\(needle) in clear: \(found)")
        }
        #expect(try dana.query("PRAGMA user_version")[0].int64(0) == Schema.currentVersion, "the migration's commit was lost")
        try dana.startDaemon()
        #expect(try dana.query("PRAGMA integrity_check")[0].string(0) == "ok")
        #expect(Set(dana.messages(conversationId).compactMap { $0["text"] as? String }) == Set(texts))
        #expect(try dana.conversation(conversationId)?["name"] as? String == name)
        dana.stop()
        try disk.unmount()
    }

    /// The power goes (`all`): the daemon and the workers stop; the push socket comes back.
    private static func powerCycle(_ disk: PowerCutFileSystem, _ dana: Device) throws -> String {
        let summary = try disk.powerCycle(.all) {
            dana.stopPushSocket()
            dana.stopDaemon(signal: SIGKILL)
        }
        try dana.startPushSocket()
        return summary
    }
}
