import Foundation
import SharedStore
import SottoWire
import Testing
import TestSupport

/// Issue #34 part 3: what a hostile member sends or names reaches the other device's
/// terminal and desktop notifications inert (docs/adr/0062). Mallory's real daemon sends the
/// full set of terminal escapes and bidirectional controls as a text, a reply and a
/// reaction, and names the conversation and herself with what names may carry; Alice's real
/// `sotto read`, `sotto watch` and `sotto ls` write to a real pseudo-terminal, and real
/// notification servers (one that reads markup, one that does not) receive the D-Bus calls.
@Suite("Untrusted text is inert", .serialized, .timeLimit(.minutes(4)))
struct UntrustedTextTests {
    /// The full set: CSI clear, SGR red, OSC 0 title with BEL, DCS and APC ended by ST, C1 CSI,
    /// BEL, BS, CR + erase-line forging a line, DEL, a right-to-left override and an isolate,
    /// live markup, and a second line.
    static let hostile = "hello \u{1B}[2J \u{1B}[31mRED \u{1B}]0;pwned-title\u{07} \u{1B}Pdcs-payload\u{1B}\\ "
        + "\u{1B}_apc-payload\u{1B}\\ \u{9B}2J csi1 bell\u{07} back\u{08}space \r\u{1B}[K forged line (delivered) "
        + "del\u{7F} \u{202E}evil\u{2066}iso\u{2069} <a href=\"https://evil.example/x\">click</a> "
        + "<img src=\"file:///etc/passwd\"/>\nsecond line"
    /// A reaction is at most 64 bytes.
    static let hostileReaction = "\u{1B}]0;pwned\u{07}\u{9B}2J\u{202E}👍\r\u{7F}\u{1B}[K"
    /// What a name may carry past the wire's rule (no C0, C1 or DEL): bidirectional controls.
    static let hostileConversationName = "Trip \u{202E}gnp.exe\u{2066}x\u{2069}"
    static let hostileProfileName = "Mal\u{202E}lory\u{200F}"

