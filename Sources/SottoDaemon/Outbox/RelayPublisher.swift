import RelayTransport
import SharedStore

/// Sends one push through a relay (docs/adr/0028): the member's endpoint is a relay URL
/// (`nats://HOST:PORT` or `tls://HOST:PORT`), the push goes to the mailbox of the clientId it
/// names (`sotto.mb.<clientId>`), and the relay's JetStream publish ack (the stream stored
/// it) is the outcome. Blocking, with the connection's deadlines; the outbox calls it off
/// the actor's executor, like `PushDelivery`.
///
/// ```swift
/// if RelayPublisher.isRelayEndpoint(item.endpoint) {
///     let outcome = RelayPublisher.publish(item.payload, to: item.endpoint, via: relays)
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

    /// Whether `endpoint` names a relay rather than a device's own socket.
    static func isRelayEndpoint(_ endpoint: String) -> Bool {
        endpoint.hasPrefix("nats://") || endpoint.hasPrefix("tls://")
    }

    /// The push's `Nats-Msg-Id`: hex SHA-256 of its sealed bytes. Each (message, member) push
    /// is sealed once with its own ephemeral key and stored in its outbox row, so a republish
    /// after a crash carries the same id and the stream drops it; and the relay learns
    /// nothing it could link across members (not the message id, not an inbox id).
    static func messageId(for payload: [UInt8]) -> String {
        Hex.encode(SHA256.hash(payload))
    }

    /// Puts a sealed body on the member's relay before the first push that references it
    /// (docs/protocol/bodies.md §6): once per relay and body in a run, and a body the relay
    /// already holds (published before a restart) is not stored twice.
    static func publishBody(sealed: [UInt8], bodyId: String, to endpoint: String, via relays: RelayConnections) -> Outcome {
        let url: RelayURL
        do throws(RelayError) {
            url = try RelayURL.parse(endpoint)
        } catch {
            return .badEndpoint("\(error)")
        }
        if relays.hasPublished(bodyId: bodyId, to: url) { return .relayed(duplicate: true) }
        do throws(RelayError) {
            let connection = try relays.connection(to: url)
            guard connection.isConnected else { return .unreachable("relay \(url) is reconnecting") }
            let ack = try connection.publishBody(sealed, id: bodyId)
            relays.recordPublished(bodyId: bodyId, to: url)
            return .relayed(duplicate: ack.duplicate)
        } catch {
            return .unreachable("relay \(url): body: \(error)")
        }
    }

    static func publish(_ payload: [UInt8], to endpoint: String, via relays: RelayConnections) -> Outcome {
        let url: RelayURL
        let mailbox: Mailbox
        do throws(RelayError) {
            url = try RelayURL.parse(endpoint)
        } catch {
            return .badEndpoint("\(error)")
        }
        do {
            mailbox = try Mailbox(clientId: try PushPayload.decode(payload).clientId)
        } catch {
            return .badEndpoint("the push names no mailbox: \(error)")
        }
        do throws(RelayError) {
            let connection = try relays.connection(to: url)
            guard connection.isConnected else { return .unreachable("relay \(url) is reconnecting") }
            let ack = try connection.publish(payload, to: mailbox, messageId: messageId(for: payload))
            return .relayed(duplicate: ack.duplicate)
        } catch {
            return .unreachable("relay \(url): \(error)")
        }
    }
}
