/// Who may send which content type into a conversation (docs/protocol-rules.md, ADR 0014).
/// Checked on every device where a push is accepted, before the duplicate check, so a
/// refused sender learns nothing about what is stored:
///
/// | content | who | else |
/// |---|---|---|
/// | text, reply, reaction, `sotto/attachment:1.0` (its reference decoded strictly first: `malformed_message`), unknown with fallback | a member, with its key | `unknown_sender` |
/// | `convos.org/explode_settings:1.0` (a time or a cancel, docs/protocol/explode-schedule.md) | the creator | `unknown_sender` |
/// | `sotto/membership:1.0` | the creator; the list keeps the creator with its key | `unknown_sender` / `malformed_message` |
/// | `sotto/roster_delta:1.0` | the creator; it may not remove the creator | `unknown_sender` / `malformed_message` |
/// | `sotto/join_request:1.0` | anyone, sent to the creator's device only | `unknown_sender` |
/// | `sotto/leave:1.0` | a member who is not the creator (the signer is who leaves) | `unknown_sender` |
/// | `sotto/remove:1.0` | the creator, naming a member other than itself | `unknown_sender` / `malformed_message` |
/// | `sotto/roster_request:1.0`, `sotto/rename:1.0` | a member who is not the creator (the signer is who asks), sent to the creator's device only | `unknown_sender` |
/// | `sotto/receipt:1.0` | a member, naming only messages sent to it (`ReceiptWriter`) | `unknown_sender` / `unknown_message` |
/// | `sotto/join_refused:1.0` | the creator, with the key the invite named, to a device whose join is pending, naming its join request (`JoinRefusalWriter`) | `unknown_sender` / `unknown_message` |
///
/// ```swift
/// try SenderRules.check(message, conversation: conversation, recipientInboxId: me, on: conn)
/// ```
public enum SenderRules {
    public static func check(_ m: IncomingMessage, conversation: DBConversation, recipientInboxId: String,
                             on conn: SQLiteConnection) throws(IncomingWriteError) {
        if case .joinRequest = m.kind {
            // Only the creator's main process decides on a request; anywhere else it would sit
            // pending forever and keep the inbox protected.
            guard recipientInboxId == conversation.creatorInboxId else {
                throw .notPermitted("a join request goes to the conversation's creator, not to this member")
            }
            return
        }
        let member: DBMember?
        do {
            member = try MemberRepository.member(conversationId: m.conversationId, inboxId: m.senderInboxId, on: conn)
        } catch {
            throw .store(error)
        }
        guard let member, member.publicKey == m.senderPublicKey.lowercased() else { throw .unknownSender }
        let isCreator = m.senderInboxId == conversation.creatorInboxId
        switch m.kind {
        case .explodeSettings:
            guard isCreator else { throw .notPermitted("only the conversation's creator may explode it") }
        case .membership(_, let members, _):
            guard isCreator else { throw .notPermitted("only the conversation's creator may change its members") }
            guard members.contains(where: { $0.inboxId == member.inboxId && $0.publicKey.lowercased() == member.publicKey })
            else { throw .invalidContent("a membership must list the creator with its key") }
        case .rosterDelta(_, _, let removed, _):
            guard isCreator else { throw .notPermitted("only the conversation's creator may change its members") }
            guard !removed.contains(conversation.creatorInboxId) else {
                throw .invalidContent("a roster change may not remove the creator")
            }
        case .leave:
            // The creator never leaves: it explodes the conversation instead.
            guard !isCreator else { throw .notPermitted("the conversation's creator cannot leave it; it explodes it") }
        case .remove(let inboxId):
            guard isCreator else { throw .notPermitted("only the conversation's creator may remove a member") }
            guard inboxId != conversation.creatorInboxId else { throw .invalidContent("the creator cannot remove itself") }
        case .rosterRequest, .rename:
            guard !isCreator else { throw .notPermitted("the conversation's creator holds the roster; it does not ask for it") }
            // Only the creator's device answers; a request anywhere else would be kept for nobody.
            guard recipientInboxId == conversation.creatorInboxId else {
                throw .notPermitted("a roster request goes to the conversation's creator, not to this member")
            }
        case .joinRefused:
            // The creator's member row on a joining device holds the key its invite named.
            guard isCreator else { throw .notPermitted("only the conversation's creator may refuse a join") }
            guard recipientInboxId != conversation.creatorInboxId else {
                throw .notPermitted("a join refusal goes to the device that asked to join")
            }
        case .stored, .joinRequest, .receipt:
            break
        }
    }
}
