import ControlProtocol
import Foundation
import Glibc
import SottoClient
import SottoWire
import TestSupport

// `sotto chat`'s end-to-end figures (issue #34), as ratios against a baseline in the same run:
//  1. a push acked by a real `sotto-notify` → its text drawn by `sotto chat ID`, against the
//     same push → its line printed by `sotto watch --conversation ID` (goal: p99 ≤ 2×). Both
//     run at once under `script` (a pseudo-terminal each, its output on a pipe we read), so
//     every push is measured on both and the relay through `script` is the same for both;
//  2. the chat left idle: its CPU ticks (utime + stime, /proc) in 10 s (goal ≤ 1).
// Build release and run through Benchmarks/chat-e2e-bench.sh.

// MARK: - A program under `script`, with the time each marker first reached its terminal

/// Runs `command` under `script -qfec` and records, on a thread of its own, the monotonic
/// time at which each `push-NNNNNN` first appears in what it writes to its terminal.
final class MarkedOutput: @unchecked Sendable {
    let pid: pid_t
    private let output: Int32
    private let input: Int32
    private let condition = NSCondition()
    private var seen: [Int: UInt64] = [:]

    init(_ command: String, environment: [String: String]) throws {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        guard pipe(&toChild) == 0, pipe(&fromChild) == 0 else { throw DaemonProcess.Failure(description: "pipe: errno \(errno)") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 2)
        for fd in toChild + fromChild { posix_spawn_file_actions_addclose(&actions, fd) }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }.merging(["TERM": "xterm-256color"]) { $1 }
        let arguments: [String] = ["/usr/bin/script", "-qfec", command, "/dev/null"]
        let argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, "/usr/bin/script", &actions, nil, argv, envp)
        guard rc == 0 else { throw DaemonProcess.Failure(description: "posix_spawn script: \(rc)") }
        close(toChild[0])
        close(fromChild[1])
        self.pid = pid
        output = fromChild[0]
        input = toChild[1]   // kept open: script ends when its input does
        let thread = Thread { [self] in readLoop() }
        thread.start()
    }

    private func readLoop() {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        var tail: [UInt8] = []
        let marker = Array("push-".utf8)
        while true {
            let count = read(output, &buffer, buffer.count)
            if count <= 0 { return }
            let at = MonotonicClock.nowNs()
            let bytes = tail + buffer[0..<count]
            var found: [Int] = []
            var index = 0
            while index + marker.count + 6 <= bytes.count {
                if bytes[index] == marker[0], Array(bytes[index..<(index + marker.count)]) == marker {
                    let digits = bytes[(index + marker.count)..<(index + marker.count + 6)]
                    if digits.allSatisfy({ (0x30...0x39).contains($0) }), let n = Int(String(decoding: digits, as: UTF8.self)) { found.append(n) }
                    index += marker.count
                } else {
                    index += 1
                }
            }
            tail = Array(bytes.suffix(marker.count + 6))
            if !found.isEmpty {
                condition.lock()
                for n in found where seen[n] == nil { seen[n] = at }
                condition.broadcast()
                condition.unlock()
            }
        }
    }

    /// When `push-n` first appeared (waits up to `timeout` seconds).
    func arrival(of n: Int, timeout: Double = 10) -> UInt64? {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: timeout)
        while seen[n] == nil {
            if !condition.wait(until: deadline) { return nil }
        }
        return seen[n]
    }

    /// The program `script` runs (its only child).
    var child: pid_t? {
        let children = (try? String(contentsOfFile: "/proc/\(pid)/task/\(pid)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").first.flatMap { pid_t($0) }
    }

    /// SIGTERM to the program, then its input closed; `script` and the program are killed
    /// when they are not gone within 5 s (a benchmark must not leave processes behind).
    func stop() {
        let program = child
        if let program { kill(program, SIGTERM) }
        close(input)
        var status: Int32 = 0
        let deadline = MonotonicClock.nowNs() + 5_000_000_000
        while waitpid(pid, &status, WNOHANG) == 0 {
            if MonotonicClock.nowNs() > deadline {
                if let program { kill(program, SIGKILL) }
                kill(pid, SIGKILL)
                _ = waitpid(pid, &status, 0)
                return
            }
            usleep(20_000)   // polling the exit within a bound: nothing to wait on but the child
        }
    }
}

