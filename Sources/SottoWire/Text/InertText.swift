/// Text another device sent or named (a message, a reply, a reaction, a conversation or
/// profile name, a peer's error text), made inert before a terminal, a log line or a desktop
/// notification shows it: the one place that decides what such text may contain when shown
/// (docs/adr/0062). Nothing it returns can move a cursor, clear a screen, set a window title,
/// ring, or reorder the characters around it.
///
/// - C0 controls (U+0000–U+001F) and DEL are shown as their control pictures: ESC as `␛`,
///   BEL `␇`, BS `␈`, CR `␍`, LF `␊`, DEL `␡` (U+2400 + the code, U+2421).
/// - C1 controls (U+0080–U+009F, CSI U+009B among them), bidirectional overrides, embeddings,
///   isolates and marks (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: the "Trojan
///   Source" class) and the line and paragraph separators (U+2028, U+2029) have no picture
///   and are shown by name: `<U+009B>`, `<U+202E>`.
/// - In `lines` only, a line feed (or CR LF) stays a line break and every line after the
///   first starts with a continuation mark, so no line of a text can pass for a line of the
///   output around it; a tab stays a tab. A bare CR never stays.
///
/// Everything else, emoji and right-to-left letters included, is kept as it is. `--json`
/// output keeps the exact text: JSON escapes C0 itself, and `json` writes what JSON leaves
/// raw (DEL, C1, bidirectional controls, separators) as `\u` escapes, which decode to the same.
///
/// ```swift
/// InertText.line("hi\u{1b}[2J\u{202e}")           // "hi␛[2J<U+202E>"
/// InertText.lines("a\nb\rc", continuation: "  ┆ ") // "a\n  ┆ b␍c"
/// InertText.containsControls("Ann\u{7f}")          // true: what names refuse
/// InertText.json("{\"t\":\"a\u{9b}\"}")               // {"t":"a\u009b"}
/// ```
public enum InertText {
    /// The classes of code point shown instead of passed through.
    public enum Neutralised: Equatable, Sendable {
        /// U+0000–U+001F: ESC starts every CSI, OSC, DCS and APC sequence; BEL, BS, CR move or ring.
        case c0
        /// U+007F.
        case delete
        /// U+0080–U+009F: CSI, OSC, DCS, APC and ST in one code point to a terminal that takes 8-bit controls.
        case c1
        /// Overrides, embeddings, isolates and marks: they reorder what a reader sees.
        case bidirectional
        /// U+2028, U+2029: a line break for some renderers and none for others.
        case lineSeparator
    }

    // MARK: Showing

    /// `text` on one line: every neutralised code point shown, line feeds included.
    public static func line(_ text: String) -> String {
        render(text, lineBreak: nil)
    }

    /// `text` on as many lines as it has: a line feed (or CR LF) becomes a line break followed
    /// by `continuation`, a tab stays; everything else neutralised is shown as in `line`.
    public static func lines(_ text: String, continuation: String) -> String {
        render(text, lineBreak: "\n" + continuation)
    }

    /// JSON text (a whole document) with every neutralised code point that JSON leaves raw
    /// written as a `\u` escape: such a code point can only be inside a string, where the
    /// escape decodes to it, so the document means exactly what it meant.
    public static func json(_ document: String) -> String {
        guard document.unicodeScalars.contains(where: { $0.value >= 0x7F && neutralised($0) != nil }) else { return document }
        var out = ""
        out.reserveCapacity(document.utf8.count + 16)
        for scalar in document.unicodeScalars {
            if scalar.value >= 0x7F, neutralised(scalar) != nil {
                out += "\\u" + hex4(scalar.value).lowercased()
            } else {
                out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    // MARK: Classifying

    /// Which class `scalar` belongs to, or nil when it is shown as it is.
    public static func neutralised(_ scalar: Unicode.Scalar) -> Neutralised? {
        switch scalar.value {
        case 0x00...0x1F: return .c0
        case 0x7F: return .delete
        case 0x80...0x9F: return .c1
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return .bidirectional
        case 0x2028, 0x2029: return .lineSeparator
        default: return nil
        }
    }

    /// True when `text` holds a C0 or C1 control or DEL: what a profile or conversation name
    /// may not hold (MessageContent refuses it on the wire; docs/protocol/roster.md).
    public static func containsControls(_ text: String) -> Bool {
        text.unicodeScalars.contains { scalar in
            switch neutralised(scalar) {
            case .c0, .delete, .c1: true
            case .bidirectional, .lineSeparator, nil: false
            }
        }
    }

    /// How one neutralised code point is shown.
    public static func shown(_ scalar: Unicode.Scalar) -> String {
        switch neutralised(scalar) {
        case .c0: return String(Unicode.Scalar(0x2400 + scalar.value)!)
        case .delete: return "\u{2421}"
        case .c1, .bidirectional, .lineSeparator: return "<U+" + hex4(scalar.value) + ">"
        case nil: return String(scalar)
        }
    }

    // MARK: Rendering

    private static func render(_ text: String, lineBreak: String?) -> String {
        guard mayHoldNeutralised(text) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        var pendingCarriageReturn = false
        for scalar in text.unicodeScalars {
            if pendingCarriageReturn {
                pendingCarriageReturn = false
                if scalar == "\n", let lineBreak {
                    out += lineBreak
                    continue
                }
                out += shown("\r")
            }
            switch scalar {
            case "\r" where lineBreak != nil:
                pendingCarriageReturn = true   // a line break if LF follows, else shown
            case "\n" where lineBreak != nil:
                out += lineBreak!
            case "\t" where lineBreak != nil:
                out.unicodeScalars.append(scalar)
            default:
                if neutralised(scalar) == nil { out.unicodeScalars.append(scalar) } else { out += shown(scalar) }
            }
        }
        if pendingCarriageReturn { out += shown("\r") }
        return out
    }

    /// False only when no code point of `text` can be neutralised: no byte below 0x20, no DEL,
    /// and none of the UTF-8 lead bytes of the other classes (0xC2: C1; 0xD8: U+061C; 0xE2:
    /// U+2000–U+2FFF). A byte scan: most texts skip the scalar walk.
    private static func mayHoldNeutralised(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F || $0 == 0xC2 || $0 == 0xD8 || $0 == 0xE2 }
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = Array("0123456789ABCDEF")
        return String((0..<4).reversed().map { digits[Int((value >> (UInt32($0) * 4)) & 0xF)] })
    }
}
