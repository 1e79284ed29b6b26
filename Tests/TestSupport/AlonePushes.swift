import Foundation

/// Pushes sent one after another through the real `sotto-notify --payload -` into a group
/// directory that no other process holds open: no daemon, no held connection, each worker
/// starts alone and has exited before the next starts (issue #10, "the worker alone").
/// Shared by the worker-alone stress test and `WorkerBench --alone`.
///
/// ```swift
/// let run = try AlonePushes.run(worker: notify, payloads: payloads, environment: env,
///                               walPath: group.databasePath + "-wal")
/// run.samples.map(\.walBytesBefore).max()   // the most WAL any worker had to recover
/// print(run.summary(window: 500))
/// ```
public struct AlonePushes: Sendable {
    /// One push, measured.
    public struct Sample: Sendable {
        /// Spawn to ack line, milliseconds (what the sender waits for).
        public var ackMs: Double
        /// Spawn to exit, milliseconds (includes what the worker does after its ack).
        public var exitMs: Double
        /// User + system CPU time of the worker, microseconds (from wait4).
        public var cpuMicroseconds: Int64
        /// `-wal` size when the worker started: what it recovers into a fresh wal-index.
        public var walBytesBefore: Int64
        /// `-wal` size after it exited.
        public var walBytesAfter: Int64
        /// The worker's exit status (142 = its 30 s alarm fired after the ack).
        public var exitStatus: Int32
    }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public var samples: [Sample] = []

    /// Sends every payload in order; throws on the first push not acked `ok` (a worker that
    /// acked and then exited non-zero is recorded in its sample).
    public static func run(worker: String, payloads: [[UInt8]], environment: [String: String],
                           walPath: String) throws -> AlonePushes {
        var run = AlonePushes()
        run.samples.reserveCapacity(payloads.count)
        for (index, payload) in payloads.enumerated() {
            let walBefore = fileSize(walPath)
            let start = DispatchTime.now().uptimeNanoseconds
            let child = try LoggedProcess.launch(worker, ["--payload", "-"], environment: environment)
            child.write(String(decoding: payload, as: UTF8.self) + "\n")
            child.closeStdin()
            let acked = child.waitForLine(containing: "\"ok\":true", timeout: 60)
            let ackAt = DispatchTime.now().uptimeNanoseconds
            let status = child.waitForExit()
            let exitAt = DispatchTime.now().uptimeNanoseconds
            guard acked, let cpu = child.cpuMicroseconds else {
                throw Failure(description: "push \(index): exit \(status), \(child.output.suffix(3))")
            }
            run.samples.append(Sample(ackMs: Double(ackAt - start) / 1e6, exitMs: Double(exitAt - start) / 1e6,
                                      cpuMicroseconds: cpu, walBytesBefore: walBefore,
                                      walBytesAfter: fileSize(walPath), exitStatus: status))
        }
        return run
    }

    // MARK: Figures

    /// The `p` quantile (0…1) of `values`, nearest rank.
    public static func percentile<T: Comparable>(_ values: [T], _ p: Double) -> T {
        let sorted = values.sorted()
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
    }

    /// The first and the last `window` samples (the whole run when it is shorter).
    public func windows(_ window: Int) -> (first: ArraySlice<Sample>, last: ArraySlice<Sample>) {
        let size = max(1, min(window, samples.count))
        return (samples.prefix(size), samples.suffix(size))
    }

    /// p50 CPU time of the last window over that of the first.
    public func cpuRatio(window: Int) -> Double {
        let (first, last) = windows(window)
        return Double(Self.percentile(last.map(\.cpuMicroseconds), 0.5))
            / Double(max(1, Self.percentile(first.map(\.cpuMicroseconds), 0.5)))
    }

    /// p50 spawn-to-ack time of the last window over that of the first.
    public func ackRatio(window: Int) -> Double {
        let (first, last) = windows(window)
        return Self.percentile(last.map(\.ackMs), 0.5) / max(0.001, Self.percentile(first.map(\.ackMs), 0.5))
    }

    /// Workers that exited non-zero after their ack.
    public var failedExits: Int { samples.filter { $0.exitStatus != 0 }.count }

    /// The largest WAL any worker started with.
    public var maxWALBytesBefore: Int64 { samples.map(\.walBytesBefore).max() ?? 0 }

    /// `-wal` size after pushes 1, n/10, 2n/10 … n.
    public var walCurve: [(push: Int, bytes: Int64)] {
        guard !samples.isEmpty else { return [] }
        let step = max(1, samples.count / 10)
        var points = stride(from: step - 1, to: samples.count, by: step).map { ($0 + 1, samples[$0].walBytesAfter) }
        if points.first?.0 != 1 { points.insert((1, samples[0].walBytesAfter), at: 0) }
        if points.last?.0 != samples.count { points.append((samples.count, samples[samples.count - 1].walBytesAfter)) }
        return points
    }

    /// Lines for a report: per window p50/p99 of ack time and CPU, the ratios, the WAL curve.
    public func summary(window: Int) -> [String] {
        let (first, last) = windows(window)
        func line(_ name: String, _ part: ArraySlice<Sample>) -> String {
            let ack = part.map(\.ackMs), cpu = part.map { Double($0.cpuMicroseconds) / 1000 }
            return String(format: "%@ p50 %6.2f ms  p99 %6.2f ms   cpu p50 %6.2f ms  p99 %6.2f ms",
                          name, Self.percentile(ack, 0.5), Self.percentile(ack, 0.99),
                          Self.percentile(cpu, 0.5), Self.percentile(cpu, 0.99))
        }
        return [
            line("first \(first.count):", first),
            line("last \(last.count): ", last),
            String(format: "ratio last/first p50: ack %.2f  cpu %.2f", ackRatio(window: window), cpuRatio(window: window)),
            "WAL bytes after push: " + walCurve.map { "\($0.push):\($0.bytes)" }.joined(separator: " ")
                + "   (largest WAL a worker started with: \(maxWALBytesBefore))",
            "workers that exited non-zero after their ack: \(failedExits)",
        ]
    }

    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
