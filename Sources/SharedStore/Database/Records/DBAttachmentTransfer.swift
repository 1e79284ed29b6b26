/// Where the fetch of an incoming message's attachment stands on this device: one
/// `attachment_transfer` row, written by the daemon's fetcher (docs/adr/0078). A message with
/// no row has the reference only (`waiting`).
///
/// ```swift
/// let transfer = DBAttachmentTransfer(state: .fetching, bytesDone: 655_360, failure: nil)
/// transfer.state.rawValue   // "fetching"
/// ```
public struct DBAttachmentTransfer: Sendable, Equatable {
    public enum State: String, Sendable, CaseIterable {
        /// Pieces are coming; `bytesDone` of the stored file are here and checked.
        case fetching
        /// The stored file is here, whole, under its final name.
        case available
        /// The fetch stopped; `failure` says why.
        case failed
    }

    public var state: State
    /// Bytes of the stored file fetched and checked so far.
    public var bytesDone: Int64
    /// Why it failed, in Sotto's words (never text another device sent).
    public var failure: String?

    public init(state: State, bytesDone: Int64, failure: String?) {
        self.state = state
        self.bytesDone = bytesDone
        self.failure = failure
    }
}
