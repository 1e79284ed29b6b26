import Foundation
import SharedStore
import TestSupport
import SottoCrypto
import SottoWire

/// `worker-bench --keyring SOTTO_NOTIFY [PUSHES]` (issue #20, docs/adr/0045): spawn→durable-ack
/// latency and peak RSS of the worker with the master key from the kernel keyring beside the
/// same worker with it from `keystore/master.key`, in one run on one seeded group directory.
/// The two sources alternate in 4 rounds so drift on a shared machine hits both alike; the
/// ratio keyring / file is printed (goal ≤ 1.10).
enum KeyringBench {
    static func run(worker: String, pushes: Int) throws {
        guard let vectors = try Vectors.load() else { fatalError("vectors not found; set SOTTO_VECTORS") }
        let fixture = try WorkerFixture(vectors: vectors)
        let keystore = fixture.group.keystorePath
        let keyFile = keystore + "/master.key"
        guard let key = try Keystore.keyFileKey(directory: keystore) else { fatalError("the fixture has no master.key") }
        let ring = KernelKeyring(description: KernelKeyring.description(keystoreDirectory: keystore))
        defer { if let serial = ring.search() { ring.invalidate(serial: serial) } }
        let environment = ProcessInfo.processInfo.environment.merging(fixture.environment) { $1 }
        // A connection held open, as the daemon's (see main.swift).
        let holder = try ChildProcess.launch("/usr/bin/sqlite3", [fixture.group.databasePath])
        holder.write("SELECT count(*) FROM sqlite_master;\nSELECT 'held';\n")
        _ = holder.waitForLine(containing: "held")
        defer { holder.terminate() }

        func useFile() throws {
            if let serial = ring.search() { ring.invalidate(serial: serial) }
            if !FileManager.default.fileExists(atPath: keyFile) {
                guard FileManager.default.createFile(atPath: keyFile, contents: Data(key.copyBytes()),
                                                     attributes: [.posixPermissions: 0o600]) else { fatalError("cannot write \(keyFile)") }
            }
        }
        func useKeyring() throws {
            try Keystore.recordKernelKeySerial(try ring.store(key), directory: keystore)
            try Keystore.wipeKeyFile(directory: keystore)
        }
        func measure(_ tag: String) throws -> [Double] {
            let socketPath = fixture.tmp.path + "/keyring-bench.sock"
            let server = try PushSocketServer.start(socketPath: socketPath, accept: true, command: [worker], environment: environment)
            defer { server.stop() }
            return try (0..<pushes).map { index in
                let payload = try fixture.sealText("\(tag) \(index)").payload
                let t0 = MonotonicClock.nowNs()
                let ack = try PushClient.send(payload, to: socketPath)
                guard ack.contains("\"ok\":true") else { throw PushClient.Failure(message: "\(tag): \(ack)") }
                return Double(MonotonicClock.nowNs() - t0) / 1e6
            }
        }
        func peakRSS(_ tag: String) throws -> Int {
            let payload = try fixture.sealText(tag).payload
            let result = try ChildProcess.run("/usr/bin/time", ["-f", "RSS %M", worker, "--payload", "-"], environment: environment,
                                              stdin: String(decoding: payload, as: UTF8.self) + "\n")
            guard result.stdout.contains("\"ok\":true"),
                  let line = result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("RSS ") }),
                  let kib = Int(line.dropFirst(4)) else { throw PushClient.Failure(message: "\(tag): \(result.stdout) \(result.stderr)") }
            return kib
        }
        func percentile(_ values: [Double], _ p: Double) -> Double {
            let sorted = values.sorted()
            return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
        }

        print("worker-bench --keyring: \(pushes) sequential pushes per round, 4 rounds per source, Accept=yes")
        try useFile()
        _ = try measure("warm")
        var file: [Double] = [], kernel: [Double] = [], fileRSS: [Int] = [], kernelRSS: [Int] = []
        for round in 0..<4 {
            try useFile()
            file += try measure("file \(round)")
            fileRSS.append(try peakRSS("file rss \(round)"))
            try useKeyring()
            kernel += try measure("keyring \(round)")
            kernelRSS.append(try peakRSS("keyring rss \(round)"))
        }
        for (name, ms) in [("key file", file), ("kernel keyring", kernel)] {
            print(String(format: "%-15@ p50 %6.2f ms  p99 %6.2f ms  mean %6.2f ms", name as NSString,
                         percentile(ms, 0.5), percentile(ms, 0.99), ms.reduce(0, +) / Double(ms.count)))
        }
        print("peak RSS KiB: key file \(fileRSS.max()!), kernel keyring \(kernelRSS.max()!)")
        print(String(format: "ratio kernel keyring / key file: p50 %.2f  p99 %.2f  peak RSS %.2f   (goal ≤ 1.10)",
                     percentile(kernel, 0.5) / percentile(file, 0.5), percentile(kernel, 0.99) / percentile(file, 0.99),
                     Double(kernelRSS.max()!) / Double(fileRSS.max()!)))
    }
}
