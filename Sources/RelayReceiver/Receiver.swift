import Glibc
import RelayTransport
import SottoCrypto
import SottoWire

/// sotto-relayd's loop, on one thread: find the relay reachable (waiting and retrying while
/// it is down), keep one connection and one consumer per keystore identity whose inbox the
/// daemon keeps awake (rescanning when inotify says the keystore or the awake marks changed;
/// no connection ever carries two identities' mailboxes, docs/adr/0044), drain a sleeping
/// inbox's mailbox on a short connection of its own at random moments (docs/adr/0056), and
/// drain each mailbox that may hold messages into push.sock,
/// settling each message by the worker's ack (docs/adr/0026). What one fetch returns goes to
/// the worker as one batch (docs/adr/0027), acked push by push:
///
/// | worker ack | relay |
/// |---|---|
/// | ok, also duplicate | ack (on the ack thread, overlapping the next delivery; AckSync for the last of a batch) |
/// | busy, timeout, internal, no ack, no socket | Nak (it and the rest of the batch), and the mailbox pauses, doubling from `retryMinMs` |
/// | any other error | Term, and a log line |
///
/// ```swift
/// Receiver(options: options, stops: StopSignals.install()).run()   // never returns
/// ```
final class Receiver {
    private let options: RelaydOptions
    private let stops: StopSignals
    /// The stop signal received, once one was (the loop finishes its batch first).
    private var stopSignal: String?
    private let queue = WakeQueue()
    private let watcher: DirectoryWatcher
    /// The daemon's marks of its awake inboxes, and what they said last.
    private let awakeWatcher: DirectoryWatcher
    private var awake: AwakeMailboxes
    private let sleeping: SleepingDrains
    private let delivery: PushSocketHandoff
    /// Acks for stored messages, overlapped with the next delivery.
    private let acks = AckPipeline()
    /// A connection that checked the mailbox stream succeeded (it is closed at once: it
    /// touches no mailbox); each identity then opens its own.
    private var relayReachable = false
    private let losses = ConnectionLossLog()
    private var slots: [Mailbox: MailboxSlot] = [:]
    /// When each identity's connection first opens: not all together (issue #19 goal 4).
    private var spread = ConnectSpread()
    /// The mailboxes this device holds consumers for, on disk (docs/adr/0030), and what was
    /// last written there (nil: not known to match anything, write it at the next scan).
    private let record: MailboxRecord
    /// Each identity's relay user, with a signing key (docs/adr/0051).
    private let identityKeys: IdentityRelayKeys
    /// Identities whose key file was refused, logged once each.
    private var refusedKeys: Set<String> = []
    private var recorded: Set<Mailbox>?
    /// Mailboxes an earlier run recorded, not yet compared with the keystore (the first scan does).
    private var fromRecord: Set<Mailbox> = []
    private var recordWriteFailures = 0

    private var connectFailures = 0
    private var nextConnectAt: Int64 = 0
    private var nextRescanAt: Int64 = 0
    private var nextSweepAt: Int64 = 0
    /// Messages per mailbox per turn, so one busy mailbox does not starve the others.
    private let turnBudget = 1_024
    /// Messages per fetch, all delivered in one batch to one worker (docs/adr/0027).
    private let fetchSize = PushBatchExchange.maxPushes
    private static let rescanIntervalMs: Int64 = 60_000
    private static let sweepIntervalMs: Int64 = 300_000

    init(options: RelaydOptions, stops: StopSignals) {
        self.options = options
        self.stops = stops
        watcher = DirectoryWatcher(directory: options.group.keystorePath)
        awakeWatcher = DirectoryWatcher(directory: options.group.awakeMailboxesPath)
        awake = AwakeMailboxes.read(options.group.awakeMailboxesPath)
        sleeping = SleepingDrains(boundMs: options.sleepingDrainMs)
        delivery = PushSocketHandoff(socketPath: options.runtime.pushSocketPath)
        record = MailboxRecord(groupDirectory: options.group.path)
        identityKeys = IdentityRelayKeys(groupDirectory: options.group.path)
        loadRecord()
    }

