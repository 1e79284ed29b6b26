import SottoCrypto
import SottoWire
import Testing

/// What another device sent is shown inert (docs/adr/0062): every class of code point a
/// terminal, a log reader or a notification server would act on is shown, not obeyed.
@Suite("Inert text")
struct InertTextTests {
    /// The full set from issue #34: CSI, SGR, OSC 0 with BEL, DCS and APC ended by ST, C1 CSI,
    /// BEL, BS, CR + erase-line forging a line, DEL, a right-to-left override and an isolate.
    static let hostile = "hello \u{1B}[2J \u{1B}[31mRED \u{1B}]0;pwned\u{07} \u{1B}Pdcs\u{1B}\\ \u{1B}_apc\u{1B}\\ "
        + "\u{9B}2J csi1 bell\u{07} back\u{08}space \r\u{1B}[K forged line (delivered) del\u{7F} \u{202E}evil\u{2066}iso\u{2069}"

    /// No code point a terminal interprets or that reorders text: C0 (but `allowed`), DEL,
    /// C1, bidirectional controls, line separators.
    static func isInert(_ text: String, allowing allowed: Set<Unicode.Scalar> = []) -> Bool {
        !text.unicodeScalars.contains { scalar in
            guard !allowed.contains(scalar) else { return false }
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: return true
            default: return false
            }
        }
    }

    @Test("the full set on one line: controls as pictures, C1 and bidi by name, the words kept")
    func fullSetOnOneLine() {
        let shown = InertText.line(Self.hostile)
        #expect(Self.isInert(shown))
        #expect(shown == "hello ␛[2J ␛[31mRED ␛]0;pwned␇ ␛Pdcs␛\\ ␛_apc␛\\ <U+009B>2J csi1 bell␇ back␈space "
                + "␍␛[K forged line (delivered) del␡ <U+202E>evil<U+2066>iso<U+2069>")
    }

    @Test("every code point of each class is neutralised", arguments: [
        (0x00...0x1F, InertText.Neutralised.c0), (0x7F...0x7F, .delete), (0x80...0x9F, .c1),
        (0x202A...0x202E, .bidirectional), (0x2066...0x2069, .bidirectional), (0x200E...0x200F, .bidirectional),
        (0x061C...0x061C, .bidirectional), (0x2028...0x2029, .lineSeparator),
    ] as [(ClosedRange<UInt32>, InertText.Neutralised)])
    func classes(range: ClosedRange<UInt32>, expected: InertText.Neutralised) {
        for value in range {
            let scalar = Unicode.Scalar(value)!
            #expect(InertText.neutralised(scalar) == expected, "U+\(value)")
            #expect(Self.isInert(InertText.line("a" + String(scalar) + "b")), "U+\(value)")
            #expect(Self.isInert(InertText.lines("a" + String(scalar) + "b", continuation: "  "), allowing: ["\n", "\t"]), "U+\(value)")
        }
    }

    @Test("the neighbours of each class are shown as they are (space, ~, NBSP, ZWJ, the pictures)")
    func neighbours() {
        for value: UInt32 in [0x20, 0x7E, 0xA0, 0x61B, 0x61D, 0x200D, 0x2010, 0x2027, 0x202F, 0x2065, 0x206A, 0x2400, 0x2421] {
            #expect(InertText.neutralised(Unicode.Scalar(value)!) == nil, "U+\(value)")
        }
    }

    @Test("pictures and names: ESC ␛, BEL ␇, BS ␈, CR ␍, LF ␊, NUL ␀, DEL ␡, CSI <U+009B>, RLO <U+202E>, LRM <U+200E>")
    func shownForms() {
        let pairs: [(Unicode.Scalar, String)] = [("\u{1B}", "␛"), ("\u{07}", "␇"), ("\u{08}", "␈"), ("\r", "␍"), ("\n", "␊"),
                                                 ("\u{00}", "␀"), ("\u{7F}", "␡"), ("\u{9B}", "<U+009B>"),
                                                 ("\u{202E}", "<U+202E>"), ("\u{200E}", "<U+200E>"), ("\u{61C}", "<U+061C>")]
        for (scalar, shown) in pairs { #expect(InertText.shown(scalar) == shown) }
    }

    @Test("lines: LF and CR LF break the line and the next one is marked; a bare CR, and a CR at the end, are shown; tabs stay")
    func multiLine() {
        #expect(InertText.lines("one\ntwo\r\nthree", continuation: "  ┆ ") == "one\n  ┆ two\n  ┆ three")
        #expect(InertText.lines("real\r\u{1B}[Kforged", continuation: "  ┆ ") == "real␍␛[Kforged")
        #expect(InertText.lines("end\r", continuation: "> ") == "end␍")
        #expect(InertText.lines("a\tb", continuation: "> ") == "a\tb")
        #expect(InertText.line("a\tb\nc") == "a␉b␊c")
    }

    @Test("what no class holds is kept as it is: emoji with joiners, accents, right-to-left letters, the pictures themselves")
    func untouched() {
        for text in ["👩‍👩‍👧 família", "שלום עולם", "مرحبا", "e\u{301}", "␛[2J is what it shows", "<U+202E>", "plain"] {
            #expect(InertText.line(text) == text)
            #expect(InertText.lines(text, continuation: "> ") == text)
            #expect(InertText.line(InertText.line(Self.hostile)) == InertText.line(Self.hostile), "showing twice changes nothing")
        }
    }

    @Test("the names rule is the same table: C0, C1 and DEL refused, bidi and separators let through to be shown")
    func namesUseTheSameTable() {
        for bad in ["Bob\u{1B}[2J", "Bob\u{7F}", "Bob\u{9B}", "Bob\n", "Bob\r", "\u{0}"] {
            #expect(InertText.containsControls(bad))
            #expect(!MessageContent.isDisplayable(bad))
        }
        for good in ["Bob\u{202E}", "Bob\u{2066}x\u{2069}", "Bob\u{200F}", "Bob\u{2028}", "Zoë 🎉"] {
            #expect(!InertText.containsControls(good))
            #expect(MessageContent.isDisplayable(good))
        }
    }

    @Test("JSON text: what JSON leaves raw (DEL, C1, bidi, separators) escaped; the document decodes to the same text")
    func jsonDocuments() throws {
        let text = "a\u{7F}b\u{9B}c\u{202E}d\u{2028}e é 👍"
        let document = JSONWriter.string(["text": .string(text)])
        let inert = InertText.json(document)
        #expect(inert.contains("a\\u007fb\\u009bc\\u202ed\\u2028e é 👍"), "\(inert)")
        #expect(!inert.unicodeScalars.contains { (0x7F...0x9F).contains($0.value) || $0.value == 0x202E || $0.value == 0x2028 })
        #expect(try JSONParser.parse(Array(inert.utf8))["text"]?.string == text)
        #expect(InertText.json("{\n  \"a\" : 1\n}") == "{\n  \"a\" : 1\n}", "layout whitespace stays")
    }

    @Test("a log line stays one line whatever a peer's text holds")
    func logLine() {
        let line = LogLine.format(.info, program: "sotto", "refused: \(Self.hostile)\n<2>forged critical", journal: true)
        #expect(line.hasPrefix("<6>refused: hello ␛[2J"))
        #expect(line.hasSuffix("␊<2>forged critical\n"))
        #expect(line.filter { $0 == "\n" }.count == 1)
        #expect(Self.isInert(String(line.dropLast())))
    }

    // MARK: Notifications

    @Test("a markup server gets an escaped body (& < > \" '); a plain one the text; neither any control; the summary is never escaped")
    func notificationBodies() {
        let body = "Mal: <a href=\"https://evil.example/x\">click</a> <img src='file:///etc/passwd'/> & \(Self.hostile)"
        let markup = NotificationServerText.make(summary: "Trip <b>\u{202E}", body: body,
                                                 capabilities: NotificationCapabilities(names: ["body", "body-markup", "body-hyperlinks"]))
        #expect(markup.body.hasPrefix("Mal: &lt;a href=&quot;https://evil.example/x&quot;&gt;click&lt;/a&gt; "
                                      + "&lt;img src=&#39;file:///etc/passwd&#39;/&gt; &amp; hello ␛[2J"))
        #expect(!markup.body.contains("<") && !markup.body.contains(">") && !markup.body.contains("\"") && !markup.body.contains("'"))
        #expect(markup.body.contains("&lt;U+202E&gt;evil"))
        #expect(markup.summary == "Trip <b><U+202E>", "the summary is plain text for every server")
        #expect(Self.isInert(markup.body) && Self.isInert(markup.summary))

        let plain = NotificationServerText.make(summary: "Trip", body: body, capabilities: NotificationCapabilities(names: ["body", "actions"]))
        #expect(plain.body.hasPrefix("Mal: <a href=\"https://evil.example/x\">click</a> <img src='file:///etc/passwd'/> & hello ␛[2J"))
        #expect(Self.isInert(plain.body))

        let unanswered = NotificationServerText.make(summary: "s", body: "<a>", capabilities: .unanswered)
        #expect(unanswered.body == "&lt;a&gt;", "a server that did not say is taken to read markup")
    }
}