    /// What a terminal would obey or that reorders text: ESC, C1, BEL, BS, CR, DEL and the
    /// other C0 but LF, bidirectional controls.
    static func obeyed(_ bytes: [UInt8]) -> [String] {
        var found: [String] = []
        for byte in bytes where (byte < 0x20 && byte != 0x0A) || byte == 0x7F { found.append(String(format: "byte 0x%02X", byte)) }
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            switch scalar.value {
            case 0x80...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
                found.append(String(format: "U+%04X", scalar.value))
            default: break
            }
        }
        return found
    }

    static func shown(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self) }

    // MARK: Terminals

    @Test("sotto read, watch and ls write no escape, C1, BEL/BS/CR/DEL or bidi control to a real terminal; the words stay; --json keeps the exact text")
    func terminalsShowItInert() async throws {
        try await onOwnThread { try self.terminalSteps() }
    }

    private func terminalSteps() throws {
        let net = try Network(["mallory", "alice"])
        let mallory = net["mallory"], alice = net["alice"]
        let sotto = try builtExecutable("sotto")

        // What the wire refuses in a name is refused here too, with nothing created.
        let refused = try mallory.cli(["new", "--name", "Trip \u{1B}]0;pwned\u{07}"])
        #expect(refused.status == 65, "\(refused)")
        #expect(try mallory.conversations().isEmpty)

        let trip = try net.conversation(creator: mallory, joiners: [alice], name: Self.hostileConversationName,
                                        profileName: { _ in "alice" })
        let renamed = try mallory.json(["rename", trip, Self.hostileProfileName])
        #expect(renamed["profileName"] as? String == Self.hostileProfileName)
        _ = try mallory.json(["send", trip, "hi all"])
        try alice.waitUntil("alice names mallory as she renamed herself") {
            message(alice, trip, text: "hi all")?["senderName"] as? String == Self.hostileProfileName
        }

        // Alice watches live, on a terminal, while the hostile messages arrive.
        let watch = try PseudoTerminal.launch(sotto, ["watch", "--conversation", trip], environment: alice.environment)
        try alice.waitUntil("alice's watch is subscribed") {
            let open = try alice.json(["status"])["openInClient"] as? [String: Any] ?? [:]
            return open[try require(try alice.conversation(trip)?["inboxId"] as? String)] != nil
        }

        let first = try require(try alice.json(["send", trip, "is the train at 9?"])["messageId"] as? String)
        try mallory.waitUntil("mallory stores alice's question") { hasText(mallory, trip, "is the train at 9?") }
        _ = try mallory.json(["send", trip, Self.hostile])
        _ = try mallory.json(["send", trip, "re: " + Self.hostile, "--reply-to", first])
        _ = try mallory.json(["react", trip, first, Self.hostileReaction])
        try alice.waitUntil("alice stores the text, the reply and the reaction") {
            let texts = alice.messages(trip).compactMap { $0["text"] as? String }
            return texts.contains(Self.hostile) && texts.contains("re: " + Self.hostile) && texts.contains("reacted " + Self.hostileReaction)
        }

        // --json: the exact text, JSON-escaped, for the text, the reply, the reaction and the names.
        let messages = alice.messages(trip)
        #expect(messages.contains { $0["text"] as? String == Self.hostile && $0["senderName"] as? String == Self.hostileProfileName })
        #expect(messages.contains { $0["text"] as? String == "re: " + Self.hostile && $0["referenceId"] as? String == first })
        #expect(messages.contains { $0["text"] as? String == "reacted " + Self.hostileReaction })
        #expect(try alice.conversation(trip)?["name"] as? String == Self.hostileConversationName)
        // …and on a terminal too: JSON escapes C0, and the CLI what JSON leaves raw (C1, DEL, bidi).
        let json = try PseudoTerminal.run(sotto, ["read", trip, "--json"], environment: alice.environment)
        #expect(json.status == 0)
        #expect(Self.obeyed(json.bytes.filter { $0 != 0x0A }).isEmpty, "\(Self.obeyed(json.bytes)): \(Self.shown(json.bytes))")
        let decoded = try JSONSerialization.jsonObject(with: Data(json.bytes)) as? [String: Any]
        #expect((decoded?["messages"] as? [[String: Any]])?.contains { $0["text"] as? String == Self.hostile } == true)

        // sotto watch: every change on one line, nothing obeyed.
        try watch.waitForOutput { bytes in
            let text = Self.shown(bytes)
            return text.contains("reacted ") && text.components(separatedBy: "forged line (delivered)").count == 3
        }
        watch.signal(SIGKILL)
        watch.waitForExit()
        let watched = watch.bytes
        #expect(Self.obeyed(watched).isEmpty, "\(Self.obeyed(watched)): \(Self.shown(watched))")
        let watchedText = Self.shown(watched)
        for word in ["RED", "pwned-title", "dcs-payload", "apc-payload", "csi1", "forged line (delivered)", "evil", "iso",
                     "<a href=\"https://evil.example/x\">click</a>", "␊second line", "␛[2J", "<U+009B>2J", "<U+202E>evil",
                     "Mal<U+202E>lory<U+200F>: hello"] {
            #expect(watchedText.contains(word), "watch shows \(word): \(watchedText)")
        }

        // sotto read: the text's second line is marked as a continuation.
        let read = try PseudoTerminal.run(sotto, ["read", trip], environment: alice.environment)
        #expect(read.status == 0)
        #expect(Self.obeyed(read.bytes).isEmpty, "\(Self.obeyed(read.bytes)): \(Self.shown(read.bytes))")
        let readText = Self.shown(read.bytes)
        for word in ["Mal<U+202E>lory<U+200F>: hello ␛[2J ␛[31mRED ␛]0;pwned-title␇", "␍␛[K forged line (delivered)",
                     "\n  ┆ second line", "re: hello", "reacted ␛]0;pwned␇<U+009B>2J<U+202E>👍␍␡␛[K", "del␡"] {
            #expect(readText.contains(word), "read shows \(word): \(readText)")
        }
        #expect(!readText.split(separator: "\n").contains { $0.hasPrefix("second line") }, "no line of a text starts a line of its own")

        // sotto ls: the conversation's name.
        let list = try PseudoTerminal.run(sotto, ["ls"], environment: alice.environment)
        #expect(list.status == 0)
        #expect(Self.obeyed(list.bytes).isEmpty, "\(Self.obeyed(list.bytes)): \(Self.shown(list.bytes))")
        #expect(Self.shown(list.bytes).contains("Trip <U+202E>gnp.exe<U+2066>x<U+2069>"), Comment(rawValue: Self.shown(list.bytes)))
    }
}