    func run() -> Never {
        RelaydLog.info("starting: relay \(options.relay.url), keystore \(options.group.keystorePath), "
                       + "push socket \(options.runtime.pushSocketPath)")
        while true {
            if stopRequested() { stop() }
            let now = MonotonicClock.nowMs()
            if !relayReachable, now >= nextConnectAt { probe(now: now) }
            let changed = watcher.drain()
            watcher.rearm()
            let rescanning = changed || now >= nextRescanAt
            if rescanning { rescan(now: now) }
            let wasWatchingAwake = awakeWatcher.isWatching
            let awakeChanged = awakeWatcher.drain()
            awakeWatcher.rearm()
            if awakeChanged || rescanning || awakeWatcher.isWatching != wasWatchingAwake { readAwakeMarks(now: now) }
            let woken = queue.take()
            if now >= nextSweepAt {
                nextSweepAt = now + Self.sweepIntervalMs
                for slot in slots.values { slot.due = true }
                // A relay back from a restart may have lost its store (a fetch from a consumer
                // that is gone only times out): reopen what it no longer has.
                for slot in slots.values where slot.isOpen && consumerIsGone(slot) {
                    RelaydLog.warning("the relay lost the consumer of \(slot.mailbox); recreating it")
                    slot.close()
                    slot.openRetryAt = 0
                }
            }
            for mailbox in woken.reconnected {
                guard let slot = slots[mailbox] else { continue }
                slot.due = true
                if slot.isOpen, consumerIsGone(slot) {
                    RelaydLog.warning("the relay lost the consumer of \(slot.mailbox); recreating it")
                    slot.close()
                    slot.openRetryAt = 0
                } else {
                    holdBackUnacked(slot)
                }
            }
            for mailbox in woken.mailboxes { slots[mailbox]?.due = true }
            if relayReachable {
                var openedAwake = 0
                for slot in slots.values where !slot.isOpen && now >= slot.openAt {
                    open(slot, now: now)
                    if slot.isOpen, slot.isAwake { openedAwake += 1 }
                }
                let awakeSlots = slots.values.filter(\.isAwake)
                if openedAwake > 0, awakeSlots.allSatisfy(\.isOpen) { RelaydLog.info("all \(awakeSlots.count) mailboxes open") }
                for mailbox in slots.keys.sorted(by: { $0.clientId < $1.clientId }) where !stopRequested() {
                    guard let slot = slots[mailbox], slot.isOpen, slot.isDue(at: MonotonicClock.nowMs()) else { continue }
                    drain(slot)
                }
                for slot in slots.values where !slot.isAwake && slot.isOpen && !slot.due && slot.missingSince == nil
                    && slot.redeliveriesAwaited == 0 && MonotonicClock.nowMs() >= slot.keepUntil && !stopRequested() {
                    putToSleep(slot)
                }
            }
            waitForWork()
        }
    }

    // MARK: - Stopping

    private func stopRequested() -> Bool {
        if stopSignal == nil { stopSignal = stops.received() }
        return stopSignal != nil
    }

    /// On SIGTERM or SIGINT, between batches: the acks of everything the worker stored reach
    /// the relay before the process ends (at most 3 s of systemd's 5 s stop timeout), so the
    /// next start neither waits an ack wait for redeliveries nor gets them again.
    private func stop() -> Never {
        let settled = acks.waitUntilSettled(timeoutMs: 3_000)
        for slot in slots.values { slot.disconnect(losses) }
        RelaydLog.info("stopped on \(stopSignal ?? "a signal")"
                       + (settled ? ": every stored message acked" : ": acks still in flight after 3 s; the relay redelivers those"))
        exit(0)
    }

    // MARK: - The relay

