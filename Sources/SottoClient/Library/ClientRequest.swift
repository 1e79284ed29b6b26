import ControlProtocol

/// One call to the daemon as every client of the library makes it: its params, and whether
/// it may be made once more on a new connection when the old one dropped under it (a read or
/// a mark may; a send, an invite, a leave or an explode may not: a lost reply does not say
/// the daemon did not act, and a second call would act twice). `ClientRequests` names each
/// call once; the chat app's objects (`ConversationActions`, `Timeline`,
/// `LiveConversationList`) and the `sotto` commands make it through a `RequestChannel`, so a
/// call behaves the same from both (docs/adr/0071).
///
/// ```swift
/// let channel = RequestChannel(socketPath: runtime.controlSocketPath)
/// let left = try channel.call(ClientRequests.leave(conversation: "3fa2"))   // LeaveResult
/// ```
public struct ClientRequest<Params: ControlRequest>: Sendable {
    public let params: Params
    /// Made once more on a new connection after a connection loss (see `RequestChannel.call`).
    public let retry: Bool

    public init(_ params: Params, retry: Bool) {
        self.params = params
        self.retry = retry
    }
}
