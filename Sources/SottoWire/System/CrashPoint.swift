import Glibc
import Synchronization

/// Fault injection for the crash-atomicity tests (ADR 0017): a named step of a multi-step
/// operation calls `reach(name)`; when the process was started with `SOTTO_CRASH_AT=name`
/// it SIGKILLs itself right there, exactly as a power cut or the OOM killer would. Unset
/// (always, outside tests) it is one comparison against a value read once.
///
/// ```swift
/// try commitRows()
/// CrashPoint.reach("explode.rowsCommitted")   // SOTTO_CRASH_AT=explode.rowsCommitted dies here
/// try wipeKeys()
/// ```
///
/// A step reached once per item (a push of a fan-out) can die at its Nth reach:
/// `SOTTO_CRASH_AT=outbox.relayed@300` lets 299 pass and dies at the 300th.
public enum CrashPoint {
    public static let variable = "SOTTO_CRASH_AT"

    private static let armed: (name: String, at: Int)? = getenv(variable).map { String(cString: $0) }.flatMap(parse)
    private static let reached = Atomic<Int>(0)

    public static func reach(_ name: String) {
        guard let armed, armed.name == name else { return }
        if armed.at > 1, reached.wrappingAdd(1, ordering: .relaxed).newValue < armed.at { return }
        kill(getpid(), SIGKILL)
    }

    /// `name` or `name@N` (N ≥ 1).
    static func parse(_ value: String) -> (name: String, at: Int)? {
        guard !value.isEmpty else { return nil }
        guard let at = value.lastIndex(of: "@"), let count = Int(value[value.index(after: at)...]), count >= 1 else {
            return (value, 1)
        }
        return (String(value[..<at]), count)
    }
}