    /// Whether the relay answers, and its mailbox stream is there (created if not), on a
    /// connection of its own that touches no mailbox and is closed at once.
    private func probe(now: Int64) {
        do throws(RelayError) {
            let connection = try RelayConnection.connect(options.relay)
            defer { connection.close() }
            // With per-identity users the streams are the operator's (no user may create one).
            if !perIdentity { logStreamCheck(try connection.ensureStream(MailboxStream(maxAgeMs: options.mailboxMaxAgeMs))) }
            relayReachable = true
            RelaydLog.info("relay connected: \(options.relay.url)\(connectFailures > 0 ? " after \(connectFailures) failed attempts" : "")")
            connectFailures = 0
            for slot in slots.values {
                slot.openRetryAt = 0
                if slot.relay == nil { scheduleConnect(slot, now: now) }
            }
        } catch {
            exitOnConfiguration(error)
            connectFailures += 1
            if connectFailures == 1 || connectFailures % 20 == 0 {
                RelaydLog.warning("relay \(options.relay.url) not reachable (\(error)); retrying")
            }
            nextConnectAt = now + min(250 << Int64(min(connectFailures, 5)), 5_000)
        }
    }

    /// The connection of `slot`'s identity, opened on first use with the slot's reconnect
    /// handler; nil when the relay cannot be reached now (the slot retries later).
    private func connection(for slot: MailboxSlot, now: Int64) -> RelayConnection? {
        if let relay = slot.relay { return relay }
        let link = ConnectionLossLog.Link()
        let (queue, losses, mailbox) = (self.queue, self.losses, slot.mailbox)
        do throws(RelayError) {
            slot.relay = try RelayConnection.connect(options.relay, options: Self.identityConnection, user: slot.user) { event in
                switch event {
                case .disconnected: losses.lost(link)
                case .reconnected:
                    losses.back(link)
                    queue.reconnected(mailbox)
                }
            }
            slot.link = link
            return slot.relay
        } catch {
            exitOnConfiguration(error)
            // The relay went away: the probe waits for it (with its backoff and its log line).
            relayReachable = false
            nextConnectAt = now
            return nil
        }
    }

    /// One identity's connection: lean (no flusher thread, small buffers), since there are as
    /// many as identities (docs/adr/0044).
    private static let identityConnection: RelayConnection.Options = {
        var options = RelayConnection.Options()
        options.lean = true
        return options
    }()

    private func exitOnConfiguration(_ error: RelayError) {
        guard error.isConfiguration else { return }
        RelaydLog.error("\(error)")
        exit(RelayError.configurationExitStatus)
    }

    private func logStreamCheck(_ check: MailboxStreamCheck) {
        switch check {
        case .created:
            RelaydLog.info("mailbox stream created: messages kept at most \(Self.describe(ms: options.mailboxMaxAgeMs))")
        case .found(let maxAgeMs) where maxAgeMs != options.mailboxMaxAgeMs:
            RelaydLog.info("mailbox stream keeps messages at most \(Self.describe(ms: maxAgeMs)) (the relay's own setting, kept)")
        case .found:
            break
        case .ageLimitAdded(let maxAgeMs):
            RelaydLog.info("mailbox stream had no age limit: messages are now kept at most \(Self.describe(ms: maxAgeMs))")
        case .ageLimitRefused(let why):
            RelaydLog.warning("mailbox stream has no age limit and the relay refused to add one (\(why)): "
                              + "a message published into a retired mailbox stays until the relay's operator sets one")
        }
    }

    private static func describe(ms: Int64) -> String {
        ms % 86_400_000 == 0 ? "\(ms / 86_400_000) days" : "\(ms) ms"
    }

    // MARK: - The mailbox record (docs/adr/0030)

    /// The mailboxes an earlier run held. The first scan retires those whose identity left the
    /// keystore while relayd was down (or died halfway through retiring it), like any other,
    /// and only those: other devices' consumers on the relay are never touched.
    private func loadRecord() {
        switch record.load() {
        case .absent:
            recorded = nil
        case .mailboxes(let boxes):
            recorded = boxes
            fromRecord = boxes
        case .refused(let why):
            recorded = nil
            RelaydLog.error("ignoring the mailbox record \(record.path) (\(why)); it is rewritten from the keystore, "
                            + "and a consumer of an identity deleted while relayd was down may stay on the relay")
        }
    }

