import Foundation

/// What the kernel says a running process uses, read from `/proc/PID/stat` and
/// `/proc/PID/status`: CPU time (user + system, in clock ticks), resident memory, threads
/// and open file descriptors. Soak and resource-limit tests compare two samples.
///
/// ```swift
/// let before = try ProcessUsage.sample(pid: daemon.pid)
/// … idle window …
/// let after = try ProcessUsage.sample(pid: daemon.pid)
/// let cpuShare = after.cpuSeconds(since: before) / after.seconds(since: before)   // of one core
/// ```
public struct ProcessUsage: Sendable, CustomStringConvertible {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: Int32
    /// utime + stime, in `sysconf(_SC_CLK_TCK)` ticks.
    public let cpuTicks: Int64
    public let rssKB: Int64
    /// The private part of `rssKB` (heap, stacks): what a leak grows. The rest is file pages
    /// mapped (the database under `mmap_size`, the binary) and shared memory (the WAL index).
    public let rssAnonKB: Int64
    public let rssFileKB: Int64
    public let threads: Int
    public let openFiles: Int
    /// Monotonic time of the sample.
    public let takenNs: UInt64

    public static let ticksPerSecond = Double(sysconf(Int32(_SC_CLK_TCK)))

    public static func sample(pid: Int32) throws -> ProcessUsage {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else {
            throw Failure(description: "process \(pid) is gone")
        }
        // Fields after the command name, which is in parentheses and may hold spaces.
        guard let close = stat.lastIndex(of: ")") else { throw Failure(description: "unreadable /proc/\(pid)/stat") }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        // fields[0] is the state (field 3); utime and stime are fields 14 and 15.
        guard fields.count > 13, let utime = Int64(fields[11]), let stime = Int64(fields[12]) else {
            throw Failure(description: "unreadable /proc/\(pid)/stat: \(stat)")
        }
        func statusValue(_ key: String) -> Int64? {
            for line in status.split(separator: "\n") where line.hasPrefix(key + ":") {
                return Int64(line.dropFirst(key.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first ?? "")
            }
            return nil
        }
        let openFiles = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").count) ?? -1
        guard let rss = statusValue("VmRSS"), let threads = statusValue("Threads") else {
            throw Failure(description: "no VmRSS or Threads in /proc/\(pid)/status")
        }
        return ProcessUsage(pid: pid, cpuTicks: utime + stime, rssKB: rss, rssAnonKB: statusValue("RssAnon") ?? rss,
                            rssFileKB: statusValue("RssFile") ?? 0, threads: Int(threads), openFiles: openFiles,
                            takenNs: DispatchTime.now().uptimeNanoseconds)
    }

    public func seconds(since earlier: ProcessUsage) -> Double {
        Double(takenNs - earlier.takenNs) / 1e9
    }

    public func cpuSeconds(since earlier: ProcessUsage) -> Double {
        Double(cpuTicks - earlier.cpuTicks) / Self.ticksPerSecond
    }

    /// CPU time over wall time between two samples: 0.01 is 1% of one core.
    public func cpuShare(since earlier: ProcessUsage) -> Double {
        cpuSeconds(since: earlier) / max(seconds(since: earlier), 0.001)
    }

    public var description: String {
        "pid \(pid): cpu \(cpuTicks) ticks, rss \(rssKB) kB (anon \(rssAnonKB), file \(rssFileKB)), \(threads) threads, \(openFiles) fds"
    }
}
