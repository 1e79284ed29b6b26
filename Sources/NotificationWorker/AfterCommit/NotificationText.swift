import SharedStore
import SottoCrypto
import SottoWire

/// What the desktop notification says for a stored push, as a messenger shows it: in a named
/// conversation, summary = its name and body = "Sender: text"; otherwise summary = the
/// sender and body = the text (a reaction's summary, or the fallback). The sender is its
/// profile name, or a short inbox id only when it has none. An explosion says when, never
/// content; a refused join says why, in this device's words. Nothing for a muted conversation, the one open in the daemon, or a message no
/// user sees (join requests, membership). The conversation's (else the device's)
/// `NotificationPreview` can hide the text (`name`: "Ann: New message") or everything (`none`:
/// "Sotto", "New message"). A file says who sent a photo or a file, and its name only with
/// `full` ("Ann sent a photo: beach.jpg"). "The one open in the daemon": `isOpen`, which the daemon writes
/// while a client has the conversation open (docs/adr/0062). The text here is still the
/// member's own: whoever posts it (`DesktopNotifier`, or the daemon's `DesktopNotifications`)
/// makes it inert and escapes it for the server (`NotificationServerText`).
///
/// ```swift
/// NotificationText.make(for: .text("hi"), receipt: receipt)   // ("Book club", "Ann: hi")
/// ```
enum NotificationText {
    /// A notification shows at most this many characters of a message: a 64 KiB text is read
    /// in `sotto read`, not in a bubble (notification servers cut or refuse long bodies).
    static let previewCharacters = 200

    /// What `NotificationPreview.none` shows: no name, no text.
    static let anonymous = (summary: "Sotto", body: "New message")

    static func make(for content: MessageContent, receipt: IncomingWriteReceipt) -> (summary: String, body: String)? {
        guard !receipt.muted, !receipt.isOpen else { return nil }
        let sender = senderName(receipt)
        let conversation = receipt.conversationName.flatMap { $0.isEmpty ? nil : $0 }
        let summary = conversation ?? sender
        let body: String
        switch content {
        case .explodeSettings(let schedule):
            // A late, older decision changed nothing: no notification saying otherwise.
            guard !receipt.isSupersededDecision else { return nil }
            guard let expiresAtMs = schedule.expiresAtMs else { body = "The explosion was cancelled"; break }
            body = expiresAtMs <= WallClock.nowMs() ? "This conversation exploded"
                                                     : "This conversation explodes at \(ISO8601.string(fromMillis: expiresAtMs))"
        case .joinRequest, .membership, .rosterDelta:
            return nil
        case .joinRefused(let refusal):
            // Words from the closed set of reasons, never the creator's bytes (docs/protocol/join-refusal.md §3).
            body = "Your request to join was refused: \(refusal.reason.words)"
        case .leave:
            body = "\(sender) left"
        case .remove:
            body = "\(sender) removed a member"
        case .attachment(let reference):
            guard receipt.isUserVisible else { return nil }
            body = attachmentBody(reference, sender: sender, preview: receipt.preview)
        default:
            guard receipt.isUserVisible else { return nil }
            switch receipt.preview {
            case .full:
                let text = preview(content.displayText)
                body = conversation == nil ? text : "\(sender): \(text)"
            case .name, .none:
                body = conversation == nil ? "New message" : "\(sender): New message"
            }
        }
        return receipt.preview == .none ? anonymous : (summary, body)
    }

    /// "Ann sent a photo" (an `image/` type) or "Ann sent a file"; the file's name (and its
    /// caption) only when the preview shows texts: a name says as much as a text does.
    static func attachmentBody(_ reference: AttachmentReference, sender: String, preview: NotificationPreview) -> String {
        let what = "\(sender) sent \(AttachmentMediaType.isImage(reference.mediaType) ? "a photo" : "a file")"
        guard preview == .full else { return what }
        return self.preview("\(what): \(reference.name)" + (reference.caption.map { " — \($0)" } ?? ""))
    }

    /// The first `previewCharacters` characters (whole grapheme clusters), with "…" when cut.
    static func preview(_ text: String) -> String {
        guard let cut = text.index(text.startIndex, offsetBy: previewCharacters, limitedBy: text.endIndex),
              cut < text.endIndex else { return text }
        return String(text[..<cut]) + "…"
    }

    /// The sender's profile name, else the first 8 characters of its inbox id.
    static func senderName(_ receipt: IncomingWriteReceipt) -> String {
        if let name = receipt.senderProfileName, !name.isEmpty { return name }
        return String(receipt.senderInboxId.prefix(8))
    }

    /// The notifications for several messages stored by one commit (a batch from the relay):
    /// one per summary (conversation), in order of first appearance, saying the latest body
    /// and how many more came, so a catch-up of hundreds of messages posts a few
    /// notifications, not hundreds. One message gives exactly `make`'s notification.
    ///
    /// Each says which conversation its latest message is in (what its "open" action opens).
    ///
    /// ```swift
    /// NotificationText.coalesced([(.text("a"), r1), (.text("b"), r2)])   // [("Trip", "Sam: b (+1 more)", r2.conversationId)]
    /// ```
    static func coalesced(_ stored: [(content: MessageContent, receipt: IncomingWriteReceipt)],
                          limit: Int = 8) -> [(summary: String, body: String, conversationId: String)] {
        var order: [String] = []
        var latest: [String: (body: String, count: Int, conversationId: String)] = [:]
        for (content, receipt) in stored {
            guard let (summary, body) = make(for: content, receipt: receipt) else { continue }
            if let seen = latest[summary] {
                latest[summary] = (body, seen.count + 1, receipt.conversationId)
            } else {
                order.append(summary)
                latest[summary] = (body, 1, receipt.conversationId)
            }
        }
        return order.prefix(limit).map { summary in
            let (body, count, conversationId) = latest[summary]!
            return (summary, count == 1 ? body : "\(body) (+\(count - 1) more)", conversationId)
        }
    }
}
