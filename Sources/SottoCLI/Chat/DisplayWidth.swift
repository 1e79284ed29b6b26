/// How many terminal columns text takes, per grapheme cluster: a combining mark rides on the
/// character before it (0), an emoji or an East Asian wide or fullwidth character takes 2,
/// everything else 1. Text reaching it has been through `InertText` (no controls).
///
/// ```swift
/// DisplayWidth.of("héllo")   // 5
/// DisplayWidth.of("日本")     // 4
/// DisplayWidth.fit("日本語", columns: 5)   // "日本 " (padded to exactly 5)
/// ```
enum DisplayWidth {
    static func of(_ character: Character) -> Int {
        guard let first = character.unicodeScalars.first else { return 0 }
        if character.unicodeScalars.contains(where: { $0.properties.isEmojiPresentation })
            || character.unicodeScalars.contains(where: { $0.value == 0xFE0F }) {
            return 2
        }
        if isWide(first.value) { return 2 }
        switch first.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format: return 0
        default: return 1
        }
    }

    static func of(_ text: String) -> Int { text.reduce(0) { $0 + of($1) } }

    /// The East Asian wide and fullwidth blocks (Unicode's EastAsianWidth W and F, by block).
    private static func isWide(_ value: UInt32) -> Bool {
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF, 0xA000...0xA4CF,
             0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE30...0xFE4F, 0xFF00...0xFF60, 0xFFE0...0xFFE6,
             0x1F300...0x1F64F, 0x1F900...0x1F9FF, 0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return true
        default:
            return false
        }
    }

    /// `text` cut to at most `columns` (with `…` when cut) and padded with spaces to exactly `columns`.
    static func fit(_ text: String, columns: Int) -> String {
        guard columns > 0 else { return "" }
        var out = ""
        var used = 0
        let total = of(text)
        let limit = total > columns ? columns - 1 : columns
        for character in text {
            let width = of(character)
            if used + width > limit { break }
            out.append(character)
            used += width
        }
        if total > columns {
            out.append("…")
            used += 1
        }
        return out + String(repeating: " ", count: max(0, columns - used))
    }

    /// `text` broken into lines: the first of at most `columns`, the others of at most
    /// `continuation` (at spaces when a word fits, else anywhere).
    static func wrap(_ text: String, columns: Int, continuation: Int? = nil) -> [String] {
        guard columns > 0 else { return [] }
        let rest = max(1, continuation ?? columns)
        var lines: [String] = []
        var line = ""
        var used = 0
        var lastSpace: String.Index?
        var limit = columns
        for character in text {
            let width = of(character)
            if used + width > limit, !line.isEmpty {
                if let space = lastSpace, space > line.startIndex {
                    let head = String(line[..<space])
                    let tail = String(line[line.index(after: space)...])
                    lines.append(head)
                    line = tail
                    used = of(tail)
                } else {
                    lines.append(line)
                    line = ""
                    used = 0
                }
                lastSpace = nil
                limit = rest
            }
            if character == " " { lastSpace = line.endIndex }
            line.append(character)
            used += width
        }
        lines.append(line)
        return lines
    }
}
