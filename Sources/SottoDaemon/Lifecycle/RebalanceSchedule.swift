/// How often the daemon brings the awake inboxes in line with the activity ranking
/// (``InboxLifecycleManager/rebalance()``, run by ``InboxRebalancer``): every 60 s by
/// default, `SOTTO_REBALANCE_MS` sets it (tests use 200 ms). Why 60 s: docs/adr/0033.
///
/// ```swift
/// let schedule = try RebalanceSchedule(environment: ProcessInfo.processInfo.environment)
/// schedule.intervalMs   // 60_000
/// ```
struct RebalanceSchedule: Sendable, Equatable {
    static let variable = "SOTTO_REBALANCE_MS"
    static let defaultIntervalMs: Int64 = 60_000
    /// Below this a rebalance would wake an idle daemon too often (docs/adr/0011).
    static let minimumMs: Int64 = 100
    static let maximumMs: Int64 = 86_400_000

    struct Failure: Error, CustomStringConvertible {
        let value: String
        var description: String {
            "\(RebalanceSchedule.variable)=\(value) is not a number of milliseconds from "
                + "\(RebalanceSchedule.minimumMs) to \(RebalanceSchedule.maximumMs)"
        }
    }

    let intervalMs: Int64

    init(intervalMs: Int64 = Self.defaultIntervalMs) {
        self.intervalMs = intervalMs
    }

    init(environment: [String: String]) throws(Failure) {
        guard let text = environment[Self.variable] else {
            self.init()
            return
        }
        guard let value = Int64(text), (Self.minimumMs...Self.maximumMs).contains(value) else { throw Failure(value: text) }
        self.init(intervalMs: value)
    }
}
