import ControlProtocol
import SottoClient
import Testing

/// The retry rule of each call the chat app and `sotto` make (docs/adr/0071): a call made
/// twice after a lost reply must change nothing more than made once.
@Suite("Client requests")
struct ClientRequestsTests {
    @Test("reads and marks are retried after a dropped connection; nothing that acts is")
    func retryRules() {
        #expect(ClientRequests.listConversations().retry)
        #expect(ClientRequests.readPage(conversation: "3fa2", limit: 50).retry)
        #expect(ClientRequests.markRead(conversation: "3fa2").retry)
        #expect(ClientRequests.status().retry)
        let acting = [
            ClientRequests.send(conversation: "3fa2", text: "hi").retry,
            ClientRequests.react(conversation: "3fa2", message: "ab", emoji: "👍").retry,
            ClientRequests.create(name: "Trip").retry,
            ClientRequests.invite(conversation: "3fa2").retry,
            ClientRequests.revokeInvite(conversation: "3fa2", invite: "ab").retry,
            ClientRequests.join(code: "sotto1:x").retry,
            ClientRequests.dismissRefusal(conversation: "3fa2").retry,
            ClientRequests.setMuted(true, conversation: "3fa2").retry,
            ClientRequests.receipts(conversation: "3fa2", enabled: false).retry,
            ClientRequests.notificationPreview(conversation: nil, preview: "none").retry,
            ClientRequests.rename(conversation: "3fa2", name: "al").retry,
            ClientRequests.leave(conversation: "3fa2").retry,
            ClientRequests.remove(member: "bob", conversation: "3fa2").retry,
            ClientRequests.explode(conversation: "3fa2").retry,
        ]
        #expect(acting.allSatisfy { !$0 })
    }

    @Test("each request carries the params its arguments name")
    func params() {
        #expect(ClientRequests.readPage(conversation: "3fa2", limit: 7, before: "m1").params
                == ReadMessagesParams(conversation: "3fa2", limit: 7, before: "m1"))
        #expect(ClientRequests.setMuted(false, conversation: "3fa2").params == MuteConversationParams(conversation: "3fa2", muted: false))
        #expect(ClientRequests.remove(member: "bob", conversation: "3fa2").params == RemoveMemberParams(conversation: "3fa2", member: "bob"))
        #expect(ClientRequests.explode(conversation: "3fa2", atMs: 9, cancel: false).params
                == ExplodeParams(conversation: "3fa2", atMs: 9, cancel: false))
    }
}
