import Foundation
import Glibc
import SottoWire
import TestSupport

// Page up through the real `sotto chat` on a pseudo-terminal (80×24: a page is 19 lines):
// the PageUp key's bytes written to the terminal → the frame the app draws for it read back
// whole (every frame ends with the cursor shown again, ESC[?25h, in the same write).

/// `sotto chat ID` running on a pseudo-terminal, paged with the PageUp key.
///
/// ```swift
/// let chat = try ChatOnTerminal.open(sotto: path, conversation: id, environment: env, showing: "m 199")
/// let (ns, drawn) = chat.pageUp()
/// chat.quit()
/// ```
final class ChatOnTerminal {
    static let frameEnd = Array("\u{1b}[?25h".utf8)
    static let pageUpKey = Array("\u{1b}[5~".utf8)
    /// The pause after each frame, as between a person's key presses: the older page a page
    /// up asked for is merged (and drawn) before the next key.
    static let pauseMs = 15

    let terminal: PseudoTerminal

    private init(terminal: PseudoTerminal) {
        self.terminal = terminal
    }

    /// Starts the chat on `conversation` and waits for a frame that shows `showing`.
    static func open(sotto: String, conversation: String, environment: [String: String], showing: String) throws -> ChatOnTerminal {
        let terminal = try PseudoTerminal.launch(sotto, ["chat", conversation], environment: environment.merging(["NO_COLOR": "1"]) { $1 })
        let wanted = Array(showing.utf8)
        try terminal.waitForOutput(timeoutMs: 60_000) { $0.contains(wanted) && $0.ends(with: frameEnd) }
        terminal.waitForQuiet(quietMs: pauseMs * 4)
        return ChatOnTerminal(terminal: terminal)
    }

    /// One PageUp: the time from the key written to its frame read back whole, and what the
    /// app drew for it until it was quiet again.
    func pageUp() throws -> (ns: UInt64, drawn: [UInt8]) {
        let from = terminal.byteCount
        let started = MonotonicClock.nowNs()
        terminal.type(Self.pageUpKey)
        try terminal.waitForOutput { $0[from...].contains(Self.frameEnd) }
        let ns = MonotonicClock.nowNs() - started
        terminal.waitForQuiet(quietMs: Self.pauseMs)
        return (ns, Array(terminal.bytes[from...]))
    }

    /// The app's resident set (KiB), from /proc.
    var rssKiB: Int {
        let status = (try? String(contentsOfFile: "/proc/\(terminal.pid)/status", encoding: .utf8)) ?? ""
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ")[1]) ?? 0
        }
        return 0
    }

    /// Ctrl-C, and the exit.
    func quit() {
        terminal.type([0x03])
        terminal.waitForExit()
    }
}

extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool { count >= suffix.count && self[(count - suffix.count)...].elementsEqual(suffix) }
}

extension ArraySlice where Element == UInt8 {
    func contains(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        var start = startIndex
        while start + needle.count <= endIndex {
            if self[start] == needle[0], self[start..<(start + needle.count)].elementsEqual(needle) { return true }
            start += 1
        }
        return false
    }
}

extension Array where Element == UInt8 {
    func contains(_ needle: [UInt8]) -> Bool { self[...].contains(needle) }
}

// MARK: - The measurement

/// Page up at message ~100 of the 200-message conversation (fresh apps, keys 5–7: lines
/// 95–133 from the bottom) against the last page ups of scrolling through all of the long
/// one; the app's RSS at the end against the app on the empty conversation.
func measureThroughTheApp(count: Int, rounds: Int, conversations: (empty: String, short: String, long: String),
                          environment: [String: String]) throws {
    let sotto = try builtExecutable("sotto")
    var at100: [UInt64] = []
    for _ in 0..<rounds {
        let chat = try ChatOnTerminal.open(sotto: sotto, conversation: conversations.short, environment: environment, showing: "m 199 ")
        for key in 1...7 {
            let (ns, _) = try chat.pageUp()
            if key >= 5 { at100.append(ns) }
        }
        chat.quit()
    }

    let empty = try ChatOnTerminal.open(sotto: sotto, conversation: conversations.empty, environment: environment, showing: "no messages yet")
    let rssEmpty = empty.rssKiB
    empty.quit()

    let chat = try ChatOnTerminal.open(sotto: sotto, conversation: conversations.long, environment: environment, showing: "m \(count - 1) ")
    let oldest = Array("m 0 ".utf8)
    var costs: [UInt64] = []
    let started = MonotonicClock.nowNs()
    while true {
        let (ns, drawn) = try chat.pageUp()
        costs.append(ns)
        if drawn.contains(oldest) { break }
        guard costs.count < count / 5 + 1_000 else { fatalError("\(costs.count) page ups and message 0 never shown") }
    }
    let total = MonotonicClock.nowNs() - started
    let rssDeep = chat.rssKiB
    chat.quit()

    let baseline = median(at100), deep = median(Array(costs.suffix(20))), first = median(Array(costs.prefix(20)))
    say(String(format: "PageUp → frame at message ~100 (200-message conversation, median of %d): %.3f ms", at100.count, baseline / 1e6))
    say(String(format: "PageUp → frame in the first 20 of the long one (median):               %.3f ms", first / 1e6))
    say(String(format: "PageUp → frame at message ~%d (median of the last 20):           %.3f ms", count, deep / 1e6))
    for (label, range) in [("21–40 (the window filling)", 20..<40), ("201–220", 200..<220), ("the middle 20", (costs.count / 2)..<(costs.count / 2 + 20))]
    where range.upperBound <= costs.count {
        say("PageUp → frame, PageUps \(label): " + String(format: "%.3f ms", median(Array(costs[range])) / 1e6))
    }
    say(String(format: "  %d PageUps to message 0 in %.1f s (a %d ms pause after each frame)", costs.count, Double(total) / 1e9, ChatOnTerminal.pauseMs))
    say(String(format: "  ratio PageUp → frame at %d / at 100: %.2f (goal ≤ 1.2)", count, deep / baseline))
    say(String(format: "app RSS on the empty conversation: %.1f MB", Double(rssEmpty) / 1024))
    say(String(format: "app RSS after scrolling through all %d: %.1f MB", count, Double(rssDeep) / 1024))
    say(String(format: "  ratio RSS %d / empty: %.2f (goal ≤ 1.5)", count, Double(rssDeep) / Double(rssEmpty)))
}
