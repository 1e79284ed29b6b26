/// A key the chat acts on, decoded from the bytes a terminal sends.
///
/// ```swift
/// var decoder = KeyDecoder()
/// decoder.feed([0x1b, 0x5b, 0x41])   // [.up]
/// ```
enum ChatKey: Equatable {
    case text(String)
    case enter, altEnter, backspace, tab, backTab, up, down, pageUp, pageDown, ctrlC, escape
    /// End: the latest message (back from scrolling, whatever came meanwhile).
    case end
    /// Ctrl-P / Ctrl-N: select the previous / next message; Ctrl-R: reply to it; Ctrl-T: react to it.
    case previousMessage, nextMessage, reply, react
    /// Ctrl-O: compose in $EDITOR; Ctrl-F: search the open conversation.
    case editor, search
    /// A bracketed paste's text for the composer (line breaks kept, never Enter), and how
    /// many bytes past the limit were dropped.
    case paste(String, droppedBytes: Int)
}

/// Turns terminal input into `ChatKey`s: UTF-8 text, Enter (CR), Alt+Enter (ESC CR),
/// arrows, PageUp/PageDown and End (CSI and SS3 forms), Tab and Shift+Tab, Backspace, Ctrl-C,
/// Ctrl-P, Ctrl-N, Ctrl-R, Ctrl-T for a selected message, Ctrl-O (editor) and Ctrl-F (search).
/// An incomplete sequence at the end of a read waits for the next read.
///
/// A bracketed paste (ESC[200~ … ESC[201~, turned on by `TerminalSession`) is one `.paste`:
/// its bytes are text, not keys, however many reads it takes (the end marker may be cut by a
/// read too), kept up to `PastedText`'s limit. A paste that never ends is given up when a read
/// is exactly Esc or Ctrl-C (a person pressing the key; a paste comes in larger reads): what
/// came goes to the composer and the key acts (docs/adr/0072).
struct KeyDecoder {
    static let pasteStart: [UInt8] = Array("\u{1b}[200~".utf8)
    static let pasteEnd: [UInt8] = Array("\u{1b}[201~".utf8)

    private var pending: [UInt8] = []
    /// The paste being read, between its start and end markers.
    private var paste: PastedText?
    private let pasteLimit: Int

    init(pasteLimit: Int = PastedText.defaultLimit) {
        self.pasteLimit = pasteLimit
    }

    /// Inside a paste whose end has not come yet.
    var isInPaste: Bool { paste != nil }

    mutating func feed(_ bytes: [UInt8]) -> [ChatKey] {
        var keys: [ChatKey] = []
        if let unfinished = paste, bytes == [0x1b] || bytes == [0x03] {
            // Given up: a person pressed Esc or Ctrl-C in a paste whose end never came.
            paste = nil
            pending.removeAll()
            keys.append(.paste(unfinished.text, droppedBytes: unfinished.droppedBytes))
            keys.append(bytes == [0x03] ? .ctrlC : .escape)
            return keys
        }
        pending += bytes
        var index = 0
        var text: [UInt8] = []
        func flushText() {
            if !text.isEmpty {
                keys.append(.text(String(decoding: text, as: UTF8.self)))
                text.removeAll()
            }
        }
        while index < pending.count {
            if paste != nil {
                guard let next = readPaste(from: index, into: &keys) else { return keys }
                index = next
                continue
            }
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
                    case (0x46, _), (0x7e, "4"), (0x7e, "8"): keys.append(.end)
                    case (0x7e, "200"): paste = PastedText(limit: pasteLimit)
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

    // MARK: Inside a paste

    /// Takes paste bytes from `start` up to the end marker (then emits the paste and returns
    /// the index after the marker) or to the end of what was read (returns nil, keeping in
    /// `pending` only a cut end marker). An ESC that does not start the end marker is dropped.
    private mutating func readPaste(from start: Int, into keys: inout [ChatKey]) -> Int? {
        var index = start
        while index < pending.count {
            let byte = pending[index]
            guard byte == 0x1b else {
                paste?.append(byte)
                index += 1
                continue
            }
            let available = min(Self.pasteEnd.count, pending.count - index)
            guard pending[index..<(index + available)].elementsEqual(Self.pasteEnd[0..<available]) else {
                index += 1   // an ESC in the paste: dropped, as every control but a line break
                continue
            }
            guard available == Self.pasteEnd.count else {
                pending = Array(pending[index...])   // the end marker cut by the read
                return nil
            }
            if let done = paste { keys.append(.paste(done.text, droppedBytes: done.droppedBytes)) }
            paste = nil
            return index + Self.pasteEnd.count
        }
        pending.removeAll()
        return nil
    }
}
