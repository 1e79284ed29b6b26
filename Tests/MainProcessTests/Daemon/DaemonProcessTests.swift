import Foundation
import SharedStore
import SottoWire
import TestSupport
import Testing

/// Tests of the real `sotto daemon` process: started as a Type=notify service on a notify
/// socket the test binds, driven over its real control socket, by the real CLI and by real
/// `sotto-notify` workers. Nested suites by concern; serialized, because every test runs a
/// daemon (plus workers) and the machine has two cores.
@Suite("Daemon process", .serialized)
struct DaemonProcessTests {}

// MARK: - Helpers shared by the daemon suites

/// Runs the real `sotto` CLI against `home`.
func runCLI(_ arguments: [String], home: DaemonHome) throws -> (status: Int32, stdout: String, stderr: String) {
    try ChildProcess.run(try builtExecutable("sotto"), arguments, environment: home.environment)
}

/// Parses a CLI's `--json` output.
func jsonObject(_ text: String) throws -> [String: Any] {
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8))
    guard let dictionary = object as? [String: Any] else {
        throw DaemonProcess.Failure(description: "not a JSON object: \(text)")
    }
    return dictionary
}

/// One push through a real worker (`sotto-notify --payload -`): returns the ack line and the
/// monotonic time it was read.
func deliverThroughWorker(_ payload: [UInt8], home: DaemonHome) throws -> (ack: [String: Any], ackNs: UInt64) {
    let worker = try ChildProcess.launch(try builtExecutable("sotto-notify"), ["--payload", "-"], environment: home.environment)
    worker.write(String(decoding: payload, as: UTF8.self) + "\n")
    worker.closeStdin()
    guard let line = worker.readStdoutLine() else {
        let result = worker.finish()
        throw DaemonProcess.Failure(description: "worker wrote no ack (exit \(result.status)): \(result.stderr)")
    }
    let ackNs = MonotonicClock.nowNs()
    let result = worker.finish()
    guard result.status == 0 else { throw DaemonProcess.Failure(description: "worker exit \(result.status): \(result.stderr)") }
    return (try jsonObject(line), ackNs)
}

/// The change_log seqs after `seq`, read by a connection of the test's own.
func changeLogSeqs(after seq: Int64, home: DaemonHome) throws -> [Int64] {
    let conn = try SQLiteConnection.open(path: home.databasePath, profile: .worker)
    return try conn.query("SELECT seq FROM change_log WHERE seq > ? ORDER BY seq", [.integer(seq)]).map { try $0.int64(0) }
}

func int64(_ value: Any?) -> Int64? { (value as? NSNumber)?.int64Value }
