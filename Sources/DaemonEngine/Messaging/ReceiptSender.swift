import DaemonLogging
import DaemonStore
import ServiceLifecycle
import SharedStore
import SottoCrypto
import SottoWire

/// Seals the delivery receipts this device owes (docs/protocol/receipts.md, docs/adr/0039).
/// The worker records one `receipt_due` row per message it stored (or refused for good after
/// verifying its signer) in its commit; this service, woken by the change feed and once at
/// start-up, takes every due row, groups them by conversation and sender, signs one
/// `sotto/receipt:1.0` per `Receipt.maxEntries` messages with the conversation's identity,
/// seals it to that sender alone, and queues it with the notices the outbox delivers (it has
/// no message row: nothing in the timeline, no receipt for a receipt). The queued pushes and
/// the deletion of their rows commit in one transaction, so a crash loses or repeats nothing.
/// Rows whose sender is no longer a member, or whose conversation's receipts are off, are
/// dropped unsent.
///
/// ```swift
/// let receipts = ReceiptSender(database: db, identities: identities, outbox: outbox)  // a DaemonServices part
/// await receipts.kick()                                                               // after a commit
/// ```
public actor ReceiptSender: Service {
    /// Rows read per pass; a pass repeats until none is left.
    static let rowsPerPass = 400

    let database: DaemonDatabase
    let identities: InboxIdentities
    let outbox: OutboxSender
    private let wakeSignal = WakeSignal()

    init(database: DaemonDatabase, identities: InboxIdentities, outbox: OutboxSender) {
        self.database = database
        self.identities = identities
        self.outbox = outbox
    }

    nonisolated func kick() { wakeSignal.wake() }

    public func run() async {
        await wakeSignal.serve(atMostMs: 60_000) {
            await self.sendDue()
            return nil
        }
    }

    /// Seals and queues every receipt due now.
    func sendDue() async {
        var queued = 0
        while !Task.isShuttingDownGracefully {
            guard let due = try? database.read({ conn in try ReceiptDueRepository.due(limit: Self.rowsPerPass, on: conn) }),
                  !due.isEmpty else { break }
            var groups: [[ReceiptDueRepository.Entry]] = []
            for entry in due {
                if let last = groups.last?.last, last.conversationId == entry.conversationId,
                   last.senderInboxId == entry.senderInboxId {
                    groups[groups.count - 1].append(entry)
                } else {
                    groups.append([entry])
                }
            }
            var progressed = false
            for group in groups {
                do {
                    queued += try await send(group)
                    progressed = true
                } catch {
                    DaemonLog.warning("receipts for conversation \(group[0].conversationId.prefix(8)) not sealed yet: \(error)")
                }
            }
            guard progressed else { break }  // nothing could be sealed: the next wake tries again
        }
        if queued > 0 { await outbox.kick() }
    }

    /// Seals one group (one conversation, one sender) and, in one transaction, queues its
    /// pushes and deletes its rows. Returns how many receipts it queued.
    private func send(_ group: [ReceiptDueRepository.Entry]) async throws -> Int {
        let conversationId = group[0].conversationId
        let senderInboxId = group[0].senderInboxId
        let ids = group.map(\.messageId)
        let (conversation, member, enabled) = try database.read { conn in
            (try ConversationRepository.find(id: conversationId, on: conn),
             try MemberRepository.member(conversationId: conversationId, inboxId: senderInboxId, on: conn),
             try ReceiptDueRepository.isEnabled(conversationId: conversationId, on: conn))
        }
        let now = WallClock.nowMs()
        guard let conversation, let member, enabled, conversation.expiresAt.map({ $0 > now }) ?? true,
              let key = try? PublicKey(hex: member.publicKey) else {
            try await database.write { conn in try ReceiptDueWriter.delete(messageIds: ids, on: conn) }
            return 0
        }
        let identity = try await identities.identity(of: conversation.inboxId)
        var pushes: [PushPayload] = []
        var start = 0
        while start < group.count {
            let chunk = group[start..<min(start + Receipt.maxEntries, group.count)]
            start += chunk.count
            let receipt = Receipt(delivered: chunk.filter { $0.error == nil }.map(\.messageId),
                                  failed: chunk.compactMap { entry in entry.error.map { Receipt.Failure(messageId: entry.messageId, error: $0) } })
            let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversation.id,
                                            sentAtMs: now, contentType: ContentType.receipt, content: receipt.encode(),
                                            fallback: nil, signer: identity.privateKey)
            let envelope = Envelope.seal(signed.encode(), recipient: key, clientId: member.clientId, topic: conversation.topic)
            pushes.append(PushPayload(clientId: member.clientId, topic: nil, envelope: envelope))
        }
        let endpoint = member.endpoint
        let ready = pushes
        CrashPoint.reach("receipts.sealed")  // signed and sealed, not queued: the rows are still owed
        try await database.write { conn in
            for push in ready { try OutlivingNoticeWriter.queue(payload: push, endpoint: endpoint, now: now, on: conn) }
            try ReceiptDueWriter.delete(messageIds: ids, on: conn)
        }
        return ready.count
    }
}
