import Foundation
import SottoClient
import SottoWire
import Testing

/// `AttachmentSaveFile`, the client's half of `sotto save` (docs/adr/0077), on a real file
/// system without a daemon: the name a hostile reference gets (control characters included,
/// which Sotto's sender refuses and another implementation may send), numbering instead of
/// overwriting, the 255-byte bound, and a temporary file that never outlives a failure.
@Suite("Saving a file: the client's writing and naming")
struct AttachmentSaveFileTests {
    private static func directory() throws -> String {
        let path = NSTemporaryDirectory() + "sotto-save-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    private static func names(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).sorted()
    }

    @Test("names with control characters, separators, dots and direction overrides land inside DEST under safe(name)")
    func hostileNames() throws {
        let out = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        let hostile = ["a\u{1B}]0;pwned\u{07}.txt", "line\nbreak", "nul\u{0}byte", "../../etc/passwd", ".bashrc", "..", ".",
                       "  .  ", "evil\u{202E}gpj.exe", "c1\u{85}\u{9B}x", "back\\slash", String(repeating: "é", count: 600)]
        for (index, name) in hostile.enumerated() {
            var file = try AttachmentSaveFile(destination: out)
            try file.write([UInt8(index)])
            let path = try file.commit(name: name)
            let safe = AttachmentFileName.safe(name)
            #expect((0...5).contains { path == out + "/" + AttachmentSaveFile.numbered(safe, $0) }, "\(name) → \(path)")
            #expect(FileManager.default.contents(atPath: path) == Data([UInt8(index)]))
            let last = String(path.dropFirst(out.count + 1))
            #expect(!last.contains("/") && !last.hasPrefix(".") && last.utf8.count <= 255, "\(last)")
            #expect(!last.unicodeScalars.contains { $0.value < 0x20 || (0x7f...0x9f).contains($0.value) || $0 == "\u{202E}" })
        }
        #expect(!Self.names(out).contains { $0.hasPrefix(".") }, "no temporary file left")
    }

    @Test("never overwrites: NAME (1).EXT, NAME (2).EXT, a name without an extension, a 255-byte name kept at 255")
    func numbering() throws {
        #expect(AttachmentSaveFile.numbered("photo.jpg", 0) == "photo.jpg")
        #expect(AttachmentSaveFile.numbered("photo.jpg", 2) == "photo (2).jpg")
        #expect(AttachmentSaveFile.numbered("notes", 1) == "notes (1)")
        #expect(AttachmentSaveFile.numbered("archive.tar.gz", 3) == "archive.tar (3).gz")
        let long = String(repeating: "x", count: 250) + ".jpeg"
        let numbered = AttachmentSaveFile.numbered(long, 12)
        #expect(numbered.utf8.count <= 255 && numbered.hasSuffix("x (12).jpeg"), "\(numbered)")

        let out = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        try Data("keep".utf8).write(to: URL(fileURLWithPath: out + "/photo.jpg"))
        var paths: [String] = []
        for byte in [UInt8(1), 2] {
            var file = try AttachmentSaveFile(destination: out)
            try file.write([byte])
            paths.append(try file.commit(name: "photo.jpg"))
        }
        #expect(paths == [out + "/photo (1).jpg", out + "/photo (2).jpg"])
        #expect(FileManager.default.contents(atPath: out + "/photo.jpg") == Data("keep".utf8))
        #expect(Self.names(out) == ["photo (1).jpg", "photo (2).jpg", "photo.jpg"])
    }

    @Test("an exact DEST: that path; an existing file or a missing directory refused before anything is created; discard leaves nothing")
    func destinations() throws {
        let out = try Self.directory()
        defer { try? FileManager.default.removeItem(atPath: out) }
        var exact = try AttachmentSaveFile(destination: out + "/chosen.bin")
        try exact.write([1, 2, 3])
        #expect(try exact.commit(name: "ignored.txt") == out + "/chosen.bin")
        #expect(FileManager.default.contents(atPath: out + "/chosen.bin") == Data([1, 2, 3]))

        #expect(throws: AttachmentSaveFile.Failure.self) { try AttachmentSaveFile(destination: out + "/chosen.bin") }
        #expect(throws: AttachmentSaveFile.Failure.self) { try AttachmentSaveFile(destination: out + "/no/such/dir.bin") }
        #expect(throws: AttachmentSaveFile.Failure.self) { try AttachmentSaveFile(destination: out + "/nodir/") }

        // An exact path that appears while the bytes arrive is not replaced.
        var raced = try AttachmentSaveFile(destination: out + "/late.bin")
        try raced.write([9])
        try Data("theirs".utf8).write(to: URL(fileURLWithPath: out + "/late.bin"))
        #expect(throws: AttachmentSaveFile.Failure.self) { _ = try raced.commit(name: "x") }
        #expect(FileManager.default.contents(atPath: out + "/late.bin") == Data("theirs".utf8))

        var dropped = try AttachmentSaveFile(destination: out)
        try dropped.write([UInt8](repeating: 7, count: 100_000))
        #expect(Self.names(out).contains { $0.hasPrefix(".sotto-save-") }, "the bytes go to a hidden temporary file")
        dropped.discard()
        #expect(Self.names(out) == ["chosen.bin", "late.bin"])
    }
}