    /// Writes the record when the slots differ from it: before a new slot's consumer is
    /// created (the loop opens after the scan), and after a retirement.
    private func saveRecordIfChanged() {
        let current = Set(slots.keys)
        guard current != recorded else { return }
        do throws(MailboxRecord.WriteFailure) {
            try record.save(current)
            recorded = current
            recordWriteFailures = 0
        } catch {
            recordWriteFailures += 1
            if recordWriteFailures % 60 == 1 {
                RelaydLog.warning("cannot write the mailbox record (\(error)); retrying every 5 s")
            }
            nextRescanAt = min(nextRescanAt, MonotonicClock.nowMs() + 5_000)
        }
    }

    // MARK: - Identities

    private func rescan(now: Int64) {
        nextRescanAt = now + Self.rescanIntervalMs
        let found: Set<String>
        switch KeystoreScan.clientIds(in: options.group.keystorePath) {
        case .found(let ids): found = ids
        case .unreadable(let why):
            if watcher.isWatching { RelaydLog.warning("keystore not readable (\(why)); keeping \(slots.count) mailboxes") }
            nextRescanAt = now + 2_000  // the daemon may not have created it yet
            return
        }
        for clientId in found {
            guard let mailbox = try? Mailbox(clientId: clientId) else { continue }
            if let slot = slots[mailbox] {
                slot.missingSince = nil
            } else {
                guard let slot = makeSlot(mailbox, create: true) else { continue }
                slot.isAwake = awake.contains(clientId)
                slots[mailbox] = slot
                scheduleConnect(slot, now: now)
                RelaydLog.info("identity added: \(mailbox)")
            }
        }
        for mailbox in fromRecord where slots[mailbox] == nil {
            guard let slot = makeSlot(mailbox, create: false) else { continue }
            slot.missingSince = now
            slots[mailbox] = slot
            scheduleConnect(slot, now: now)
            RelaydLog.info("identity left the keystore while relayd was away; retiring: \(mailbox)")
        }
        fromRecord = []
        for (mailbox, slot) in slots where !found.contains(mailbox.clientId) {
            let since = slot.missingSince ?? now
            slot.missingSince = since
            // One without a connection (left while relayd was away) opens one to retire, at
            // its own moment too.
            let due = max(since + options.goneAfterMs, slot.relay == nil ? slot.connectAt : 0)
            if now >= due {
                retire(slot)
            } else {
                nextRescanAt = min(nextRescanAt, due)
            }
        }
        saveRecordIfChanged()
    }

    /// Gives a slot without a connection its moment to open one (`ConnectSpread`): a slot
    /// whose identity is missing opens one only to retire it, once it is gone for good.
    private func scheduleConnect(_ slot: MailboxSlot, now: Int64) {
        let base = slot.missingSince.map { max(now, $0 + options.goneAfterMs) } ?? now
        slot.connectAt = spread.moment(after: base)
    }

    private var perIdentity: Bool { options.relay.credentials.isPerIdentity }

    /// A slot for `mailbox`; with per-identity users, its consumer named by the identity's
    /// relay key (made now with `create`). nil when that key is refused: the identity's
    /// mailbox is left alone (a new key would not own its consumer).
    private func makeSlot(_ mailbox: Mailbox, create: Bool) -> MailboxSlot? {
        guard perIdentity else { return MailboxSlot(mailbox: mailbox) }
        switch identityKeys.key(for: mailbox.clientId, create: create) {
        case .key(let user):
            refusedKeys.remove(mailbox.clientId)
            let slot = MailboxSlot(mailbox: mailbox.owned(by: user.publicKey))
            slot.user = user
            return slot
        case .refused(let why):
            if refusedKeys.insert(mailbox.clientId).inserted {
                RelaydLog.error("cannot use the relay key of \(mailbox) (\(why)); its mailbox is not touched")
            }
            return nil
        case .notWritten(let why):
            if refusedKeys.insert(mailbox.clientId).inserted {
                RelaydLog.warning("cannot make the relay key of \(mailbox) (\(why)); retrying every 5 s")
            }
            nextRescanAt = min(nextRescanAt, MonotonicClock.nowMs() + 5_000)
            return nil
        }
    }

