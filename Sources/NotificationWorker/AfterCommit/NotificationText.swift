import SharedStore

/// What the desktop notification says for a stored push, as a messenger shows it: in a named
/// conversation, summary = its name and body = "Sender: text"; otherwise summary = the
/// sender and body = the text (a reaction's summary, or the fallback). The sender is its
/// profile name, or a short inbox id only when it has none. An explosion says when, never
/// content. Nothing for a muted conversation, the one open in the daemon, or a message no
/// user sees (join requests, membership).
///
/// ```swift
/// NotificationText.make(for: .text("hi"), receipt: receipt)   // ("Book club", "Ann: hi")
/// ```
enum NotificationText {
    static func make(for content: MessageContent, receipt: IncomingWriteReceipt) -> (summary: String, body: String)? {
        guard !receipt.muted, !receipt.isOpen else { return nil }
        let sender = senderName(receipt)
        let conversation = receipt.conversationName.flatMap { $0.isEmpty ? nil : $0 }
        let summary = conversation ?? sender
        switch content {
        case .explodeSettings(let expiresAtMs):
            if expiresAtMs <= WallClock.nowMs() { return (summary, "This conversation exploded") }
            return (summary, "This conversation explodes at \(ISO8601.string(fromMillis: expiresAtMs))")
        case .joinRequest, .membership:
            return nil
        case .leave:
            return (summary, "\(sender) left")
        default:
            guard receipt.isUserVisible else { return nil }
            return (summary, conversation == nil ? content.displayText : "\(sender): \(content.displayText)")
        }
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
    /// ```swift
    /// NotificationText.coalesced([(.text("a"), r1), (.text("b"), r2)])   // [("Trip", "Sam: b (+1 more)")]
    /// ```
    static func coalesced(_ stored: [(content: MessageContent, receipt: IncomingWriteReceipt)],
                          limit: Int = 8) -> [(summary: String, body: String)] {
        var order: [String] = []
        var latest: [String: (body: String, count: Int)] = [:]
        for (content, receipt) in stored {
            guard let (summary, body) = make(for: content, receipt: receipt) else { continue }
            if let seen = latest[summary] {
                latest[summary] = (body, seen.count + 1)
            } else {
                order.append(summary)
                latest[summary] = (body, 1)
            }
        }
        return order.prefix(limit).map { summary in
            let (body, count) = latest[summary]!
            return (summary, count == 1 ? body : "\(body) (+\(count - 1) more)")
        }
    }
}
