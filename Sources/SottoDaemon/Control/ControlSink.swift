/// Where lines for one control client go, as the change feed and the dispatcher see it:
/// whole lines, from any task, in the order sent. `send` is false once the client is gone or
/// too far behind (it is then disconnected), and stays false: the caller drops it.
/// `ControlConnection` is the socket's; a test or another transport can bring its own.
///
/// ```swift
/// func deliver(_ change: ChangeNotification, to sink: any ControlSink) -> Bool {
///     sink.send(JSONRPC.notificationLine(change))
/// }
/// ```
protocol ControlSink: AnyObject, Sendable {
    @discardableResult
    func send(_ line: String) -> Bool
}

extension ControlConnection: ControlSink {}