    /// The identity left the keystore (an explode or an inbox deletion): its consumer and
    /// whatever its mailbox still holds are deleted, so no ciphertext for it stays on the relay.
    private func retire(_ slot: MailboxSlot) {
        guard relayReachable, let relay = connection(for: slot, now: MonotonicClock.nowMs()) else { return }  // done once the relay is back
        slot.close()
        do {
            // Purge first: a crash between the two leaves an empty consumer, never ciphertext;
            // the mailbox record brings a restarted relayd back to it (docs/adr/0029, 0030).
            // A per-identity user may not purge (no user may touch another's subject): it
            // terminates whatever its own consumer still holds instead (docs/adr/0051).
            let drained = perIdentity ? try MailboxDrain.terminateAll(relay: relay, mailbox: slot.mailbox, ackWaitMs: options.ackWaitMs) : 0
            if !perIdentity { try relay.purge(slot.mailbox) }
            CrashPoint.reach("relayd.retire.purged")
            try relay.deleteConsumer(slot.mailbox)
            slot.disconnect(losses)
            slots[slot.mailbox] = nil
            if perIdentity {
                identityKeys.remove(slot.mailbox.clientId)
                RelaydLog.info("identity gone: mailbox drained (\(drained) terminated) and consumer deleted: \(slot.mailbox)")
            } else {
                RelaydLog.info("identity gone: consumer deleted and mailbox purged: \(slot.mailbox)")
            }
        } catch {
            // A transient refusal (nats-server 2.9 answered a consumer delete with "unlinkat …
            // directory not empty" under load, issue #32) is retried soon, doubling from
            // --retry-min-ms: waiting for the minute's rescan kept the ciphertext there a minute.
            slot.failedRetirements += 1
            let delay = retryDelay(deliveries: slot.failedRetirements)
            nextRescanAt = min(nextRescanAt, MonotonicClock.nowMs() + delay)
            RelaydLog.warning("identity gone, relay cleanup failed (\(error)); will retry in \(delay) ms: \(slot.mailbox)")
        }
    }

    private func open(_ slot: MailboxSlot, now: Int64) {
        guard slot.missingSince == nil, let relay = connection(for: slot, now: now) else { return }
        do {
            // A sleeping mailbox with nothing waiting: one question, and its connection closes
            // (most drains; the consumer exists since its first).
            if !slot.isAwake, slot.redeliveriesAwaited == 0, let state = try relay.consumerState(slot.mailbox),
               state.pending == 0, state.ackPending == 0 {
                putToSleep(slot)
                return
            }
            try startAtFirstUnacked(slot, relay: relay)
            // A sleeping mailbox is drained now and its connection closed: nothing to watch.
            if slot.isAwake { slot.watch = try MailboxWatch(relay: relay, mailbox: slot.mailbox, handler: queue) }
            slot.consumer = try MailboxConsumer(relay: relay, mailbox: slot.mailbox, ackWaitMs: options.ackWaitMs)
            // Drained now only if it holds something: an empty fetch from a consumer just made
            // may be held its whole 200 ms, and with the opens spread over 5 s among the drains
            // relayd with 1,000 empty mailboxes took 21 s instead of 9.6 s to settle at start.
            // Asked once the watch is in place, so what comes after wakes it.
            slot.due = try relay.consumerState(slot.mailbox).map { $0.pending > 0 || $0.ackPending > 0 } ?? true
        } catch {
            slot.close()
            slot.openRetryAt = now + 1_000
            RelaydLog.warning("cannot open \(slot.mailbox) (\(error)); retrying")
            if !perIdentity { _ = try? relay.ensureStream(MailboxStream(maxAgeMs: options.mailboxMaxAgeMs)) }  // a relay that lost its store has no stream either
        }
    }

