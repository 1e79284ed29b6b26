import Glibc
import SottoWire

/// Delivers one sealed push to a member's endpoint (`unix:/path` or `tcp:host:port`,
/// PROTOCOL §1) and reads the worker's ack line (§2). A push that references a body gets the
/// sealed body right after its LF on the same connection (docs/protocol/bodies.md §5,
/// docs/adr/0032). Blocking, with deadlines; the outbox calls it off the actor's executor.
///
/// ```swift
/// let result = PushDelivery.deliver(payload, to: "unix:/run/user/1000/sotto/push.sock")
/// if case .acked(let ack) = result, ack.ok { … mark sent … }
/// PushDelivery.deliver(referencePush, body: sealed, to: endpoint)   // payload, LF, body
/// ```
enum PushDelivery {
    /// The worker's ack as the outbox uses it. Read by `PushAck.parse`, the one parser of
    /// the ack line (SharedStore, which the worker writes it with).
    struct Ack: Equatable, Sendable {
        let ok: Bool
        let duplicate: Bool
        let error: String?
        let retry: Bool

        init(_ ack: PushAck) {
            switch ack {
            case .ok(_, let duplicate): (ok, self.duplicate, error, retry) = (true, duplicate, nil, false)
            case .error(let failure): (ok, duplicate, error, retry) = (false, false, failure.code.rawValue, failure.code.retry)
            }
        }
    }

    enum Result: Equatable, Sendable {
        case acked(Ack)
        /// Could not reach the endpoint or no ack came: retry later.
        case unreachable(String)
        /// The endpoint string is not one we can deliver to: a permanent failure.
        case badEndpoint(String)
    }

    static func deliver(_ payload: [UInt8], body: [UInt8]? = nil, to endpoint: String, timeoutMs: Int32 = 10_000) -> Result {
        let fd: Int32
        switch EndpointSocket.connect(endpoint) {
        case .success(let socket): fd = socket
        case .failure(.unreachable(let why)): return .unreachable(why)
        case .failure(.badEndpoint(let why)): return .badEndpoint(why)
        }
        defer { close(fd) }
        switch PushExchange.run(fd, payload: payload, body: body, timeoutMs: timeoutMs) {
        case .acked(let ack): return .acked(Ack(ack))
        case .noAck(let why): return .unreachable(why)
        }
    }

    /// The first line of what the endpoint answered, as an ack; `unreachable` when it is none.
    static func parseAck(_ reply: [UInt8]) -> Result {
        switch PushExchange.parse(reply) {
        case .acked(let ack): return .acked(Ack(ack))
        case .noAck(let why): return .unreachable(why)
        }
    }
}
