import DaemonEngine

/// How often the daemon brings the awake inboxes in line with the activity ranking
/// (``InboxLRU/rebalance()``, run by ``InboxRebalancer``): every 60 s by
/// default, `SOTTO_REBALANCE_MS` sets it (tests use 200 ms). Why 60 s: docs/adr/0033.
///
/// ```swift
/// let schedule = try RebalanceSchedule(environment: ProcessInfo.processInfo.environment)
/// schedule.intervalMs   // 60_000
/// ```
struct RebalanceSchedule: Sendable, Equatable {
    static let variable = "SOTTO_REBALANCE_MS"
    static let defaultIntervalMs: Int64 = 60_000
    /// From 100 ms (below it a rebalance would wake an idle daemon too often, docs/adr/0011)
    /// to a day.
    static let setting = NumberSetting(variable: variable, default: defaultIntervalMs, range: 100...86_400_000)

    let intervalMs: Int64

    init(intervalMs: Int64 = Self.defaultIntervalMs) {
        self.intervalMs = intervalMs
    }

    init(environment: [String: String]) throws(NumberSetting.Invalid) {
        self.init(intervalMs: try Self.setting.read(environment))
    }
}