    /// Messages delivered to an earlier process or connection and never acked would come back
    /// only after the relay's ack wait, and not always in their order: after a power cut the
    /// relay redelivered 423–511 before 256–422 (docs/adr/0047). In a work-queue stream an acked
    /// message is gone, so a consumer made afresh delivers exactly the unacked ones, from the
    /// first, in order, at once. A crash between the delete and the create leaves no consumer,
    /// which `MailboxConsumer` creates the same way.
    private func startAtFirstUnacked(_ slot: MailboxSlot, relay: RelayConnection) throws(RelayError) {
        guard let state = try relay.consumerState(slot.mailbox), state.ackPending > 0 else { return }
        if perIdentity {
            // Deleting it would leave, until it is made again, a moment in which another
            // member's consumer may claim this subject (measured: one that keeps trying wins
            // at once). Kept, it redelivers after its ack wait; `drain` restores the order.
            slot.redeliveriesAwaited = state.ackPending
            slot.notBefore = max(slot.notBefore, MonotonicClock.nowMs() + max(state.ackWaitMs, options.ackWaitMs) + 500)
            RelaydLog.info("\(state.ackPending) messages of \(slot.mailbox) were delivered and not acked; they come back "
                           + "after the relay's ack wait and are handed over in stream order (docs/adr/0051)")
            return
        }
        try relay.deleteConsumer(slot.mailbox)
        RelaydLog.info("\(state.ackPending) messages of \(slot.mailbox) were delivered and not acked; "
                       + "its consumer starts again at the first of them")
    }

    /// The messages an earlier process left unacked, redelivered by the relay after its ack
    /// wait in no reliable order (docs/adr/0047), and whatever follows them in the same
    /// fetches, sorted by stream sequence, at most `fetchSize` of them (the rest, if any,
    /// come in order in the next fetches).
    private func collectRedeliveries(_ slot: MailboxSlot, _ consumer: MailboxConsumer) throws(RelayError) -> [RelayMessage] {
        var collected: [RelayMessage] = []
        var redelivered: Int64 = 0
        while redelivered < slot.redeliveriesAwaited {
            let batch = try consumer.fetch(max: fetchSize)
            if batch.isEmpty { break }
            collected += batch
            redelivered += Int64(batch.filter { $0.deliveries > 1 }.count)
        }
        collected.sort { $0.streamSequence < $1.streamSequence }
        // Past one worker batch: the tail goes back to the relay at once, in order behind the
        // head, and is collected the same way next.
        let tail = collected.dropFirst(fetchSize)
        for message in tail { try? message.nak(delayMs: 0) }
        slot.redeliveriesAwaited = Int64(tail.count)
        return Array(collected.prefix(fetchSize))
    }

    /// What the relay sent this slot may be lost on the way (a fetch or a settle failed, the
    /// connection came back): once the acks in flight are settled, the slot opens again and
    /// `open` restarts its consumer at the first unacked message. Acks that do not settle
    /// within 3 s, or a connection that is away: the mailbox waits for the relay's redelivery,
    /// and the connection's return (`holdBackUnacked`) reopens it.
    private func reopen(_ slot: MailboxSlot) {
        if slot.relay?.isConnected == true, acks.waitUntilSettled(timeoutMs: 3_000) {
            slot.close()
            slot.openRetryAt = 0
        } else {
            slot.notBefore = max(slot.notBefore, MonotonicClock.nowMs() + options.ackWaitMs + 500)
        }
    }

    // MARK: - Draining a mailbox into push.sock

