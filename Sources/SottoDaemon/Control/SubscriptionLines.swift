import ControlProtocol
import DaemonEngine

/// Writes one subscription's changes to its client as `change` notification lines (JSON-RPC),
/// in the order the feed yields them, until the client is gone (`send` returns false) or the
/// feed ends the subscription. One notification per change, made from the feed's value.
///
/// ```swift
/// let (lastSeq, gap, changes) = await feed.subscribe(key: ObjectIdentifier(connection), since: 120, conversationId: nil)
/// SubscriptionLines.follow(changes) { line in connection.send(line) }
/// ```
enum SubscriptionLines {
    static func follow(_ changes: AsyncStream<FeedChange>, send: @escaping @Sendable (String) -> Bool) {
        Task.detached {
            for await change in changes {
                guard send(JSONRPC.notificationLine(ChangeNotification(change))) else { break }
            }
        }
    }
}
