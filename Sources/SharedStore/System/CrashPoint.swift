import Glibc

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
public enum CrashPoint {
    public static let variable = "SOTTO_CRASH_AT"

    private static let armed: String? = getenv(variable).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 }

    public static func reach(_ name: String) {
        guard let armed, armed == name else { return }
        kill(getpid(), SIGKILL)
    }
}