    private func drain(_ slot: MailboxSlot) {
        guard let consumer = slot.consumer else { return }
        var handled = 0
        while handled < turnBudget, !stopRequested() {
            let batch: [RelayMessage]
            do {
                batch = try slot.redeliveriesAwaited > 0 ? collectRedeliveries(slot, consumer) : consumer.fetch(max: fetchSize)
            } catch {
                RelaydLog.warning("fetch from \(slot.mailbox) failed (\(error)); retrying")
                // What the relay sent may be lost on the way; or the relay lost the consumer
                // (wiped, or deleted by its operator): either way it is opened afresh.
                reopen(slot)
                return
            }
            if batch.isEmpty {
                slot.due = false
                return
            }
            handled += batch.count
            guard settle(batch, slot: slot) else { return }
            // Nothing waited behind the last one: no fetch to find the mailbox empty (nats-server
            // 2.9 holds such a fetch its whole 200 ms expiry while acks are pending, measured
            // 191 ms, stalling every other mailbox). A later publish wakes the mailbox. Only
            // after a first delivery: the count leaves out redeliveries still queued.
            if let last = batch.last, last.deliveries == 1, last.pendingAfter == 0, slot.redeliveriesAwaited == 0 {
                slot.due = false
                return
            }
        }
    }

    /// After its connection came back: a mailbox with messages delivered but not acked (an
    /// ack lost with the connection) opens again at the first of them, so its order holds.
    private func holdBackUnacked(_ slot: MailboxSlot) {
        guard slot.isOpen, let relay = slot.relay,
              let state = try? relay.consumerState(slot.mailbox), state.ackPending > 0 else { return }
        reopen(slot)
    }

    /// True only when the relay answered, on the slot's connection, that its consumer does
    /// not exist (not on an error, nor without a connection).
    private func consumerIsGone(_ slot: MailboxSlot) -> Bool {
        guard let relay = slot.relay else { return false }
        do throws(RelayError) { return try relay.consumerState(slot.mailbox) == nil } catch { return false }
    }

    /// Delivers the fetched messages in one batch (one worker start, one commit: docs/adr/0027)
    /// and settles each by its own ack; false when the mailbox should pause (a retry). The
    /// worker writes nothing after a push it asks to retry, so every later message is nak'd
    /// with the same delay and the mailbox keeps its order.
    private func settle(_ fetched: [RelayMessage], slot: MailboxSlot) -> Bool {
        // Each message is a padded frame (docs/protocol/relay-padding.md); one that is not
        // reaches no worker: terminated, and logged with the reason, never its bytes.
        var batch: [RelayMessage] = []
        var pushes: [[UInt8]] = []
        for message in fetched {
            do throws(RelayPadding.Failure) {
                pushes.append(try RelayPadding.unpad(message.data))
                batch.append(message)
            } catch {
                RelaydLog.warning("terminated message \(message.streamSequence) of \(slot.mailbox): bad relay padding (\(error))")
                do { try message.terminate() } catch {
                    RelaydLog.warning("settling message of \(slot.mailbox) failed (\(error))")
                }
            }
        }
        guard !batch.isEmpty else { return true }
        let outcomes = delivery.deliver(batch: pushes) { hint in fetchBody(hint, for: slot) }
        var stored: [RelayMessage] = []
        var paused = false
        var unsettled = false
        for (message, outcome) in zip(batch, outcomes) {
            do {
                switch outcome {
                case .stored:
                    stored.append(message)
                case .rejected(let code):
                    try message.terminate()
                    RelaydLog.warning("terminated message \(message.streamSequence) of \(slot.mailbox): worker refused it (\(code))")
                case .retry(let why):
                    if !paused {
                        let delay = retryDelay(deliveries: message.deliveries)
                        slot.notBefore = MonotonicClock.nowMs() + delay
                        paused = true
                        RelaydLog.info("message \(message.streamSequence) of \(slot.mailbox) not stored (\(why)); redelivery in \(delay) ms")
                    }
                    // Nak'd for redelivery at once, and the mailbox itself pauses: the relay
                    // then hands these out first, in order, before any later message. With the
                    // delay on the relay's side a fetch at the end of the pause could come
                    // before its timer and get later messages first (docs/adr/0027).
                    try message.nak(delayMs: 0)
                }
            } catch {
                // Not settled: the slot opens again at the first unacked message once this
                // batch is done; the worker's dedupe makes a second delivery harmless.
                RelaydLog.warning("settling message of \(slot.mailbox) failed (\(error))")
                unsettled = true
                paused = true
            }
        }
        if !stored.isEmpty { acks.enqueue(stored, label: "\(stored.count) messages of \(slot.mailbox)") }
        if unsettled { reopen(slot) }
        return !paused
    }

