/// Whose connection a push to a relay goes out on (docs/adr/0044): this device's identity
/// that sends it. A message goes out on its conversation's connection; a notice that
/// outlives its conversation (an explode, a receipt: no message row names the conversation)
/// on a connection of its recipient's mailbox, which belongs to one conversation too; an
/// outbox push whose message row is gone, on one of its recipient's inbox. Two pushes of
/// different conversations never share a connection.
///
/// ```swift
/// RelaySender(conversationId: "c-1").key    // "conversation c-1"
/// RelaySender(recipientClientId: id).key    // "to <id>"
/// RelaySender(recipientInboxId: id).key     // "to inbox <id>"
/// ```
struct RelaySender: Sendable, Hashable {
    let key: String

    init(conversationId: String) { key = "conversation " + conversationId }
    init(recipientClientId: String) { key = "to " + recipientClientId }
    /// The member by its inbox id (an outbox row names the member so, not by clientId).
    init(recipientInboxId: String) { key = "to inbox " + recipientInboxId }
}
