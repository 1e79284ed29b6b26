import Glibc
import RelayTransport
import SharedStore

/// sotto-relayd's loop, on one thread: keep a relay connection (waiting and retrying while
/// the relay is down), keep one consumer per keystore identity (rescanning when inotify says
/// the keystore changed), and drain each mailbox that may hold messages into push.sock,
/// settling each message by the worker's ack (docs/adr/0026):
///
/// | worker ack | relay |
/// |---|---|
/// | ok, also duplicate | AckSync (on the ack thread, overlapping the next delivery) |
/// | busy, timeout, internal, no ack, no socket | NakWithDelay, doubling from `retryMinMs` |
/// | any other error | Term, and a log line |
///
/// ```swift
/// Receiver(options: options).run()   // never returns
/// ```
final class Receiver {
    private let options: RelaydOptions
    private let queue = WakeQueue()
    private let watcher: KeystoreWatcher
    private let delivery: PushDelivery
    /// AckSync for stored messages, overlapped with the next delivery.
    private let acks = AckPipeline()
    private var relay: RelayConnection?
    private var slots: [Mailbox: MailboxSlot] = [:]

    private var connectFailures = 0
    private var nextConnectAt: Int64 = 0
    private var nextRescanAt: Int64 = 0
    private var nextSweepAt: Int64 = 0
    /// Messages per mailbox per turn, so one busy mailbox does not starve the others.
    private let turnBudget = 256
    private static let rescanIntervalMs: Int64 = 60_000
    private static let sweepIntervalMs: Int64 = 300_000

    init(options: RelaydOptions) {
        self.options = options
        watcher = KeystoreWatcher(directory: options.group.keystorePath)
        delivery = PushDelivery(socketPath: options.runtime.pushSocketPath)
    }

    func run() -> Never {
        RelaydLog.info("starting: relay \(options.relay.url), keystore \(options.group.keystorePath), "
                       + "push socket \(options.runtime.pushSocketPath)")
        while true {
            let now = MonotonicClock.nowMs()
            if relay == nil, now >= nextConnectAt { connect(now: now) }
            let changed = watcher.drain()
            watcher.rearm()
            if changed || now >= nextRescanAt { rescan(now: now) }
            let woken = queue.take()
            if woken.all || now >= nextSweepAt {
                nextSweepAt = now + Self.sweepIntervalMs
                for slot in slots.values { slot.due = true }
                // A relay back from a restart may have lost its store (a fetch from a consumer
                // that is gone only times out): reopen what it no longer has.
                if let relay {
                    for slot in slots.values where slot.isOpen && consumerIsGone(slot.mailbox, on: relay) {
                        RelaydLog.warning("the relay lost the consumer of \(slot.mailbox); recreating it")
                        slot.close()
                        slot.openRetryAt = 0
                    }
                }
            }
            for mailbox in woken.mailboxes { slots[mailbox]?.due = true }
            if relay != nil {
                var opened = 0
                for slot in slots.values where !slot.isOpen && now >= slot.openRetryAt {
                    open(slot, now: now)
                    if slot.isOpen { opened += 1 }
                }
                if opened > 0, slots.values.allSatisfy(\.isOpen) { RelaydLog.info("all \(slots.count) mailboxes open") }
                for mailbox in slots.keys.sorted(by: { $0.clientId < $1.clientId }) {
                    guard let slot = slots[mailbox], slot.isOpen, slot.isDue(at: MonotonicClock.nowMs()) else { continue }
                    drain(slot)
                }
            }
            waitForWork()
        }
    }

    // MARK: - The relay connection

