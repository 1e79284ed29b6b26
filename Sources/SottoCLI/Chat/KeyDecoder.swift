/// A key the chat acts on, decoded from the bytes a terminal sends.
///
/// ```swift
/// var decoder = KeyDecoder()
/// decoder.feed([0x1b, 0x5b, 0x41])   // [.up]
/// ```
enum ChatKey: Equatable {
    case text(String)
    case enter, altEnter, backspace, tab, backTab, up, down, pageUp, pageDown, ctrlC, escape
    /// Ctrl-P / Ctrl-N: select the previous / next message; Ctrl-R: reply to it; Ctrl-T: react to it.
    case previousMessage, nextMessage, reply, react
    /// Ctrl-O: compose in $EDITOR; Ctrl-F: search the open conversation.
    case editor, search
}

/// Turns terminal input into `ChatKey`s: UTF-8 text, Enter (CR), Alt+Enter (ESC CR),
/// arrows and PageUp/PageDown (CSI and SS3 forms), Tab and Shift+Tab, Backspace, Ctrl-C,
/// Ctrl-P, Ctrl-N, Ctrl-R, Ctrl-T for a selected message, Ctrl-O (editor) and Ctrl-F (search).
/// An incomplete sequence at the end of a read waits for the next read.
struct KeyDecoder {
    private var pending: [UInt8] = []

    mutating func feed(_ bytes: [UInt8]) -> [ChatKey] {
        pending += bytes
        var keys: [ChatKey] = []
        var index = 0
        var text: [UInt8] = []
        func flushText() {
            if !text.isEmpty {
                keys.append(.text(String(decoding: text, as: UTF8.self)))
                text.removeAll()
            }
        }
        while index < pending.count {
            let byte = pending[index]
            switch byte {
            case 0x03: flushText(); keys.append(.ctrlC); index += 1
            case 0x10: flushText(); keys.append(.previousMessage); index += 1
            case 0x0e: flushText(); keys.append(.nextMessage); index += 1
            case 0x12: flushText(); keys.append(.reply); index += 1
            case 0x14: flushText(); keys.append(.react); index += 1
            case 0x0f: flushText(); keys.append(.editor); index += 1
            case 0x06: flushText(); keys.append(.search); index += 1
            case 0x0d, 0x0a: flushText(); keys.append(.enter); index += 1
            case 0x09: flushText(); keys.append(.tab); index += 1
            case 0x7f, 0x08: flushText(); keys.append(.backspace); index += 1
            case 0x1b:
                flushText()
                guard index + 1 < pending.count else {
                    // A lone ESC at the end of a read: the Escape key (a sequence comes in one read).
                    keys.append(.escape)
                    index += 1
                    continue
                }
                let next = pending[index + 1]
                if next == 0x0d { keys.append(.altEnter); index += 2; continue }
                if next == 0x5b || next == 0x4f {
                    var end = index + 2
                    while end < pending.count, !(0x40...0x7e).contains(pending[end]) { end += 1 }
                    guard end < pending.count else { pending = Array(pending[index...]); return keys }
                    let body = String(decoding: pending[(index + 2)..<end], as: UTF8.self)
                    switch (pending[end], body) {
                    case (0x41, _): keys.append(.up)
                    case (0x42, _): keys.append(.down)
                    case (0x5a, _): keys.append(.backTab)
                    case (0x7e, "5"): keys.append(.pageUp)
                    case (0x7e, "6"): keys.append(.pageDown)
                    default: break   // other keys are ignored
                    }
                    index = end + 1
                } else {
                    keys.append(.escape)
                    index += 1
                }
            case 0x00...0x1f:
                index += 1   // other control keys do nothing
            default:
                // A UTF-8 sequence cut by the read waits for its rest.
                let length = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1
                guard index + length <= pending.count else {
                    flushText()
                    pending = Array(pending[index...])
                    return keys
                }
                text += pending[index..<(index + length)]
                index += length
            }
        }
        flushText()
        pending.removeAll()
        return keys
    }
}
