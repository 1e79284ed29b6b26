import DaemonLogging
import DaemonStore
import ServiceLifecycle
import SharedStore
import SottoCrypto
import SottoWire

/// What members ask the creator about the roster, both ends (docs/protocol/roster.md §9–§10,
/// docs/adr/0049): the full roster after a gap, so a gap heals without waiting for the
/// creator's next periodic full roster, and a rename (`RosterRequests+Rename.swift`). For gaps:
///
/// - **A member's device**: a delta kept ahead of the roster (`roster_pending`) whose
///   predecessor has not arrived `gapWaitMs` after it did is a gap that will not fill by
///   itself; the device signs a `sotto/roster_request:1.0` carrying its roster version, seals
///   it to the creator alone, and queues it as a notice (no message row, as a receipt). At most
///   one request per conversation per `askEveryMs`.
/// - **The creator's device**: each request the worker recorded (`roster_request`) is answered
///   with the full roster at the current version, to that member alone (by reference when it
///   does not fit one push), unless the member's roster is not behind. At most one answer per
///   member per `answerEveryMs`; a request inside that window waits for its end (deferred, not
///   dropped), so a hostile member gets one full roster per window, whatever it sends.
///
/// Woken by the change feed (a kept delta is a `membersChanged`, a request a `rosterRequested`)
/// and by its own deadlines; a pass at start-up answers what came while the daemon was down.
///
/// ```swift
/// let requests = RosterRequests(database: db, identities: identities, outbox: outbox)  // a DaemonServices part
/// requests.kick()                                                                      // after a commit
/// try await requests.rename(in: "3fa2", to: "Bea")                                     // `sotto rename`
/// ```
public actor RosterRequests: Service {
    /// How long a gap may stay open before the member asks: a reordered delta (an outbox retry,
    /// a relay catch-up) normally lands within the outbox's first retries (1 s, 2 s).
    static let gapWaitMs: Int64 = 3_000
    /// A member asks again for the same conversation at most this often (its request or the
    /// answer may be lost; the outbox retries both meanwhile).
    static let askEveryMs: Int64 = 60_000
    /// The creator sends one member the full roster at most this often: 285 KB per 5 minutes
    /// (< 1 KB/s) is all a hostile member can make it send.
    static let answerEveryMs: Int64 = 300_000

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
        await wakeSignal.serve(atMostMs: 60_000) { await self.pass() }
    }

    /// Asks for what is due and answers what is owed; returns when the next deadline is.
    func pass() async -> Int64? {
        var queued = await askForGaps()
        queued += await answerRequests()
        queued += await applyRenames()
        if queued > 0 { await outbox.kick() }
        let now = WallClock.nowMs()
        return try? database.read { conn in
            [try RosterRequestRepository.nextAskAt(waitMs: Self.gapWaitMs, everyMs: Self.askEveryMs, now: now, on: conn),
             try RosterRequestRepository.nextAnswerAt(everyMs: Self.answerEveryMs, on: conn),
             try RosterRequestRepository.nextRenameAt(everyMs: Self.renameEveryMs, on: conn)].compactMap { $0 }.min()
        }
    }

    // MARK: - A member asks

    private func askForGaps() async -> Int {
        let now = WallClock.nowMs()
        let gaps = (try? database.read { conn in
            try RosterRequestRepository.gapsToAsk(seenBy: now - Self.gapWaitMs, askedBy: now - Self.askEveryMs, now: now, on: conn)
        }) ?? []
        var asked = 0
        for gap in gaps {
            do {
                try await ask(gap)
                asked += 1
            } catch {
                DaemonLog.warning("the roster of conversation \(gap.conversationId.prefix(8)) is not asked for yet: \(error)")
            }
        }
        return asked
    }

    private func ask(_ gap: RosterRequestRepository.Gap) async throws {
        guard let conversation = try database.read({ conn in try ConversationRepository.find(id: gap.conversationId, on: conn) })
        else { return }
        try await queueToCreator(of: conversation, contentType: ContentType.rosterRequest,
                                 content: RosterRequest(version: gap.version).encode()) { conn, now in
            try RosterSettlementWriter.recordAsked(conversationId: conversation.id, version: gap.version, now: now, on: conn)
        }
        DaemonLog.info("roster gap in conversation \(conversation.id.prefix(8)) at version \(gap.version): asked the creator for the full roster")
    }

    /// Signs `content` with this device's identity in the conversation, seals it to the
    /// creator alone and queues it as a notice (no message row, as a receipt), with `also` in
    /// the same transaction.
    func queueToCreator(of conversation: DBConversation, contentType: String, content: [UInt8],
                        also: @escaping @Sendable (SQLiteConnection, Int64) throws -> Void = { _, _ in }) async throws {
        guard let creator = try database.read({ conn in
            try MemberRepository.member(conversationId: conversation.id, inboxId: conversation.creatorInboxId, on: conn)
        }), let key = try? PublicKey(hex: creator.publicKey) else {
            throw ConversationService.Failure.refused("this device does not know the conversation's creator")
        }
        let identity = try await identities.identity(of: conversation.inboxId)
        let now = WallClock.nowMs()
        let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversation.id, sentAtMs: now,
                                        contentType: contentType, content: content, fallback: nil, signer: identity.privateKey)
        let envelope = Envelope.seal(signed.encode(), recipient: key, clientId: creator.clientId, topic: conversation.topic)
        let push = PushPayload(clientId: creator.clientId, topic: nil, envelope: envelope)
        try await database.write { conn in
            try OutlivingNoticeWriter.queue(payload: push, endpoint: creator.endpoint, now: now, on: conn)
            try also(conn, now)
        }
        await outbox.kick()
    }

    // MARK: - The creator answers

    private func answerRequests() async -> Int {
        let owed = (try? database.read { conn in
            try RosterRequestRepository.owed(answeredBy: WallClock.nowMs() - Self.answerEveryMs, on: conn)
        }) ?? []
        var answered = 0
        for request in owed {
            do {
                if try await answer(request) { answered += 1 }
            } catch {
                DaemonLog.warning("a roster request in conversation \(request.conversationId.prefix(8)) is not answered yet: \(error)")
            }
        }
        return answered
    }

    /// One transaction: the request re-read under the write lock, the full roster to that
    /// member alone (when it is behind and still a member), the request settled.
    private func answer(_ request: RosterRequestRepository.Request) async throws -> Bool {
        guard let conversation = try database.read({ conn in try ConversationRepository.find(id: request.conversationId, on: conn) }),
              conversation.creatorInboxId == conversation.inboxId else { return false }
        let identity = try await identities.identity(of: conversation.inboxId)
        let sent = try await database.write { conn -> Bool in
            let now = WallClock.nowMs()
            guard let request = try RosterRequestRepository.stillOwed(request, answeredBy: now - Self.answerEveryMs, on: conn)
            else { return false }
            let version = try RosterWriter.version(of: conversation.id, on: conn)
            guard request.version < version,
                  let member = try MemberRepository.member(conversationId: conversation.id, inboxId: request.inboxId, on: conn)
            else {
                try RosterSettlementWriter.settle(request, answered: false, now: now, on: conn)
                return false
            }
            try RosterAnnouncer.queueFullRoster(of: conversation, version: version, to: [member], from: identity, on: conn)
            try RosterSettlementWriter.settle(request, answered: true, now: now, on: conn)
            return true
        }
        if sent {
            DaemonLog.info("a member asked for the roster of conversation \(conversation.id.prefix(8)): the full roster is sent to it")
        }
        return sent
    }
}
