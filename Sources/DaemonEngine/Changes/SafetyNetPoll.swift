/// The change feed's safety net under the workers' datagrams: a catch-up every `interval`,
/// for a datagram that was lost (events.sock's queue full: the worker sends without
/// blocking) or never sent (a worker killed between its commit and its datagram). Nothing
/// else depends on it: own writes and datagrams trigger catch-ups, and every control request
/// catches up first. `SOTTO_FEED_POLL_MS` sets it; 0 turns it off (tests prove that nothing
/// needs it). Why 2 s by default: docs/adr/0022.
///
/// ```swift
/// let poll = try SafetyNetPoll(environment: ProcessInfo.processInfo.environment)
/// let part = ChangeFeedService(feed: feed, events: events, poll: poll)   // runs it
/// ```
public struct SafetyNetPoll: Sendable {
    static let defaultIntervalMs = 2_000
    static let variable = "SOTTO_FEED_POLL_MS"

    public enum Failure: Error, CustomStringConvertible {
        case invalid(String)
        public var description: String {
            if case .invalid(let value) = self {
                return "\(SafetyNetPoll.variable)=\(value) is not a number of milliseconds from 0 (off) to 3600000"
            }
            return ""
        }
    }

    /// nil: off.
    public let intervalMs: Int?

    init(intervalMs: Int?) {
        self.intervalMs = intervalMs
    }

    public init(environment: [String: String]) throws(Failure) {
        guard let text = environment[Self.variable] else {
            self.init(intervalMs: Self.defaultIntervalMs)
            return
        }
        guard let value = Int(text), (0...3_600_000).contains(value) else { throw .invalid(text) }
        self.init(intervalMs: value == 0 ? nil : value)
    }
}
