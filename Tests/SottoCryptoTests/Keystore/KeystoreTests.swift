import Foundation
import SottoCrypto
import SottoWire
import Synchronization
import TestSupport
import Testing

@Suite("Keystore", .serialized)
struct KeystoreTests {
    func withKeystore(_ body: (Keystore, String) throws -> Void) throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let dir = temp.path + "/keystore"
        try body(try Keystore(directory: dir, environment: [:], createIfMissing: true), dir)
    }

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func expectError(_ expected: (KeystoreError) -> Bool, _ body: () throws -> Void, sourceLocation: SourceLocation = #_sourceLocation) {
        do {
            try body()
            Issue.record("no error", sourceLocation: sourceLocation)
        } catch let error as KeystoreError {
            #expect(expected(error), "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("unexpected \(error)", sourceLocation: sourceLocation)
        }
    }

    func isCorrupt(_ e: KeystoreError) -> Bool { if case .corrupt = e { true } else { false } }
    func isInsecure(_ e: KeystoreError) -> Bool { if case .insecure = e { true } else { false } }
    func isUnavailable(_ e: KeystoreError) -> Bool { if case .unavailable = e { true } else { false } }

    @Test func saveLookupListAndModes() throws {
        try withKeystore { keystore, dir in
            let a = Identity.generate(), b = Identity.generate()
            try keystore.save(a)
            try keystore.save(b)
            #expect(try keystore.identity(clientId: a.clientId).isSame(as: a))
            #expect(try keystore.identity(inboxId: b.inboxId).isSame(as: b))
            #expect(Set(try keystore.list().map(\.clientId)) == [a.clientId, b.clientId])
            #expect(throws: KeystoreError.duplicateClientId) { try keystore.save(a) }
            #expect(try mode(dir) == 0o700)
            #expect(try mode("\(dir)/\(a.clientId).identity") == 0o600)
            #expect(try mode("\(dir)/master.key") == 0o600)
            // No key bytes in the file in clear.
            let file = try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(a.clientId).identity"))
            #expect(file.range(of: Data(a.privateKey.exportBytes())) == nil)
            // A second process's view: a fresh Keystore on the same directory reads the same identity.
            #expect(try Keystore(directory: dir, environment: [:]).identity(clientId: a.clientId).isSame(as: a))
        }
    }

    @Test func missingVersusUnavailable() throws {
        try withKeystore { keystore, dir in
            #expect(throws: KeystoreError.missing) { try keystore.identity(clientId: SecureRandom.uuidV4()) }
            #expect(throws: KeystoreError.missing) { try keystore.identity(inboxId: String(repeating: "ab", count: 32)) }
            #expect(throws: KeystoreError.missing) { try keystore.identity(clientId: "../master.key") }
            expectError(isUnavailable) { _ = try Keystore(directory: dir + "/nope", environment: [:]) }
            // A reader finds no master key: locked (docs/adr/0045), and it does not create one.
            try FileManager.default.removeItem(atPath: dir + "/master.key")
            expectError({ if case .locked = $0 { true } else { false } }) { _ = try Keystore(directory: dir, environment: [:]) }
            #expect(!FileManager.default.fileExists(atPath: dir + "/master.key"))
        }
    }

    @Test func refusesLoosePermissionsOwnerAndSymlinks() throws {
        try withKeystore { keystore, dir in
            let a = Identity.generate()
            try keystore.save(a)
            let file = "\(dir)/\(a.clientId).identity"
            chmod(file, 0o640)
            expectError(isInsecure) { _ = try keystore.identity(clientId: a.clientId) }
            chmod(file, 0o600)
            #expect(try keystore.identity(clientId: a.clientId).isSame(as: a))
            #expect(chown(file, 65534, 65534) == 0)
            expectError(isInsecure) { _ = try keystore.identity(clientId: a.clientId) }
            #expect(chown(file, geteuid(), getegid()) == 0)
            // Symlink to a perfectly valid copy: still refused.
            try FileManager.default.moveItem(atPath: file, toPath: dir + "/elsewhere")
            try FileManager.default.createSymbolicLink(atPath: file, withDestinationPath: dir + "/elsewhere")
            expectError(isInsecure) { _ = try keystore.identity(clientId: a.clientId) }
            // A FIFO in place of the file: refused without blocking.
            try FileManager.default.removeItem(atPath: file)
            #expect(mkfifo(file, 0o600) == 0)
            expectError(isInsecure) { _ = try keystore.identity(clientId: a.clientId) }
            chmod(dir, 0o755)
            expectError(isInsecure) { _ = try Keystore(directory: dir, environment: [:]) }
            chmod(dir, 0o700)
            let link = dir + "-link"
            try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir)
            defer { try? FileManager.default.removeItem(atPath: link) }
            expectError(isInsecure) { _ = try Keystore(directory: link, environment: [:]) }
        }
    }

    @Test func tamperedTruncatedGarbageOversizeSwapped() throws {
        try withKeystore { keystore, dir in
            let a = Identity.generate(), b = Identity.generate()
            try keystore.save(a)
            try keystore.save(b)
            let path = "\(dir)/\(a.clientId).identity"
            let original = try Data(contentsOf: URL(fileURLWithPath: path))
            func put(_ data: Data, at target: String? = nil) throws {
                let url = URL(fileURLWithPath: target ?? path)
                try data.write(to: url)
                chmod(url.path, 0o600)
            }
            for index in [0, 20, 50, 80, 100, original.count - 1] {
                var bytes = original
                bytes[index] ^= 0x01
                try put(bytes)
                expectError(isCorrupt) { _ = try keystore.identity(clientId: a.clientId) }
            }
            try put(original.prefix(100))
            expectError(isCorrupt) { _ = try keystore.identity(clientId: a.clientId) }
            try put(Data())
            expectError(isCorrupt) { _ = try keystore.identity(clientId: a.clientId) }
            try put(Data(SecureRandom.bytes(original.count)))
            expectError(isCorrupt) { _ = try keystore.identity(clientId: a.clientId) }
            try put(Data(count: 10_000))
            expectError(isCorrupt) { _ = try keystore.identity(clientId: a.clientId) }
            // b's sealed file under a's name: the authenticated header names b.
            try put(try Data(contentsOf: URL(fileURLWithPath: "\(dir)/\(b.clientId).identity")))
            expectError(isCorrupt) { _ = try keystore.identity(clientId: a.clientId) }
            // a's alias pointing at b: lookup by a's inbox must not return b.
            try put(Data(b.clientId.utf8), at: "\(dir)/\(a.inboxId).inbox")
            #expect(throws: KeystoreError.missing) { try keystore.identity(inboxId: a.inboxId) }
            try put(original)
            #expect(try keystore.identity(clientId: a.clientId).isSame(as: a))
            // Another master key cannot open it (and the daemon never makes one over sealed files).
            try FileManager.default.removeItem(atPath: dir + "/master.key")
            expectError(isUnavailable) { _ = try Keystore(directory: dir, environment: [:], createIfMissing: true) }
            #expect(!FileManager.default.fileExists(atPath: dir + "/master.key"))
            try put(Data(SecureRandom.bytes(32)), at: dir + "/master.key")
            let other = try Keystore(directory: dir, environment: [:])
            expectError(isCorrupt) { _ = try other.identity(clientId: a.clientId) }
        }
    }

    @Test func credentialsDirectoryMasterKey() throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let credentials = temp.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: false)
        let keyPath = credentials + "/sotto-keystore-key"
        try Data((Hex.encode(SecureRandom.bytes(32)) + "\n").utf8).write(to: URL(fileURLWithPath: keyPath))
        chmod(keyPath, 0o400)
        let env = ["CREDENTIALS_DIRECTORY": credentials]
        let dir = temp.path + "/keystore"
        let keystore = try Keystore(directory: dir, environment: env, createIfMissing: true)
        let a = Identity.generate()
        try keystore.save(a)
        #expect(!FileManager.default.fileExists(atPath: dir + "/master.key"))
        #expect(try Keystore(directory: dir, environment: env).identity(clientId: a.clientId).isSame(as: a))
        // Without the credential the daemon must not make its own master.key, which could never open a.
        expectError(isUnavailable) { _ = try Keystore(directory: dir, environment: [:], createIfMissing: true) }
        #expect(!FileManager.default.fileExists(atPath: dir + "/master.key"))
        expectError(isUnavailable) { _ = try Keystore(directory: dir, environment: ["CREDENTIALS_DIRECTORY": temp.path]) }
        chmod(keyPath, 0o644)
        expectError(isInsecure) { _ = try Keystore(directory: dir, environment: env) }
    }

    @Test func deleteZeroesThenUnlinks() throws {
        try withKeystore { keystore, dir in
            let a = Identity.generate()
            try keystore.save(a)
            let path = "\(dir)/\(a.clientId).identity"
            // A hard link keeps the inode reachable, to check its bytes were overwritten.
            let witness = dir + "-witness"
            #expect(link(path, witness) == 0)
            defer { unlink(witness) }
            try keystore.delete(inboxId: a.inboxId)
            #expect(!FileManager.default.fileExists(atPath: path))
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/\(a.inboxId).inbox"))
            let left = try Data(contentsOf: URL(fileURLWithPath: witness))
            #expect(left.count == 176 && left.allSatisfy { $0 == 0 })
            #expect(throws: KeystoreError.missing) { try keystore.identity(clientId: a.clientId) }
            #expect(throws: KeystoreError.missing) { try keystore.delete(inboxId: a.inboxId) }
        }
    }

    @Test("delete by both ids wipes identity and alias, is idempotent, and leaves another inbox's file alone")
    func deleteByTombstoneIds() throws {
        try withKeystore { keystore, dir in
            let a = Identity.generate(), b = Identity.generate()
            try keystore.save(a)
            try keystore.save(b)
            // The alias already gone (a crash between the two wipes): the identity still goes.
            #expect(unlink("\(dir)/\(a.inboxId).inbox") == 0)
            try keystore.delete(clientId: a.clientId, inboxId: a.inboxId)
            #expect(!FileManager.default.fileExists(atPath: "\(dir)/\(a.clientId).identity"))
            try keystore.delete(clientId: a.clientId, inboxId: a.inboxId)   // again: nothing left to do
            // A clientId paired with the wrong inbox: b's file claims b's inbox, so it stays.
            try keystore.delete(clientId: b.clientId, inboxId: a.inboxId)
            #expect(try keystore.identity(clientId: b.clientId).inboxId == b.inboxId)
            // A damaged file under the tombstone's clientId (no readable header) is wiped too.
            let c = Identity.generate()
            let damaged = "\(dir)/\(c.clientId).identity"
            #expect(FileManager.default.createFile(atPath: damaged, contents: Data(repeating: 7, count: 40),
                                                   attributes: [.posixPermissions: 0o600]))
            try keystore.delete(clientId: c.clientId, inboxId: c.inboxId)
            #expect(!FileManager.default.fileExists(atPath: damaged))
        }
    }

    /// `writeAtomically` links its `.tmp-` file into place, then unlinks the temp name: a kill
    /// between the two, or a power cut whose disk kept the link and not the unlink, leaves a
    /// `.tmp-` that is a second name of the real file. Zeroing it zeroes the identity or the
    /// master key itself.
    @Test("a .tmp- already linked into place (killed between writeAtomically's link and unlink): the sweep removes the name only; the identity and master.key keep their bytes; a leftover linked only outside the keystore is still zeroed")
    func sweepLeavesLinkedTempBytes() throws {
        try withKeystore { keystore, dir in
            let a = Identity.generate()
            try keystore.save(a)
            let identityFile = "\(dir)/\(a.clientId).identity", keyFile = "\(dir)/master.key"
            let identityBytes = try #require(FileManager.default.contents(atPath: identityFile))
            let keyBytes = try #require(FileManager.default.contents(atPath: keyFile))
            #expect(link(identityFile, "\(dir)/.tmp-00112233aabbccdd") == 0)
            #expect(link(keyFile, "\(dir)/.tmp-44556677eeff0011") == 0)
            // A second name outside the keystore (a backup's, the test file system's own) does
            // not count: that leftover is zeroed as always.
            let doomed = "\(dir)/.deleted-8899aabbccddeeff", outside = (dir as NSString).deletingLastPathComponent + "/outside"
            #expect(FileManager.default.createFile(atPath: doomed, contents: Data([1, 2, 3]), attributes: [.posixPermissions: 0o600]))
            #expect(link(doomed, outside) == 0)
            #expect(try keystore.sweepLeftovers() == 3)
            #expect(FileManager.default.contents(atPath: outside) == Data([0, 0, 0]), "a leftover linked outside was not zeroed")
            let names = try FileManager.default.contentsOfDirectory(atPath: dir)
            #expect(!names.contains { $0.hasPrefix(".") }, "\(names)")
            #expect(FileManager.default.contents(atPath: identityFile) == identityBytes, "the identity was zeroed")
            #expect(FileManager.default.contents(atPath: keyFile) == keyBytes, "master.key was zeroed")
            #expect(try Keystore(directory: dir, environment: [:]).identity(clientId: a.clientId).inboxId == a.inboxId)
        }
    }

    /// `claimUnused` links the slot to `<clientId>.identity`, then unlinks the slot: a kill
    /// between the two leaves `unused.identity` as a second name of the claimed identity.
    @Test("a claim of the unused slot killed between its link and its unlink: the sweep finishes it (the slot's name goes, the identity keeps its bytes), and a take never zeroes the claimed identity")
    func interruptedClaimIsFinished() throws {
        for sweepFirst in [true, false] {
            try withKeystore { keystore, dir in
                let spare = Identity.generate()
                try keystore.storeUnused(spare)
                let slot = "\(dir)/unused.identity", named = "\(dir)/\(spare.clientId).identity"
                let bytes = try #require(FileManager.default.contents(atPath: slot))
                #expect(link(slot, named) == 0)  // the claim's link; its unlink never came
                if sweepFirst {
                    #expect(try keystore.sweepLeftovers() == 1)
                    #expect(!FileManager.default.fileExists(atPath: slot), "the sweep left the claimed slot")
                }
                #expect(try keystore.takeUnused() == nil, "the claimed identity was handed out as unused again")
                #expect(FileManager.default.contents(atPath: named) == bytes, "the claimed identity was zeroed")
                #expect(try keystore.identity(clientId: spare.clientId).inboxId == spare.inboxId)
                #expect(try keystore.peekUnused() == nil)
            }
        }
    }

    @Test("leftovers of a killed operation (.deleted-, .taken-, .tmp-) are wiped; identities stay")
    func sweepLeftoversWipesOnlyLeftovers() throws {
        try withKeystore { keystore, dir in
            let a = Identity.generate()
            try keystore.save(a)
            for name in [".deleted-0011223344556677", ".taken-8899aabbccddeeff", ".tmp-0123456789abcdef"] {
                #expect(FileManager.default.createFile(atPath: "\(dir)/\(name)", contents: Data([1, 2, 3]),
                                                       attributes: [.posixPermissions: 0o600]))
            }
            #expect(try keystore.sweepLeftovers() == 3)
            let names = try FileManager.default.contentsOfDirectory(atPath: dir)
            #expect(!names.contains { $0.hasPrefix(".") }, "\(names)")
            #expect(try keystore.identity(clientId: a.clientId).inboxId == a.inboxId)
            #expect(try keystore.sweepLeftovers() == 0)
        }
    }

    @Test func unusedSlotTakeIsExclusive() async throws {
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let keystore = try Keystore(directory: temp.path + "/keystore", environment: [:], createIfMissing: true)
        #expect(try keystore.peekUnused() == nil)
        #expect(try keystore.takeUnused() == nil)
        for _ in 0..<20 {
            let spare = Identity.generate()
            try keystore.storeUnused(spare)
            #expect(try keystore.peekUnused()?.isSame(as: spare) == true)
            let taken = try await withThrowingTaskGroup(of: Identity?.self) { group in
                for _ in 0..<8 { group.addTask { try keystore.takeUnused() } }
                var got: [Identity] = []
                for try await result in group { if let result { got.append(result) } }
                return got
            }
            #expect(taken.count == 1)
            #expect(taken.first?.isSame(as: spare) == true)
            #expect(try keystore.peekUnused() == nil)
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: temp.path + "/keystore")
        #expect(names == ["master.key"])
    }

    @Test func claimingTheUnusedSlotMakesARegularIdentityWithoutCopies() throws {
        let temp = try TemporaryDirectory()
        let dir = temp.path + "/keystore"
        let keystore = try Keystore(directory: dir, environment: [:], createIfMissing: true)
        let spare = Identity.generate()
        #expect(try keystore.claimUnused(expectedInboxId: spare.inboxId) == nil)   // empty slot
        try keystore.storeUnused(spare)
        #expect(try keystore.claimUnused(expectedInboxId: Identity.generate().inboxId) == nil)   // holds another
        #expect(try keystore.peekUnused()?.isSame(as: spare) == true)             // a refused claim changes nothing

        let claimed = try #require(try keystore.claimUnused(expectedInboxId: spare.inboxId))
        #expect(claimed.isSame(as: spare))
        #expect(try keystore.peekUnused() == nil)
        #expect(try keystore.identity(clientId: spare.clientId).isSame(as: spare))
        #expect(try keystore.identity(inboxId: spare.inboxId).isSame(as: spare))
        let names = Set(try FileManager.default.contentsOfDirectory(atPath: dir))
        #expect(names == ["master.key", spare.clientId + ".identity", spare.inboxId + ".inbox"])
    }

    @Test("a claim of the unused slot racing refills of it (two threads): each claimed clientId's file opens as the identity claimed, or the claim is refused; never another identity under its name")
    func claimRacingRefillsNeverMovesTheNextIdentity() throws {
        try withKeystore { keystore, _ in
            try keystore.storeUnused(Identity.generate())
            let refilling = Mutex(true)
            let refiller = Thread {
                for _ in 0..<300 { try? keystore.storeUnused(Identity.generate()) }
                refilling.withLock { $0 = false }
            }
            refiller.start()
            var claimed = 0, notThere = 0, wrong: [String] = []
            while refilling.withLock({ $0 }) {
                guard let peeked = try keystore.peekUnused() else { continue }
                guard let got = try keystore.claimUnused(expectedInboxId: peeked.inboxId) else {
                    notThere += 1
                    continue
                }
                claimed += 1
                #expect(got.isSame(as: peeked))
                do {
                    if !(try keystore.identity(clientId: got.clientId).isSame(as: got)) { wrong.append("another identity") }
                } catch {
                    wrong.append("\(error)")
                }
            }
            print("KEYSTORE claim race: claimed=\(claimed) replacedBeforeTheClaim=\(notThere) wrong=\(wrong.count)")
            #expect(claimed > 0)
            #expect(wrong.count == 0, "claimed clientIds holding the wrong bytes, e.g. \(wrong.first ?? "")")
        }
    }

    @Test func readerProcessNeverSeesATornWrite() throws {
        let probe = try builtExecutable("sotto-keystore-probe")
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let dir = temp.path + "/keystore"
        let a = Identity.generate()
        try Keystore(directory: dir, environment: [:], createIfMissing: true).save(a)
        let stopFile = temp.path + "/stop"

        let reader = Process()
        reader.executableURL = URL(fileURLWithPath: probe)
        reader.arguments = ["read", dir, a.clientId, stopFile]
        let readerOut = Pipe()
        reader.standardOutput = readerOut
        try reader.run()
        // Wait for the reader's first good read (a real event on its stdout), so it overlaps the writer.
        var firstLine = Data()
        while !firstLine.contains(0x0a) {
            let chunk = readerOut.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            firstLine.append(chunk)
        }
        #expect(String(decoding: firstLine, as: UTF8.self).hasPrefix("ready"))

        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: probe)
        writer.arguments = ["write", dir, a.clientId, "300"]
        let writerOut = Pipe()
        writer.standardOutput = writerOut
        try writer.run()
        let writerText = String(decoding: writerOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        writer.waitUntilExit()
        _ = FileManager.default.createFile(atPath: stopFile, contents: nil)
        let readerText = String(decoding: firstLine + readerOut.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reader.waitUntilExit()

        #expect(writer.terminationReason == .exit && writer.terminationStatus == 0, "\(writerText)")
        #expect(reader.terminationReason == .exit && reader.terminationStatus == 0, "\(readerText)")
        #expect(writerText.contains("wrote=300"))
        let summary = try #require(readerText.split(separator: "\n").last { $0.hasPrefix("ok=") })
        let fields = Dictionary(uniqueKeysWithValues: summary.split(separator: " ").map {
            let pair = $0.split(separator: "=")
            return (String(pair[0]), Int(pair[1]) ?? -1)
        })
        #expect(fields["torn"] == 0, "\(summary)")
        #expect((fields["ok"] ?? 0) > 1, "\(summary)")
        // Both versions were observed, so reads really interleaved with the rewrites.
        #expect(fields["distinct"] == 2, "\(summary)")
    }
}
