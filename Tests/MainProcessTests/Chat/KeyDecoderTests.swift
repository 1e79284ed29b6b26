import Testing
@testable import SottoCLI

/// What the terminal sends for each key the chat acts on, including sequences a read cut in two.
@Suite("Chat key decoder")
struct KeyDecoderTests {
    @Test("keys, in their CSI and SS3 forms")
    func keys() {
        var decoder = KeyDecoder()
        #expect(decoder.feed(Array("hé\r".utf8)) == [.text("hé"), .enter])
        #expect(decoder.feed([0x1b, 0x0d]) == [.altEnter])
        #expect(decoder.feed(Array("\u{1b}[A\u{1b}[B\u{1b}OA\u{1b}[5~\u{1b}[6~\t\u{1b}[Z".utf8)) == [.up, .down, .up, .pageUp, .pageDown, .tab, .backTab])
        #expect(decoder.feed([0x7f, 0x03, 0x10, 0x0e, 0x12, 0x14]) == [.backspace, .ctrlC, .previousMessage, .nextMessage, .reply, .react])
        #expect(decoder.feed([0x1b]) == [.escape])
        #expect(decoder.feed([0x0f, 0x06]) == [.editor, .search])
        #expect(decoder.feed(Array("\u{1b}[1;5C".utf8)) == [], "keys it does not use are dropped whole")
    }

    @Test("a sequence or a character cut by a read waits for its rest")
    func splitAcrossReads() {
        var decoder = KeyDecoder()
        #expect(decoder.feed([0x1b, 0x5b, 0x35]) == [])
        #expect(decoder.feed([0x7e]) == [.pageUp])
        let party = Array("🎉".utf8)
        #expect(decoder.feed(Array(party[0..<2])) == [])
        #expect(decoder.feed(Array(party[2...])) == [.text("🎉")])
    }
}