    /// A body a push in `slot`'s mailbox names, from the relay's body stream
    /// (docs/protocol/bodies.md §6).
    private func fetchBody(_ hint: BodyHint, for slot: MailboxSlot) -> PushSocketHandoff.BodyFetch {
        guard let relay = slot.relay else { return .failed("no relay connection") }
        do throws(RelayError) {
            guard let body = try relay.body(id: hint.id) else {
                RelaydLog.warning("a push to \(slot.mailbox) names body \(hint.id.prefix(8)), which the relay does not hold (expired or never published)")
                return .missing
            }
            return .found(body)
        } catch {
            return .failed("\(error)")
        }
    }

    private func retryDelay(deliveries: UInt64) -> Int64 {
        let doublings = Int64(min(max(deliveries, 1) - 1, 20))
        return min(options.retryMinMs << doublings, options.retryMaxMs)
    }

    // MARK: - Awake and sleeping inboxes (docs/adr/0056)

    /// What the daemon's marks say now: a mailbox that woke opens its connection (at once, or
    /// at its moment within the spread when several wake together) with its watch; one that
    /// fell asleep closes its connection once drained and is drained on schedule after.
    private func readAwakeMarks(now: Int64) {
        let current = AwakeMailboxes.read(options.group.awakeMailboxesPath)
        guard current != awake else { return }
        awake = current
        for slot in slots.values where slot.missingSince == nil {
            let isAwake = current.contains(slot.mailbox.clientId)
            guard isAwake != slot.isAwake else { continue }
            slot.isAwake = isAwake
            if isAwake {
                if slot.relay == nil {
                    slot.connectAt = spread.moment(after: now)
                } else if slot.isOpen, slot.watch == nil {
                    slot.close()  // opened again on the same connection, with its watch
                    slot.openRetryAt = 0
                }
            } else if slot.relay == nil {
                slot.connectAt = sleeping.next(after: now, sleepingCount: sleepingCount)
            } else {
                slot.keepUntil = now + Int64.random(in: 0...spread.windowMs)
            }
        }
    }

    /// A sleeping inbox's mailbox, drained: its connection closes once the acks sent on it are
    /// settled (else the next pass tries again), and its next drain is given its moment.
    private func putToSleep(_ slot: MailboxSlot) {
        guard acks.waitUntilSettled(timeoutMs: 3_000) else { return }
        slot.disconnect(losses)
        slot.due = false  // its next drain comes at its moment, whatever a sweep said meanwhile
        slot.openRetryAt = 0
        slot.connectAt = sleeping.next(after: MonotonicClock.nowMs(), sleepingCount: sleepingCount)
    }

    private var sleepingCount: Int { slots.values.count { !$0.isAwake && $0.missingSince == nil } }

    // MARK: - Sleeping

    private func waitForWork() {
        let now = MonotonicClock.nowMs()
        var next = min(nextRescanAt, nextSweepAt)
        if !relayReachable { next = min(next, nextConnectAt) }
        // Until the daemon made its marks' directory, look for it every 2 s (no inotify yet).
        if !awakeWatcher.isWatching { next = min(next, now + 2_000) }
        if relayReachable {
            for slot in slots.values { if let wake = slot.nextWake(now: now) { next = min(next, wake) } }
        }
        let timeout = Int32(max(0, min(next - now, 30_000)))
        var fds = [pollfd(fd: queue.pipe.read, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: awakeWatcher.fd, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: stops.fd, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, nfds_t(fds.count), timeout)
    }
}
