import Foundation
import SottoCrypto
import SottoWire
import TestSupport

/// `worker-bench --alone SOTTO_NOTIFY [PUSHES]` (issue #10): the daemon is down and nothing
/// holds the database open, the case the worker exists for. Each variant starts from a fresh
/// copy of the same seeded group directory and sends PUSHES pushes one after another:
///
/// - `--payload -`, the WAL reset off (`SOTTO_WORKER_WAL_RESET_BYTES` = 1 GiB: the behaviour
///   before docs/adr/0020), at 0 (reset after every push) and at the default 1 MiB;
/// - the real socket path (Accept=yes via systemd-socket-activate) at the default, where the
///   next worker may start while the previous one is still finishing after its ack.
///
/// Per variant: p50/p99 spawn-to-ack and worker CPU for the first and last 500 pushes, their
/// ratio, and the WAL size curve.
enum AloneBench {
    static func run(worker: String, pushes: Int) throws {
        guard let vectors = try Vectors.load() else { fatalError("vectors not found; set SOTTO_VECTORS") }
        let seed = try WorkerFixture(vectors: vectors)
        let payloads = try (0..<pushes).map { try seed.sealText("alone \($0)").payload }
        let window = min(500, max(1, pushes / 4))
        print("worker-bench --alone: \(pushes) sequential pushes per variant, no daemon, no held connection; "
              + "windows of \(window)")

        for (name, resetBytes) in [("payload -, reset off (before)", "1073741824"),
                                   ("payload -, reset every push", "0"),
                                   ("payload -, reset above 1 MiB", nil)] as [(String, String?)] {
            let copy = try freshCopy(of: seed)
            var environment = ProcessInfo.processInfo.environment.merging(copy.environment) { $1 }
            if let resetBytes { environment["SOTTO_WORKER_WAL_RESET_BYTES"] = resetBytes }
            let run = try AlonePushes.run(worker: worker, payloads: payloads, environment: environment,
                                          walPath: copy.walPath)
            print("\n[\(name)]")
            for line in run.summary(window: window) { print("  " + line) }
            fflush(nil)  // each variant's figures as soon as they exist
        }

        let copy = try freshCopy(of: seed)
        let socketPath = copy.directory + "/alone.sock"
        let server = try PushSocketServer.start(socketPath: socketPath, accept: true, command: [worker],
                                                environment: copy.environment)
        defer { server.stop() }
        var ackMs: [Double] = []
        var walAfter: [Int64] = []
        for payload in payloads {
            let start = DispatchTime.now().uptimeNanoseconds
            let ack = try PushClient.send(payload, to: socketPath)
            guard ack.contains("\"ok\":true") else { throw PushClient.Failure(message: "socket push: \(ack)") }
            ackMs.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6)
            walAfter.append(fileSize(copy.walPath))
        }
        let first = Array(ackMs.prefix(window)), last = Array(ackMs.suffix(window))
        let p = AlonePushes.percentile(_:_:) as ([Double], Double) -> Double
        print("\n[socket Accept=yes, reset above 1 MiB]")
        print(String(format: "  first %d: p50 %6.2f ms  p99 %6.2f ms", first.count, p(first, 0.5), p(first, 0.99)))
        print(String(format: "  last %d:  p50 %6.2f ms  p99 %6.2f ms", last.count, p(last, 0.5), p(last, 0.99)))
        print(String(format: "  ratio last/first p50: ack %.2f", p(last, 0.5) / p(first, 0.5)))
        let step = max(1, pushes / 10)
        print("  WAL bytes after push: " + stride(from: step - 1, to: pushes, by: step).map { "\($0 + 1):\(walAfter[$0])" }
            .joined(separator: " ") + "   (max \(walAfter.max() ?? 0))")
    }

    /// A copy of the seeded group directory (keystore, database) in a directory of its own.
    private static func freshCopy(of seed: WorkerFixture) throws -> (directory: String, walPath: String, environment: [String: String]) {
        let directory = seed.tmp.path + "/copy-" + Hex.encode(SecureRandom.bytes(4))
        _ = try ChildProcess.run("/bin/mkdir", ["-p", directory + "/run"])
        _ = try ChildProcess.run("/bin/cp", ["-a", seed.group.path, directory + "/group"])
        let environment = ["SOTTO_GROUP_DIR": directory + "/group", "SOTTO_RUNTIME_DIR": directory + "/run",
                           "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory)/no-bus"]
        return (directory, directory + "/group/shared.sqlite-wal", environment)
    }

    private static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
