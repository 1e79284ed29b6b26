/// Whose connection a push to a relay goes out on (docs/adr/0044): this device's identity
/// that sends it. A message goes out on its conversation's connection; a notice that
/// outlives its conversation (an explode, a receipt: no message row names the conversation)
/// on a connection of its recipient's mailbox, which belongs to one conversation too. Two
/// pushes of different conversations never share a connection.
///
/// ```swift
/// RelaySender(conversationId: "c-1").key    // "conversation c-1"
/// RelaySender(recipientClientId: id).key    // "to <id>"
/// ```
struct RelaySender: Sendable, Hashable {
    let key: String

    init(conversationId: String) { key = "conversation " + conversationId }
    init(recipientClientId: String) { key = "to " + recipientClientId }
}
