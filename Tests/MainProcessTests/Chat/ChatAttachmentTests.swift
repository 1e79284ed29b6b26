import ControlProtocol
import SottoClient
import SottoWire
import Testing
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
