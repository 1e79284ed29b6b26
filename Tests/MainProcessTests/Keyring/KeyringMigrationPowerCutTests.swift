import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// Issue #21 for issue #20's move of `keystore/master.key` into the Secret Service
/// (docs/adr/0045): the daemon SIGKILLs itself at each named step of the move and the power
/// goes with it. The group directory, keystore included, lies on the power-cut file system
/// (docs/adr/0037, `keepFreed`), which forgets what was not fsynced. The gnome-keyring
/// daemon's own files do not: they are another program's disk, whose durability is that
/// program's; here it only stops and starts again with the machine (a boot, then a login).
/// The kernel keyring's copy of the key is dropped too, as a boot drops it.
///
/// After the restart the key is never lost: the Secret Service holds the old key, the old
/// messages read and a new push is stored. Then the power goes once more, the move finished:
/// no `master.key`, `.tmp-*` or `.deleted-*` comes back, the old key's bytes are on no file
/// of the disk, named or freed (a wipe whose zeros were not fsynced leaves them in a freed
/// inode), and both messages still read. The `keystore-wipe` case removes that fsync
/// (docs/adr/0058 row 4) and must find the key in a freed inode: the search can fail.
@Suite("Keyring: master.key moves into the Secret Service, power cut", .serialized,
       .enabled(if: PowerCutFileSystem.isAvailable, "needs root, /dev/fuse and fusermount3"),
       .enabled(if: SecretServiceSession.unavailableReason == nil, "\(SecretServiceSession.unavailableReason ?? "")"))
struct KeyringMigrationPowerCutTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let point: String
        let cut: PowerCutFileSystem.Cut
        var testDescription: String { "\(point), cut \(cut)" }
    }

    @Test("Killed at each step of the move and the power cut with it: the key is in the Secret Service, nothing is left behind, the old key's bytes are nowhere on the disk, the messages read",
          arguments: [
              Case(point: "keyring.keyStored", cut: .all),
              Case(point: "keyring.keyFileRenamed", cut: .all),
              Case(point: "keyring.keyFileRenamed", cut: .torn(seed: 20)),
          ])
    func moveSurvivesPowerCut(_ test: Case) async throws {
        let outcome = try await onOwnThread { try KeyringMoveAfterCut.run(test.point, test.cut, mutation: nil) }
        print("KEYRING move power cut \(test.testDescription): \(outcome)")
        #expect(outcome.diedAtPoint, "\(test.point) was never reached")
        #expect(outcome.keyringHoldsOldKey, "the key was lost: \(outcome)")
        #expect(outcome.leftAfterRestart.isEmpty, "\(outcome.leftAfterRestart)")
        #expect(outcome.leftAfterSecondCut.isEmpty, "\(outcome.leftAfterSecondCut)")
        #expect(outcome.oldKeyFoundIn.isEmpty, "the old key's bytes are still on the disk: \(outcome.oldKeyFoundIn)")
        #expect(outcome.textsAfterRestart == ["old install"])
        #expect(outcome.pushAfterMoveAcked)
        #expect(outcome.textsAfterSecondCut == ["old install", "after the move"])
    }

    @Test("Without the fsync of the wiped key file's zeros (keystore-wipe), the old key is found in a freed inode after the second cut")
    func searchFindsAnUnsyncedWipe() async throws {
        let outcome = try await onOwnThread {
            try KeyringMoveAfterCut.run("keyring.keyFileRenamed", .all, mutation: .keystoreWipe)
        }
        print("KEYRING move power cut, mutant keystore-wipe: \(outcome)")
        #expect(outcome.diedAtPoint)
        #expect(outcome.keyringHoldsOldKey)
        #expect(outcome.oldKeyFoundIn.contains { $0.hasPrefix("freed/") },
                "the search did not find the key whose zeros were never fsynced: \(outcome)")
    }
}