// MARK: - Figures

func percentile(_ sorted: [Double], _ p: Double) -> Double { sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))] }

func summary(_ values: [Double]) -> String {
    let sorted = values.sorted()
    return String(format: "p50 %.3f ms, p99 %.3f ms, max %.3f ms (n=%d)",
                  percentile(sorted, 0.5), percentile(sorted, 0.99), sorted.last!, sorted.count)
}

func cpuTicks(_ pid: pid_t) -> Int64? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
          let close = stat.range(of: ")") else { return nil }
    let fields = stat[close.upperBound...].split(separator: " ")
    return Int64(fields[11])! + Int64(fields[12])!
}

func run(pushes: Int, warmUp: Int) throws {
    let home = try DaemonHome()
    let daemon = try DaemonProcess.start(home: home)
    defer { _ = try? daemon.stop() }
    let control = try ControlClient.connect(path: home.controlSocketPath)
    let conversationId = try control.call(NewConversationParams(name: "Bench")).conversationId
    let remote = try RemoteMember.join(conversationId: conversationId, databasePath: home.databasePath)
    let sotto = try builtExecutable("sotto")
    let worker = try builtExecutable("sotto-notify")
    let environment = home.environment.merging(["NO_COLOR": "1"]) { $1 }

    let watch = try MarkedOutput("\(sotto) watch --conversation \(conversationId)", environment: environment)
    let chat = try MarkedOutput("\(sotto) chat \(conversationId)", environment: environment)
    defer { watch.stop(); chat.stop() }
    // Both follow the conversation once the daemon counts two clients with it open.
    let deadline = MonotonicClock.nowNs() + 60_000_000_000
    while (try control.call(StatusParams()).openInClient.values.reduce(0, +)) < 2 {
        if MonotonicClock.nowNs() > deadline { fatalError("the chat and the watch never both subscribed") }
        usleep(20_000)
    }
    var chatMs: [Double] = [], watchMs: [Double] = []
    for index in 0..<(warmUp + pushes) {
        let marker = String(format: "push-%06d", index)
        let payload = String(decoding: try remote.push(marker), as: UTF8.self) + "\n"
        let child = try ChildProcess.launch(worker, ["--payload", "-"], environment: home.environment)
        child.write(payload)
        child.closeStdin()
        guard let line = child.readStdoutLine() else { fatalError("no ack: \(child.finish().stderr)") }
        let ackNs = MonotonicClock.nowNs()
        _ = child.finish()
        guard case .ok? = PushAck.parse(Array(line.utf8)) else { fatalError("refused: \(line)") }
        let timeout = index == 0 ? 60.0 : 10.0
        guard let drawn = chat.arrival(of: index, timeout: timeout) else { fatalError("the chat never drew \(marker)") }
        guard let printed = watch.arrival(of: index, timeout: timeout) else { fatalError("sotto watch never printed \(marker)") }
        if index >= warmUp {
            chatMs.append((Double(drawn) - Double(ackNs)) / 1e6)
            watchMs.append((Double(printed) - Double(ackNs)) / 1e6)
        }
    }
    let chatP99 = percentile(chatMs.sorted(), 0.99), watchP99 = percentile(watchMs.sorted(), 0.99)
    print("push acked → sotto watch printed it:  \(summary(watchMs))")
    print("push acked → sotto chat drew it:      \(summary(chatMs))")
    print(String(format: "  ratio p99 chat/watch: %.2f (goal ≤ 2)", chatP99 / watchP99))

    // Idle: nothing arrives for 10 s.
    guard let app = chat.child, let before = cpuTicks(app) else { fatalError("no chat process") }
    let idleStart = MonotonicClock.nowNs()
    while MonotonicClock.nowNs() - idleStart < 10_000_000_000 { usleep(200_000) }   // the measurement window itself
    let used = (cpuTicks(app) ?? before) - before
    print("sotto chat idle: \(used) CPU tick(s) in 10 s (goal ≤ 1)")
}

let pushes = Int(ProcessInfo.processInfo.environment["SOTTO_BENCH_PUSHES"] ?? "") ?? 300
print("== sotto chat end-to-end (real processes, release) ==")
do {
    try run(pushes: pushes, warmUp: 20)
} catch {
    print("benchmark failed: \(error)")
    exit(1)
}
