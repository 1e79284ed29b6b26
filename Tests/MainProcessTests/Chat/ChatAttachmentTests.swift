import ControlProtocol
import Foundation
import SottoClient
import SottoWire
import Testing
import TestSupport
@testable import SottoCLI

/// `sotto chat`'s timeline shows a file as `sotto read` does: the daemon's line
/// `📎 NAME (SIZE, STATE)` and the caption under it, the name inert (docs/adr/0074).
@Suite("Chat: attachments")
struct ChatAttachmentTests {
    @Test("a file from a member: the 📎 line with its state, the caption under it, a hostile name inert")
    func attachmentLine() {
        let name = "\u{1B}[2Jphoto\u{07}\u{202E}gpj.exe"
        let text = AttachmentLine.text(name: name, size: 1_258_291, state: .waiting, caption: "the view")
        let message = MessageInfo(id: "m9", conversationId: "c1", senderInboxId: "bob-inbox", sentAtMs: ChatRendererTests.t0 + 7 * 60_000,
                                  contentType: ContentType.attachment, text: text, outgoing: false, deliveryStatus: "received",
                                  senderName: "bob",
                                  attachment: AttachmentInfo(name: name, size: 1_258_291, mediaType: "image/jpeg", state: "waiting",
                                                             caption: "the view"))
        var state = ChatRendererTests.state
        state.timeline?.items.append(TimelineItem(message: message))
        let frame = ChatRenderer.render(state, width: 120, height: 40)
        let shown = frame.lines.joined(separator: "\n")
        #expect(shown.contains("📎 ␛[2Jphoto␇<U+202E>gpj.exe (1.2 MiB, waiting)"), "\(shown)")
        #expect(shown.contains("the view"))
        #expect(!shown.unicodeScalars.contains { $0.value == 0x1B || $0.value == 0x07 || $0.value == 0x202E })
    }
}

/// `/file PATH` in a real `sotto chat` on a terminal: the daemon stores and sends it, the
/// status line and the timeline show the 📎 line, and the member gets it `waiting`.
@Suite("sotto chat sends a file", .serialized, .timeLimit(.minutes(3)),
       .enabled(if: ChatTerminal.isAvailable, "needs tmux (make deps installs it)"))
struct ChatFileCommandTests {
    @Test("/file PATH: stored and sent, shown available here and waiting on the member's device")
    func fileCommand() throws {
        let net = try Network(["alice", "bob"], environment: AttachmentDirectFetchTests.noAutomaticFetch)  // bob's copy stays waiting
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let path = net.tmp.path + "/minutes.pdf"
        #expect(FileManager.default.createFile(atPath: path, contents: Data(repeating: 7, count: 5_000)))

        let aliceChat = try ChatTerminalActionsTests.chat(alice, trip)
        try aliceChat.waitForScreen("Trip open") { $0.contains("Sotto · Trip · 2 members") }
        try aliceChat.typeLine("/file \(path)")
        try aliceChat.waitForScreen("sent and shown") { screen in
            ChatTerminalActionsTests.status(screen).contains("sent 📎 minutes.pdf (4.9 KiB, available)")
                && screen.components(separatedBy: "📎 minutes.pdf (4.9 KiB, available)").count >= 3
        }
        try bob.waitUntil("bob has it, waiting") {
            bob.messages(trip).contains { ($0["attachment"] as? [String: Any])?["state"] as? String == "waiting" }
        }
        try aliceChat.typeLine("/file")
        try aliceChat.waitForScreen("refused without a path") { ChatTerminalActionsTests.status($0).contains("/file needs the file's path") }
    }
}

extension ChatFileCommandTests {
    @Test("/save in bob's chat: the newest file, not fetched yet, is fetched from alice's device and saved into DEST, the status line says where; a selected text is refused, and nothing is written")
    func saveCommand() throws {
        let net = try Network(["alice", "bob"], environment: AttachmentDirectFetchTests.noAutomaticFetch)
        let alice = net["alice"], bob = net["bob"]
        let trip = try net.conversation(creator: alice, joiners: [bob], name: "Trip")
        let path = net.tmp.path + "/minutes.pdf"
        let original = try AttachmentSendTests.writeFile(path, count: 300_000)
        let id = try require(try alice.json(["send", trip, "--file", path])["messageId"] as? String, "messageId")
        try bob.waitUntil("bob has it, waiting") { AttachmentDirectFetchTests.state(bob, trip, id) == "waiting" }
        _ = try alice.json(["send", trip, "after the file"])
        try bob.waitUntil("bob has the text") { hasText(bob, trip, "after the file") }
        let out = try AttachmentSaveTests.makeDirectory(net.tmp.path + "/out")

        let bobChat = try ChatTerminalActionsTests.chat(bob, trip)
        try bobChat.waitForScreen("Trip open") { $0.contains("after the file") && $0.contains("📎 minutes.pdf (293.0 KiB, waiting)") }
        // The selected message is the text: refused, nothing written.
        try bobChat.keys("C-p")
        try bobChat.typeLine("/save \(out)")
        try bobChat.waitForScreen("a text is refused") { ChatTerminalActionsTests.status($0).contains("the selected message is not a file") }
        #expect(AttachmentSaveTests.names(out).isEmpty)

        // Nothing selected: the newest file, fetched from alice and saved.
        try bobChat.typeLine("/save \(out)")
        try bobChat.waitForScreen("saved, said where") {
            ChatTerminalActionsTests.status($0).contains("saved \(out)/minutes.pdf (293.0 KiB)")
                && $0.contains("📎 minutes.pdf (293.0 KiB, available)")
        }
        #expect(AttachmentSaveTests.contents(out + "/minutes.pdf") == original)
        #expect(AttachmentSaveTests.names(out) == ["minutes.pdf"])
    }
}
