import SharedStore

/// What the desktop notification says for a stored push: summary = the conversation's name
/// or the sender's profile name; body = the text, a reaction's summary, or the fallback.
/// An explosion says when, never content. Nothing for a muted conversation, the one open in
/// the daemon, or a message no user sees (join requests, membership).
///
/// ```swift
/// NotificationText.make(for: .text("hi"), receipt: receipt)   // ("Book club", "hi")
/// ```
enum NotificationText {
    static func make(for content: MessageContent, receipt: IncomingWriteReceipt) -> (summary: String, body: String)? {
        guard !receipt.muted, !receipt.isOpen else { return nil }
        let summary = receipt.conversationName ?? receipt.senderProfileName ?? "Sotto"
        switch content {
        case .explodeSettings(let expiresAtMs):
            if expiresAtMs <= WallClock.nowMs() { return (summary, "This conversation exploded") }
            return (summary, "This conversation explodes at \(ISO8601.string(fromMillis: expiresAtMs))")
        case .joinRequest, .membership:
            return nil
        default:
            guard receipt.isUserVisible else { return nil }
            return (summary, content.displayText)
        }
    }
}
