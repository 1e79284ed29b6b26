import DaemonLogging
import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire

/// The creator's answer to a join it rejected (docs/protocol/join-refusal.md): a
/// `sotto/join_refused:1.0` naming the request's message id and the reason, signed by this
/// device's identity in the conversation and sealed to the requester's key and clientId from
/// the request, queued as a notice to the request's endpoint (no message row, as a receipt):
/// the outbox delivers it direct or through a relay like anything else. Each takes a token of
/// `JoinRefusalRateLimit`; with none left the request stays rejected, unanswered, and the drop
/// is counted in the log.
///
/// ```swift
/// await answer([Rejection(request: r, reason: "invite revoked", refusal: .revoked)], in: conversation)
/// ```
extension JoinRequestHandler {
    func answer(_ rejections: [Rejection], in conversation: DBConversation) async {
        var pushes: [(PushPayload, String)] = []
        let identity: Identity
        do {
            identity = try await identities.identity(of: conversation.inboxId)
        } catch {
            DaemonLog.warning("\(rejections.count) join refusal(s) not sent: the creator's identity did not open: \(error)")
            return
        }
        for rejection in rejections {
            guard let reason = rejection.refusal, let key = try? PublicKey(hex: rejection.request.requesterPublicKey) else { continue }
            guard refusalLimit.take(conversationId: conversation.id, nowMs: WallClock.nowMs()) else {
                DaemonLog.info("join request \(rejection.request.messageId.prefix(12)) not answered: over the refusal rate bound "
                               + "(\(refusalLimit.dropped) unanswered since start)")
                continue
            }
            let content = JoinRefusal(joinRequestId: rejection.request.messageId, reason: reason).encode()
            let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversation.id,
                                            sentAtMs: WallClock.nowMs(), contentType: ContentType.joinRefused,
                                            content: content, fallback: "Your request to join was refused",
                                            signer: identity.privateKey)
            let envelope = Envelope.seal(signed.encode(), recipient: key, clientId: rejection.request.clientId,
                                         topic: conversation.topic)
            pushes.append((PushPayload(clientId: rejection.request.clientId, topic: nil, envelope: envelope),
                           rejection.request.endpoint))
        }
        guard !pushes.isEmpty else { return }
        let queued = pushes
        do {
            try await database.write { conn in
                let now = WallClock.nowMs()
                for (push, endpoint) in queued {
                    try OutlivingNoticeWriter.queue(payload: push, endpoint: endpoint, now: now, on: conn)
                }
            }
        } catch {
            DaemonLog.warning("\(queued.count) join refusal(s) not queued: \(error)")
            return
        }
        refusalsSent += queued.count
        DaemonLog.info("\(queued.count) join refusal(s) queued (\(refusalsSent) since start)")
        await outbox.kick()
    }
}
