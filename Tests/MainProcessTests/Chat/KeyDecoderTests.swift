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
        #expect(decoder.feed(Array("\u{1b}[F\u{1b}OF\u{1b}[4~\u{1b}[8~".utf8)) == [.end, .end, .end, .end], "End in its four forms")
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

    // MARK: Bracketed paste

    static let start = "\u{1b}[200~", end = "\u{1b}[201~"

    @Test("a paste is text with its line breaks, never Enter, never keys")
    func pasteIsText() {
        var decoder = KeyDecoder()
        let keys = decoder.feed(Array("a\(Self.start)line 1\r\nline 2\rline 3\nx\ty\u{3}\u{10}\u{1b}[A\u{7f}é\(Self.end)\r".utf8))
        #expect(keys == [.text("a"), .paste("line 1\nline 2\nline 3\nx    y[Aé", droppedBytes: 0), .enter],
                "CR LF, CR and LF are one break each; a tab is spaces; Ctrl-C, Ctrl-P, ESC and DEL are dropped, not acted on")
        #expect(!decoder.isInPaste)
    }

    @Test("a paste over several reads, its end marker cut in two, is one paste")
    func pasteSplitAcrossReads() {
        var decoder = KeyDecoder()
        let bytes = Array("\(Self.start)first\r\nsecond 🎉\(Self.end)z".utf8)
        // Every cut but after the first ESC (a lone ESC ending a read is the Escape key): the
        // markers, the CR LF and the emoji each cut in every place.
        for cut in 2..<bytes.count {
            var keys = decoder.feed(Array(bytes[0..<cut]))
            keys += decoder.feed(Array(bytes[cut...]))
            #expect(keys == [.paste("first\nsecond 🎉", droppedBytes: 0), .text("z")], "cut at \(cut)")
        }
        var again = KeyDecoder()
        #expect(again.feed(Array("\(Self.start)abc\u{1b}[20".utf8)) == [])
        #expect(again.isInPaste)
        #expect(again.feed(Array("1~".utf8)) == [.paste("abc", droppedBytes: 0)])
        #expect(again.feed([0x0d]) == [.enter], "after the paste, keys again")
    }

    @Test("a huge paste keeps the limit, drops the rest whole, and the keys after it work")
    func hugePasteIsBounded() {
        var decoder = KeyDecoder(pasteLimit: 10)
        var keys = decoder.feed(Array("\(Self.start)12345678é".utf8))
        for _ in 0..<1000 { keys += decoder.feed(Array(repeating: UInt8(ascii: "x"), count: 4096)) }
        keys += decoder.feed(Array("\(Self.end)\r".utf8))
        #expect(keys == [.paste("12345678é", droppedBytes: 4_096_000), .enter])
        var cut = KeyDecoder(pasteLimit: 9)
        #expect(cut.feed(Array("\(Self.start)12345678é\(Self.end)".utf8)) == [.paste("12345678", droppedBytes: 1)],
                "a character the limit cuts is left out whole")
        #expect(PastedText.defaultLimit == 65_536)
    }

    @Test("a paste that never ends: bounded, and Esc or Ctrl-C pressed alone gives it up")
    func unendingPaste() {
        var decoder = KeyDecoder(pasteLimit: 4)
        var keys = decoder.feed(Array("\(Self.start)abc\r".utf8))
        // Each read: 8 bytes dropped, and an ESC[201 that could be the end's start held back; the
        // next read shows it is not (its ESC dropped, 4 bytes past the limit).
        for _ in 0..<100 { keys += decoder.feed(Array("garbage\r\u{3}\u{1b}[201".utf8)) }
        #expect(keys == [] && decoder.isInPaste, "still a paste: its bytes are not keys")
        #expect(decoder.feed([0x1b]) == [.paste("abc\n", droppedBytes: 1_196), .escape])
        #expect(!decoder.isInPaste)
        #expect(decoder.feed(Array("ok\r".utf8)) == [.text("ok"), .enter], "keys again")
        var quitting = KeyDecoder()
        _ = quitting.feed(Array("\(Self.start)half".utf8))
        #expect(quitting.feed([0x03]) == [.paste("half", droppedBytes: 0), .ctrlC])
    }

    @Test("garbage around paste markers: an end marker alone, markers nested")
    func markerGarbage() {
        var decoder = KeyDecoder()
        #expect(decoder.feed(Array("\(Self.end)a".utf8)) == [.text("a")], "an end without a start is an unused key")
        #expect(decoder.feed(Array("\(Self.start)x\(Self.start)y\(Self.end)".utf8)) == [.paste("x[200~y", droppedBytes: 0)],
                "a start inside a paste is text with its ESC dropped")
        #expect(PastedText.notice("a\nb", droppedBytes: 0)?.contains("pasted 2 lines") == true)
        #expect(PastedText.notice("one", droppedBytes: 0) == nil)
    }
}
