import RelayTransport
import SottoCrypto
import SottoWire

/// Sends one push through a relay (docs/adr/0028): the member's endpoint is a relay URL
/// (`nats://HOST:PORT` or `tls://HOST:PORT`), the push goes to the mailbox of the clientId it
/// was sealed to (`sotto.mb.<clientId>`, kept beside the push since schema v13: the push is
/// not decoded here), and the relay's JetStream publish ack (the stream stored it) is the
/// outcome. Blocking, with the connection's deadlines; the outbox calls it off the actor's
/// executor, like `PushDelivery`.
///
/// ```swift
/// if MemberEndpoint.isRelay(push.endpoint) {
///     let outcome = RelayPublisher.publish(push, via: relays)
///     if case .relayed = outcome { … mark relayed … }
/// }
/// ```
enum RelayPublisher {
    enum Outcome: Equatable, Sendable {
        /// The relay stored it (`duplicate`: an earlier publish of the same push already had).
        case relayed(duplicate: Bool)
        /// The relay is down, still connecting, or gave no ack: retry later.
        case unreachable(String)
        /// The endpoint or the push can never be published: a permanent failure.
        case badEndpoint(String)
    }

    /// The push's `Nats-Msg-Id`: hex SHA-256 of its sealed bytes. Each (message, member) push
    /// is sealed once with its own ephemeral key and stored in its outbox row, so a republish
    /// after a crash carries the same id and the stream drops it; and the relay learns
    /// nothing it could link across members (not the message id, not an inbox id).
    static func messageId(for payload: [UInt8]) -> String {
        Hex.encode(SHA256.hash(payload))
    }

    /// Puts a sealed body on the member's relay before the first push that references it
    /// (docs/protocol/bodies.md §6): once per relay and body in an outbox pass, and a body the relay
    /// already holds (published before a restart) is not stored twice.
    static func publishBody(sealed: [UInt8], bodyId: String, to endpoint: String, as sender: RelaySender,
                            via relays: RelayConnections) -> Outcome {
        let url: RelayURL
        do throws(RelayError) {
            url = try RelayURL.parse(endpoint)
        } catch {
            return .badEndpoint("\(error)")
        }
        if relays.hasPublished(bodyId: bodyId, to: url) { return .relayed(duplicate: true) }
        do throws(RelayError) {
            let connection = try relays.connection(to: url, for: sender)
            guard connection.isConnected else { return .unreachable("relay \(url) is reconnecting") }
            let ack = try connection.publishBody(sealed, id: bodyId)
            relays.recordPublished(bodyId: bodyId, to: url)
            CrashPoint.reach("outbox.bodyPublished")  // the body is on the relay, no push that names it yet
            return .relayed(duplicate: ack.duplicate)
        } catch {
            return .unreachable("relay \(url): body: \(error)")
        }
    }

    /// Publishes many pushes of one sender to one relay (docs/adr/0041): the bodies they reference first
    /// (once each, as `publishBody`), then every push whose body the relay took, with a
    /// bounded window of unacked publishes instead of one round trip each. One outcome per
    /// push, in order.
    ///
    /// ```swift
    /// let outcomes = RelayPublisher.publishAll(pushes, to: "nats://relay:4222", as: sender, via: relays)
    /// ```
    static func publishAll(_ pushes: [PushAttempt.Push], to endpoint: String, as sender: RelaySender,
                           via relays: RelayConnections) -> [Outcome] {
        let url: RelayURL
        do throws(RelayError) {
            url = try RelayURL.parse(endpoint)
        } catch {
            return pushes.map { _ in .badEndpoint("\(error)") }
        }
        var outcomes = [Outcome?](repeating: nil, count: pushes.count)
        var bodyOutcomes: [String: Outcome] = [:]
        var batch: [BatchPush] = []
        var batchIndices: [Int] = []
        for (index, push) in pushes.enumerated() {
            let mailbox: Mailbox
            switch Self.mailbox(of: push) {
            case .found(let found): mailbox = found
            case .refused(let failed): outcomes[index] = failed; continue
            }
            if let body = push.body {
                let published = bodyOutcomes[body.id] ?? publishBody(sealed: body.sealed, bodyId: body.id, to: endpoint, as: sender,
                                                                      via: relays)
                bodyOutcomes[body.id] = published
                guard case .relayed = published else { outcomes[index] = published; continue }
            }
            batch.append(BatchPush(payload: push.payload, mailbox: mailbox, messageId: messageId(for: push.payload)))
            batchIndices.append(index)
        }
        if !batch.isEmpty {
            let results: [Result<PublishAck, RelayError>]
            do throws(RelayError) {
                let connection = try relays.connection(to: url, for: sender)
                guard connection.isConnected else { throw .call(operation: "publish", status: "relay \(url) is reconnecting", code: 0) }
                results = connection.publishAll(batch)
            } catch {
                results = batch.map { _ in .failure(error) }
            }
            for (index, result) in zip(batchIndices, results) {
                switch result {
                case .success(let ack): outcomes[index] = .relayed(duplicate: ack.duplicate)
                case .failure(let error): outcomes[index] = .unreachable("relay \(url): \(error)")
                }
            }
        }
        return outcomes.map { $0 ?? .unreachable("not published") }
    }

    /// Publishes one push to its member's relay (`push.endpoint`), on `push.sender`'s connection.
    static func publish(_ push: PushAttempt.Push, via relays: RelayConnections) -> Outcome {
        let url: RelayURL
        let mailbox: Mailbox
        do throws(RelayError) {
            url = try RelayURL.parse(push.endpoint)
        } catch {
            return .badEndpoint("\(error)")
        }
        switch Self.mailbox(of: push) {
        case .found(let found): mailbox = found
        case .refused(let failed): return failed
        }
        do throws(RelayError) {
            let connection = try relays.connection(to: url, for: push.sender)
            guard connection.isConnected else { return .unreachable("relay \(url) is reconnecting") }
            let ack = try connection.publish(push.payload, to: mailbox, messageId: messageId(for: push.payload))
            return .relayed(duplicate: ack.duplicate)
        } catch {
            return .unreachable("relay \(url): \(error)")
        }
    }

    // MARK: - The mailbox

    /// The mailbox of the clientId the push was sealed to; a push without one (an outbox row
    /// from before schema v13 whose payload did not decode) or with a malformed one can never
    /// be published.
    private static func mailbox(of push: PushAttempt.Push) -> MailboxLookup {
        guard let clientId = push.clientId else {
            return .refused(.badEndpoint("the push names no mailbox: its outbox row holds no clientId"))
        }
        do throws(RelayError) {
            return .found(try Mailbox(clientId: clientId))
        } catch {
            return .refused(.badEndpoint("the push names no mailbox: \(error)"))
        }
    }

    private enum MailboxLookup {
        case found(Mailbox)
        /// Why the push has no mailbox: a permanent failure.
        case refused(Outcome)
    }
}
