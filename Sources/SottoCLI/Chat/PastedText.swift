import SottoWire

/// The text of one bracketed paste (between ESC[200~ and ESC[201~) as the composer takes it:
/// line breaks (CR LF, CR, LF) kept as `\n`, a tab as four spaces, every other C0 control and
/// DEL dropped as they are when typed, and no more than `limit` bytes kept (a message's limit,
/// `ContentLimits.maxTextBytes`); what comes after is counted in `droppedBytes`, not kept, so a
/// paste that never ends holds at most `limit` bytes (docs/adr/0072).
///
/// ```swift
/// var paste = PastedText()
/// paste.append(Array("a\r\nb\tc\u{7}".utf8))
/// paste.text            // "a\nb    c"
/// ```
struct PastedText: Equatable {
    static let defaultLimit = ContentLimits.maxTextBytes

    let limit: Int
    private(set) var bytes: [UInt8] = []
    private(set) var droppedBytes = 0
    /// The last byte kept was a CR: an LF right after it (maybe in the next read) is the same break.
    private var afterCarriageReturn = false

    init(limit: Int = PastedText.defaultLimit) {
        self.limit = limit
    }

    // MARK: Taking bytes

    mutating func append(_ chunk: some Sequence<UInt8>) {
        for byte in chunk { append(byte) }
    }

    mutating func append(_ byte: UInt8) {
        let wasCarriageReturn = afterCarriageReturn
        afterCarriageReturn = false
        switch byte {
        case 0x0d:
            keep([0x0a])
            afterCarriageReturn = true
        case 0x0a:
            if !wasCarriageReturn { keep([0x0a]) }
        case 0x09:
            keep([0x20, 0x20, 0x20, 0x20])
        case 0x00...0x1f, 0x7f:
            break   // as typed: control keys are not text
        default:
            keep([byte])
        }
    }

    private mutating func keep(_ kept: [UInt8]) {
        guard droppedBytes == 0, bytes.count + kept.count <= limit else {
            droppedBytes += kept.count
            return
        }
        bytes += kept
    }

    // MARK: The text

    /// What was kept, as text; a character the limit cut in two is left out whole.
    var text: String {
        var end = bytes.count
        var back = end - 1
        while back >= 0, back > end - 4, bytes[back] & 0xc0 == 0x80 { back -= 1 }
        if back >= 0, bytes[back] >= 0xc0 {
            let length = bytes[back] >= 0xf0 ? 4 : bytes[back] >= 0xe0 ? 3 : 2
            if back + length > end { end = back }
        }
        return String(decoding: bytes[0..<end], as: UTF8.self)
    }
}

// MARK: What the status line says

extension PastedText {
    /// The status line after a paste: how many lines came, that Enter sends them as one
    /// message, and what the limit dropped.
    static func notice(_ text: String, droppedBytes: Int) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
        if droppedBytes > 0 {
            return "paste cut at \(defaultLimit) bytes (a message's limit): \(droppedBytes) bytes not kept"
        }
        return lines > 1 ? "pasted \(lines) lines (␊ marks a break): Enter sends them as one message" : nil
    }
}

extension String {
    /// The text with its line breaks as spaces: for a field that is one line (a search, a name).
    var oneLine: String { split(separator: "\n", omittingEmptySubsequences: false).joined(separator: " ") }
}
