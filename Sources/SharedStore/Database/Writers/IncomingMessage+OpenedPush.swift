import SottoCrypto

/// The bridge from the protocol layer to the store: a verified push becomes the writer's
/// input, its content already sorted into what the store does with it.
///
/// ```swift
/// let opened = try PushOpener.open(bytes) { try keystore.identity(clientId: $0) }
/// let outcome = try IncomingMessageWriter.write(IncomingMessage(opened), recipientInboxId: opened.recipientInboxId, …)
/// ```
extension IncomingMessage {
    public init(_ opened: OpenedPush) {
        let message = opened.message
        self.init(id: message.id, conversationId: message.conversationId, senderInboxId: message.senderInboxId,
                  senderPublicKey: message.senderPublicKey, sentAtMs: message.sentAtMs,
                  contentType: opened.contentType, content: opened.contentBytes, fallback: opened.fallback,
                  kind: Kind(opened.content))
    }
}

extension MemberEntry {
    /// A member as a roster message lists it.
    public init(_ member: Member) {
        self.init(inboxId: member.inboxId, publicKey: member.publicKey, endpoint: member.endpoint,
                  clientId: member.clientId, profileName: member.profileName)
    }
}

extension IncomingMessage.Kind {
    /// What the store does with a decoded content.
    public init(_ content: MessageContent) {
        switch content {
        case .text, .unknown, .attachment:
            self = .stored(referenceId: nil)
        case .reply(let reference, _), .reaction(let reference, _, _):
            self = .stored(referenceId: reference)
        case .explodeSettings(let schedule):
            self = .explodeSettings(schedule)
        case .joinRequest(let request):
            self = .joinRequest(inviteId: request.inviteId, secret: request.secret, profileName: request.profileName,
                                endpoint: request.endpoint, clientId: request.clientId)
        case .leave:
            self = .leave
        case .remove(let inboxId):
            self = .remove(inboxId: inboxId)
        case .receipt(let receipt):
            self = .receipt(receipt)
        case .rosterRequest(let version):
            self = .rosterRequest(version: version)
        case .rename(let name):
            self = .rename(profileName: name)
        case .joinRefused(let refusal):
            self = .joinRefused(joinRequestId: refusal.joinRequestId, reason: refusal.reason.rawValue)
        case .membership(let name, let members, let version):
            self = .membership(name: name, members: members.map(MemberEntry.init), version: version)
        case .rosterDelta(let delta):
            self = .rosterDelta(base: delta.base, added: delta.added.map(MemberEntry.init), removed: delta.removed,
                                renamed: delta.renamed)
        }
    }
}
