import SottoWire
import TestSupport
import Testing

/// `AttachmentFileName.safe` on random names: whatever comes in, what comes out can be put
/// in a directory without leaving it, hiding, or spoofing (docs/protocol/attachments.md §6).
/// The exact outputs for the hostile names of issue #35 are vectors (AttachmentVectorTests).
@Suite("Attachment file names")
struct AttachmentFileNameTests {
    @Test("Random names come out safe")
    func randomNames() {
        var rng = SeededGenerator(state: 0x5AFE_0001)
        let alphabet: [Unicode.Scalar] = [".", "/", "\\", " ", "a", "é", "名", "\u{0}", "\u{1b}", "\u{7f}", "\u{9b}", "\u{202e}",
                                          "\u{2066}", "\u{1F408}", "x", "-"]
        for _ in 0..<5000 {
            var scalars = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 1...400, using: &rng) { scalars.append(alphabet.randomElement(using: &rng)!) }
            let safe = AttachmentFileName.safe(String(scalars))
            #expect(!safe.isEmpty && safe.utf8.count <= 255)
            #expect(!safe.hasPrefix(".") && !safe.hasPrefix(" ") && !safe.hasSuffix(" "))
            #expect(!safe.unicodeScalars.contains { $0 == "/" || $0 == "\\" || InertText.neutralised($0) != nil && $0 != "\u{2028}" && $0 != "\u{2029}" })
            #expect(AttachmentFileName.safe(safe) == safe, "safe names are a fixed point")
        }
    }
}
