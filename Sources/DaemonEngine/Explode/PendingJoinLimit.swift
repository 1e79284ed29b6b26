/// How long a join may wait for the creator to accept before this device gives up: the
/// conversation, still `pendingJoin`, is deleted with its identity by the explode worker
/// worker, the way an explode deletes one (docs/adr/0016, 0033). 7 days by default;
/// `SOTTO_PENDING_JOIN_MAX_MS` sets it (tests use a second or two).
///
/// ```swift
/// let limit = try PendingJoinLimit(environment: ProcessInfo.processInfo.environment)
/// limit.ms   // 604_800_000
/// ```
public struct PendingJoinLimit: Sendable, Equatable {
    static let variable = "SOTTO_PENDING_JOIN_MAX_MS"
    public static let defaultMs: Int64 = 7 * 86_400_000
    /// Up to 3650 days: as far as an explosion may be scheduled.
    static let setting = NumberSetting(variable: variable, default: defaultMs, range: 1...(3650 * 86_400_000))

    let ms: Int64

    public init(ms: Int64 = Self.defaultMs) {
        self.ms = ms
    }

    public init(environment: [String: String]) throws(NumberSetting.Invalid) {
        self.init(ms: try Self.setting.read(environment))
    }
}
