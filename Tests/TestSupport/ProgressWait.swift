import Foundation

/// Polls `count` until it reaches `target`; throws only when it has not grown for `stall`
/// seconds. For work whose total time scales with the machine's load (hundreds of worker
/// processes on a power-cut file system, 997 full rosters delivered one by one): a loaded
/// 2-core machine crossed fixed bounds on the whole (issue #32, docs/adr/0063), while a real
/// hang still fails after `stall`.
///
/// ```swift
/// try waitWhileProgressing("600 messages stored", target: 600, stall: 60) { try storedCount() }
/// ```
public func waitWhileProgressing(_ what: String, target: Int, stall: TimeInterval, _ count: () throws -> Int) throws {
    var best = -1
    var lastGrowth = Date()
    var lastError: Error?
    while true {
        do {
            let now = try count()
            if now >= target { return }
            if now > best { (best, lastGrowth) = (now, Date()) }
        } catch {
            lastError = error
        }
        if Date().timeIntervalSince(lastGrowth) > stall {
            throw ProgressStalled(description: "no progress for \(stall) s waiting for \(what): \(max(best, 0)) of \(target)"
                                  + (lastError.map { " (last error: \($0))" } ?? ""))
        }
        usleep(20_000)
    }
}

/// What `waitWhileProgressing` throws.
public struct ProgressStalled: Error, CustomStringConvertible {
    public let description: String
}
