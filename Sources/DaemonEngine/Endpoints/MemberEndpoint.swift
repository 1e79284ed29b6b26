// MARK: What a member's endpoint names

/// A member's endpoint, as its invite or join request gave it: a relay URL (`nats://HOST:PORT`
/// or `tls://HOST:PORT`, docs/adr/0028) or a device's own push socket (`unix:/…/push.sock`).
/// What it names decides both how a push is sealed (a push through a relay shows no topic,
/// PROTOCOL §2 1.1) and how the outbox delivers it, so the composer and the outbox ask here.
///
/// ```swift
/// MemberEndpoint.isRelay("nats://relay.example:4222")   // true
/// MemberEndpoint.isRelay("unix:/run/user/1000/sotto/push.sock")   // false
/// ```
enum MemberEndpoint {
    /// Whether `endpoint` names a relay rather than a device's own socket.
    static func isRelay(_ endpoint: String) -> Bool {
        endpoint.hasPrefix("nats://") || endpoint.hasPrefix("tls://")
    }
}
