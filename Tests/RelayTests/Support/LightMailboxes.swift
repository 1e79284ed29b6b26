import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport

/// The relay transport of `LightMembers`: each light member's own mailbox
/// (`sotto.mb.<clientId>`) on a real nats-server, read as a device's sotto-relayd reads it
/// (a durable consumer per mailbox, docs/relay.md), every frame unpadded
/// (docs/protocol/relay-padding.md), the body a push names fetched from `SOTTO_BODIES`
/// (docs/protocol/bodies.md §6), then handed to `LightMembers.deliver`; acked when the member
/// acked ok, terminated when it refused (as relayd does for a push refused for good).
///
/// A body is fetched from the relay once per id and kept: every member of the fan-out gets
/// the same sealed bytes, and each still opens them with the key in its own push.
///
/// ```swift
/// let light = LightMembers(count: 997, endpoint: server.url)
/// let mailboxes = try LightMailboxes(light, relayURL: server.url)
/// let sweep = try mailboxes.sweep()     // everything the relay holds for them now
/// mailboxes.close()
/// ```
final class LightMailboxes {
    /// What one sweep took from the relay.
    struct Sweep: CustomStringConvertible {
        var milliseconds: UInt64 = 0
        var messages = 0
        var refused = 0
        var badFrames = 0
        var bodiesFetched = 0
        var description: String {
            "\(messages) messages (\(refused) refused, \(badFrames) bad frames), \(bodiesFetched) bodies fetched in \(milliseconds) ms"
        }
    }

    private let light: LightMembers
    private let relay: RelayConnection
    private let consumers: [(inboxId: String, consumer: MailboxConsumer)]
    private var bodies: [String: [UInt8]] = [:]
    /// Messages taken from each member's mailbox so far, by inboxId.
    private(set) var received: [String: Int] = [:]

    /// Connects and makes (or binds) every member's durable consumer, as each member's
    /// sotto-relayd would at its start.
    init(_ light: LightMembers, relayURL: String) throws {
        self.light = light
        var options = RelayConnection.Options()
        options.name = "light-members"
        let relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(relayURL)), options: options)
        self.relay = relay
        try relay.ensureStream()
        consumers = try light.identities.map { identity in
            (identity.inboxId, try MailboxConsumer(relay: relay, mailbox: try Mailbox(clientId: identity.clientId),
                                                   ackWaitMs: 30_000))
        }
    }

    /// Takes everything the members' mailboxes hold now, mailbox after mailbox. Only a
    /// mailbox the relay holds messages for is fetched from, and for exactly that many: a
    /// fetch from an empty mailbox is not answered at once but held for its whole wait
    /// (measured on nats-server 2.9.10: 200 ms each, 997 mailboxes ≈ 196 s a sweep), while
    /// the relay's count of every mailbox is one stream-info request (work-queue retention:
    /// what is stored is what nobody acked).
    @discardableResult
    func sweep() throws -> Sweep {
        var sweep = Sweep()
        let started = MonotonicClock.nowNs()
        let stored = try relay.storedCountsByMailbox()
        for (inboxId, consumer) in consumers {
            var left = Int(stored[consumer.mailbox.subject] ?? 0)
            while left > 0 {
                let batch = try consumer.fetch(max: min(left, 256))
                if batch.isEmpty { break }
                left -= batch.count
                received[inboxId, default: 0] += batch.count
                for message in batch { try settle(message, into: &sweep) }
            }
        }
        sweep.milliseconds = (MonotonicClock.nowNs() - started) / 1_000_000
        return sweep
    }

    private func settle(_ message: RelayMessage, into sweep: inout Sweep) throws {
        sweep.messages += 1
        let push: [UInt8]
        do throws(RelayPadding.Failure) {
            push = try RelayPadding.unpad(message.data)
        } catch {
            sweep.badFrames += 1
            try message.terminate()
            return
        }
        var body: [UInt8]?
        if let hint = (try? PushPayload.decode(push))?.body {
            if let known = bodies[hint.id] {
                body = known
            } else if let fetched = try relay.body(id: hint.id) {
                sweep.bodiesFetched += 1
                bodies[hint.id] = fetched
                body = fetched
            }
        }
        if case .ok = light.deliver(push, body: body) {
            try message.ack()
        } else {
            sweep.refused += 1
            try message.terminate()
        }
    }

    func close() {
        for (_, consumer) in consumers { consumer.close() }
        relay.close()
    }
}
