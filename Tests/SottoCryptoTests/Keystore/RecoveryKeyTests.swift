import Foundation
import SottoCrypto
import TestSupport
import Testing

/// The recovery key (docs/adr/0038): a format a person copies by hand, and an import that
/// writes nothing unless the key opens every sealed identity.
@Suite("Recovery key")
struct RecoveryKeyTests {
    // MARK: - The text

    @Test("Fixed keys encode as a second implementation (Python's base64.b32encode and hashlib) spells them")
    func vectors() throws {
        let zeroTo31 = SecretBytes(Array(0..<32).map(UInt8.init))
        #expect(RecoveryKey.encode(zeroTo31) == "SOTTO1-AAAQE-AYEAU-DAOCA-JBIFQ-YDIOB-4IBCE-QTCQK-RMFYY-DENBW-HA5DY-PZEKQ")
        #expect(RecoveryKey.encode(SecretBytes([UInt8](repeating: 0xff, count: 32)))
                == "SOTTO1-77777-77777-77777-77777-77777-77777-77777-77777-77777-77777-77P4Q")
        #expect(try RecoveryKey.decode("SOTTO1-AAAQE-AYEAU-DAOCA-JBIFQ-YDIOB-4IBCE-QTCQK-RMFYY-DENBW-HA5DY-PZEKQ").isEqual(to: zeroTo31))
    }

    @Test("Round trip, and what a person may change while copying: case, spaces, line breaks, dashes, no prefix")
    func roundTripAndLenientReading() throws {
        for _ in 0..<50 {
            let key = SecretBytes(SecureRandom.bytes(32))
            let text = RecoveryKey.encode(key)
            #expect(text.hasPrefix("SOTTO1-") && text.count == 7 + 55 + 10)
            #expect(try RecoveryKey.decode(text).isEqual(to: key))
            #expect(try RecoveryKey.decode(text.lowercased()).isEqual(to: key))
            let bare = String(text.dropFirst(7)).replacingOccurrences(of: "-", with: " ")
            #expect(try RecoveryKey.decode("  " + bare + "\n").isEqual(to: key))
            #expect(try RecoveryKey.decode(bare.replacingOccurrences(of: " ", with: "\r\n")).isEqual(to: key))
        }
    }

    @Test("Every one-character typo of a fixed key is caught by its check characters")
    func typosAreCaught() throws {
        let text = Array(RecoveryKey.encode(SecretBytes(Array(0..<32).map(UInt8.init))).dropFirst(7).filter { $0 != "-" })
        for index in text.indices {
            var typo = text
            typo[index] = typo[index] == "Q" ? "R" : "Q"
            #expect(throws: RecoveryKey.Failure.self, "position \(index)") { try RecoveryKey.decode(String(typo)) }
        }
    }

    @Test("Garbage is refused with a reason that does not repeat it")
    func garbage() {
        let valid = RecoveryKey.encode(SecretBytes(SecureRandom.bytes(32)))
        let cases: [(String, RecoveryKey.Failure)] = [
            ("", .wrongLength(0)),
            ("SOTTO1-", .wrongLength(0)),
            (String(valid.dropLast()), .wrongLength(54)),
            (valid + "A", .wrongLength(56)),
            (String(valid.dropLast(5)) + "01890", .notBase32),
            (String(valid.dropLast(5)) + "ÄÖÜ€!", .notBase32),
            (String(repeating: "A", count: 5_000), .tooLong),
            (String(repeating: "A", count: 55), .checkFailed),
            (String(valid.dropLast()) + "7", .checkFailed),   // low bits of the last character set, or a wrong check
        ]
        for (text, expected) in cases {
            do {
                _ = try RecoveryKey.decode(text)
                Issue.record("accepted \(text.prefix(20))")
            } catch {
                #expect(error == expected, "\(text.prefix(20)): \(error)")
                #expect(!error.description.contains(text.dropFirst(7).prefix(10)) || text.count < 17)
            }
        }
    }

    // MARK: - Import

    @Test("Import writes master.key only for the key that opens every sealed identity; the same key again is a no-op; another key in place is refused")
    func importChecksBeforeWriting() throws {
        let temp = try TemporaryDirectory()
        let dir = temp.path + "/keystore"
        let original = try Keystore(directory: dir, environment: [:], createIfMissing: true)
        for _ in 0..<3 { try original.save(Identity.generate()) }
        try original.storeUnused(Identity.generate())
        let recovery = original.recoveryKey()
        let keyFile = dir + "/master.key"
        let saved = try Data(contentsOf: URL(fileURLWithPath: keyFile))
        try FileManager.default.removeItem(atPath: keyFile)

        // A wrong key: refused, nothing written.
        #expect(throws: KeystoreError.self) {
            try Keystore.importMasterKey(SecretBytes(SecureRandom.bytes(32)), directory: dir)
        }
        #expect(!FileManager.default.fileExists(atPath: keyFile))

        #expect(try Keystore.importMasterKey(try RecoveryKey.decode(recovery), directory: dir) == .installed(opened: 4))
        #expect(try Data(contentsOf: URL(fileURLWithPath: keyFile)) == saved)
        #expect(try Keystore(directory: dir, environment: [:]).list().count == 3)
        #expect(try Keystore.importMasterKey(try RecoveryKey.decode(recovery), directory: dir) == .alreadyInPlace(opened: 4))

        // Another key in a keystore with nothing sealed yet: still not over the key in place.
        let empty = temp.path + "/empty"
        _ = try Keystore(directory: empty, environment: [:], createIfMissing: true)
        let before = try Data(contentsOf: URL(fileURLWithPath: empty + "/master.key"))
        #expect(throws: KeystoreError.self) { try Keystore.importMasterKey(try RecoveryKey.decode(recovery), directory: empty) }
        #expect(try Data(contentsOf: URL(fileURLWithPath: empty + "/master.key")) == before)

        // No keystore at all: an error, no directory made.
        #expect(throws: KeystoreError.self) {
            try Keystore.importMasterKey(try RecoveryKey.decode(recovery), directory: temp.path + "/absent")
        }
        #expect(!FileManager.default.fileExists(atPath: temp.path + "/absent"))
    }
}