    private func connect(now: Int64) {
        do throws(RelayError) {
            var connectOptions = RelayConnection.Options()
            connectOptions.name = "sotto-relayd"
            let queue = self.queue
            let connection = try RelayConnection.connect(options.relay, options: connectOptions) { event in
                switch event {
                case .disconnected: RelaydLog.warning("relay connection lost; reconnecting")
                case .reconnected:
                    RelaydLog.info("relay reconnected")
                    queue.everything()
                }
            }
            do {
                try connection.ensureStream()
            } catch {
                connection.close()
                throw error
            }
            relay = connection
            RelaydLog.info("relay connected: \(options.relay.url)\(connectFailures > 0 ? " after \(connectFailures) failed attempts" : "")")
            connectFailures = 0
            for slot in slots.values { slot.openRetryAt = 0 }
        } catch {
            if error.isConfiguration {
                RelaydLog.error("\(error)")
                exit(RelayError.configurationExitStatus)
            }
            connectFailures += 1
            if connectFailures == 1 || connectFailures % 20 == 0 {
                RelaydLog.warning("relay \(options.relay.url) not reachable (\(error)); retrying")
            }
            nextConnectAt = now + min(250 << Int64(min(connectFailures, 5)), 5_000)
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
                slots[mailbox] = MailboxSlot(mailbox: mailbox)
                RelaydLog.info("identity added: \(mailbox)")
            }
        }
        for (mailbox, slot) in slots where !found.contains(mailbox.clientId) {
            let since = slot.missingSince ?? now
            slot.missingSince = since
            if now - since >= options.goneAfterMs {
                retire(slot)
            } else {
                nextRescanAt = min(nextRescanAt, since + options.goneAfterMs)
            }
        }
    }

    /// The identity left the keystore (an explode or an inbox deletion): its consumer and
    /// whatever its mailbox still holds are deleted, so no ciphertext for it stays on the relay.
    private func retire(_ slot: MailboxSlot) {
        guard let relay else { return }  // done once the relay is back
        slot.close()
        do {
            // Purge first: a crash between the two then leaves an empty consumer, never ciphertext
            // (a restarted relayd no longer knows the identity and would not come back to it).
            try relay.purge(slot.mailbox)
            try relay.deleteConsumer(slot.mailbox)
            slots[slot.mailbox] = nil
            RelaydLog.info("identity gone: consumer deleted and mailbox purged: \(slot.mailbox)")
        } catch {
            RelaydLog.warning("identity gone, relay cleanup failed (\(error)); will retry: \(slot.mailbox)")
        }
    }

    private func open(_ slot: MailboxSlot, now: Int64) {
        guard let relay, slot.missingSince == nil else { return }
        do {
            slot.watch = try MailboxWatch(relay: relay, mailbox: slot.mailbox, handler: queue)
            slot.consumer = try MailboxConsumer(relay: relay, mailbox: slot.mailbox, ackWaitMs: options.ackWaitMs)
            slot.due = true
            if let state = try relay.consumerState(slot.mailbox), state.ackPending > 0 {
                slot.recheckAt = now + options.ackWaitMs + 500
            }
        } catch {
            slot.close()
            slot.openRetryAt = now + 1_000
            RelaydLog.warning("cannot open \(slot.mailbox) (\(error)); retrying")
            try? relay.ensureStream()  // a relay that lost its store has no stream either
        }
    }

    // MARK: - Draining a mailbox into push.sock

    private func drain(_ slot: MailboxSlot) {
        guard let consumer = slot.consumer else { return }
        var handled = 0
        while handled < turnBudget {
            let batch: [RelayMessage]
            do {
                batch = try consumer.fetch(max: 32)
            } catch {
                RelaydLog.warning("fetch from \(slot.mailbox) failed (\(error)); retrying")
                slot.notBefore = MonotonicClock.nowMs() + 1_000
                // The relay lost the consumer (wiped, or deleted by its operator): open it afresh.
                if let relay, relay.isConnected, consumerIsGone(slot.mailbox, on: relay) {
                    slot.close()
                    slot.openRetryAt = MonotonicClock.nowMs()
                }
                return
            }
            if batch.isEmpty {
                slot.due = false
                return
            }
            for (index, message) in batch.enumerated() {
                handled += 1
                guard settle(message, slot: slot) else {
                    // Hold the rest of the batch back too, so a mailbox keeps its order.
                    let delay = max(0, slot.notBefore - MonotonicClock.nowMs())
                    for later in batch[(index + 1)...] { try? later.nak(delayMs: delay) }
                    return
                }
            }
        }
    }

    /// True only when the relay answered that the consumer does not exist (not on an error).
    private func consumerIsGone(_ mailbox: Mailbox, on relay: RelayConnection) -> Bool {
        do throws(RelayError) { return try relay.consumerState(mailbox) == nil } catch { return false }
    }

    /// Delivers and settles one message; false when the mailbox should pause (a retry).
    private func settle(_ message: RelayMessage, slot: MailboxSlot) -> Bool {
        let outcome = delivery.deliver(message.data)
        do {
            switch outcome {
            case .stored:
                acks.enqueue(message, label: "message of \(slot.mailbox)")
                return true
            case .rejected(let code):
                try message.terminate()
                RelaydLog.warning("terminated message \(message.streamSequence) of \(slot.mailbox): worker refused it (\(code))")
                return true
            case .retry(let why):
                let delay = retryDelay(deliveries: message.deliveries)
                try message.nak(delayMs: delay)
                slot.notBefore = MonotonicClock.nowMs() + delay
                RelaydLog.info("message \(message.streamSequence) of \(slot.mailbox) not stored (\(why)); redelivery in \(delay) ms")
                return false
            }
        } catch {
            // Not settled: the relay redelivers it after the ack wait; the worker's dedupe
            // makes a second delivery harmless.
            RelaydLog.warning("settling message of \(slot.mailbox) failed (\(error))")
            slot.notBefore = MonotonicClock.nowMs() + 1_000
            return false
        }
    }

    private func retryDelay(deliveries: UInt64) -> Int64 {
        let doublings = Int64(min(max(deliveries, 1) - 1, 20))
        return min(options.retryMinMs << doublings, options.retryMaxMs)
    }

    // MARK: - Sleeping

    private func waitForWork() {
        let now = MonotonicClock.nowMs()
        var next = min(nextRescanAt, nextSweepAt)
        if relay == nil { next = min(next, nextConnectAt) }
        if relay != nil {
            for slot in slots.values { if let wake = slot.nextWake(now: now) { next = min(next, wake) } }
        }
        let timeout = Int32(max(0, min(next - now, 30_000)))
        var fds = [pollfd(fd: queue.pipe.read, events: Int16(POLLIN), revents: 0),
                   pollfd(fd: watcher.fd, events: Int16(POLLIN), revents: 0)]
        _ = poll(&fds, nfds_t(fds.count), timeout)
    }
}
