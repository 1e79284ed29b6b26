import ControlProtocol
import Foundation
import SottoWire
import TestSupport

/// Issue #10, resource limits: thousands of concurrent control-socket connections against a
/// daemon held to 1024 open files (soft and hard, so it cannot raise them), a quarter of
/// them each sending a 250 KB request with no end of line, while a `watch` subscriber and
/// the real `sotto status` must keep working. Threads and RSS are read from `/proc`.
///
/// ```swift
/// let report = try ControlFlood(profile: .short, maxConnectionsOverride: nil).run()
/// print(report.summaryLine)   // STRESS control-flood: connections=2500 held=832 refused=1668 …
/// ```
struct ControlFlood {
    let profile: StressProfile
    /// `SOTTO_CONTROL_MAX_CONNECTIONS` for the daemon: above the fd limit, so that EMFILE
    /// comes first and must be survived.
    let maxConnectionsOverride: Int?

    static let fileLimit = 1024
    static let partialLineBytes = 250 * 1024
    var connections: Int { profile.name == "full" ? 10_000 : 2_500 }

    struct Report: Sendable {
        var connections = 0
        var opened = 0
        var connectFailures = 0
        var held = 0
        var refusedWithLine = 0
        var closedWithoutLine = 0
        var refusalCodes: Set<Int> = []
        var daemonFileLimit = ""
        var maxConnections = 0
        var baseline: ProcessUsage?
        var peakThreads = 0
        var peakRSSKB: Int64 = 0
        var daemonAliveDuring = false
        var statusDuring: Int32 = -1
        /// `sotto new` while the flood is held: the daemon still has descriptors for its work.
        var newDuring: Int32 = -1
        var statusAfter: Int32 = -1
        var subscriberNotified = false
        var controlDuring: [String: Int] = [:]
        var connectionsAfter = -1
        var openFilesAfter = -1
        var daemonExit: Int32 = -1
        var seconds = 0.0
        /// Seconds spent opening the flood, until the outcomes settled, until all was given back.
        var phases: [Double] = []

        var summaryLine: String {
            "STRESS control-flood: connections=\(connections) opened=\(opened) connectFailures=\(connectFailures) "
                + "held=\(held) refusedWithLine=\(refusedWithLine) closedWithoutLine=\(closedWithoutLine) "
                + "maxConnections=\(maxConnections) fileLimit=\(daemonFileLimit) "
                + "threads=\(baseline?.threads ?? -1)->\(peakThreads) rssKB=\(baseline?.rssKB ?? -1)->\(peakRSSKB) "
                + "control=\(controlDuring.sorted { $0.key < $1.key }.map { "\($0.key):\($0.value)" }.joined(separator: ",")) "
                + "statusDuring=\(statusDuring) newDuring=\(newDuring) statusAfter=\(statusAfter) subscriberNotified=\(subscriberNotified) "
                + "daemonExit=\(daemonExit) seconds=\(String(format: "%.1f", seconds)) "
                + "phases=\(phases.map { String(format: "%.1f", $0) }.joined(separator: "/"))"
        }
    }

    func run() throws -> Report {
        var report = Report()
        report.connections = connections
        let started = Date()
        try Self.raiseOwnFileLimit(to: connections + 256)
        let home = try DaemonHome()
        var environment = ProcessInfo.processInfo.environment.merging(home.environment) { $1 }
        if let maxConnectionsOverride { environment["SOTTO_CONTROL_MAX_CONNECTIONS"] = String(maxConnectionsOverride) }
        let daemon = try LoggedProcess.launch("/usr/bin/prlimit", ["--nofile=\(Self.fileLimit):\(Self.fileLimit)",
                                                                   try profile.executable("sotto"), "daemon"],
                                              environment: environment)
        defer { if daemon.isRunning { daemon.signal(SIGKILL); _ = daemon.waitForExit() } }
        guard daemon.waitForLine(containing: "ready:", timeout: 60) else {
            throw StressFailure("daemon did not start: \(daemon.output.suffix(5))")
        }
        do {
            try flood(daemon: daemon, home: home, started: started, into: &report)
        } catch {
            throw StressFailure("\(error); daemon alive: \(daemon.isRunning); its last lines: \(daemon.output.suffix(8))")
        }
        return report
    }

    private func flood(daemon: LoggedProcess, home: DaemonHome, started: Date, into report: inout Report) throws {
        report.daemonFileLimit = Self.fileLimitLine(pid: daemon.pid)
        report.baseline = try ProcessUsage.sample(pid: daemon.pid)
        let cli = { (arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) in
            try ChildProcess.run(try profile.executable("sotto"), arguments, environment: home.environment)
        }

        // A subscriber from before the flood (a `sotto watch`), which must outlive it.
        let subscriber = try ControlSocketClient(path: home.controlSocketPath)
        _ = try subscriber.result("subscribe")

        // The flood: connect, and every fourth one sends most of a huge request.
        var fds: [Int32] = []
        var failuresInARow = 0
        let partial = [UInt8](repeating: UInt8(ascii: "x"), count: Self.partialLineBytes)
        for index in 0..<connections {
            let fd = Self.connect(home.controlSocketPath)
            guard fd >= 0 else {
                report.connectFailures += 1
                failuresInARow += 1
                if failuresInARow >= 20 { break }  // the daemon is gone: no point going on
                continue
            }
            failuresInARow = 0
            fds.append(fd)
            if index % 4 == 0 {
                _ = partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL | MSG_DONTWAIT)) }
            }
            if index % 250 == 0 { Self.notePeak(pid: daemon.pid, in: &report) }
        }
        report.opened = fds.count
        report.phases.append(Date().timeIntervalSince(started))
        Self.notePeak(pid: daemon.pid, in: &report)

        // While every connection is still held: the real CLI gets its answer.
        report.statusDuring = try cli(["status"]).status
        report.newDuring = try cli(["new", "--name", "during the flood"]).status
        report.daemonAliveDuring = daemon.isRunning
        Self.notePeak(pid: daemon.pid, in: &report)

        // Each flood connection ends up served (open, silent) or refused (a line, then closed).
        var outcomes = [Outcome](repeating: .open, count: fds.count)
        var received = [[UInt8]](repeating: [], count: fds.count)
        let statusClient = try ControlSocketClient(path: home.controlSocketPath)
        let deadline = Date().addingTimeInterval(30)
        while daemon.isRunning {
            Self.collect(fds, &outcomes, &received)
            let control = try statusClient.result("status")["control"] as? [String: Int] ?? [:]
            report.controlDuring = control
            let held = outcomes.filter { $0 == .open }.count
            // Open here and open in the daemon (plus the subscriber and this status client).
            if control["connections"] == held + 2 { break }
            if Date() > deadline { break }
            var pollFD = pollfd(fd: statusClient.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&pollFD, 1, 100)  // paces the check on a socket that stays quiet
        }
        Self.notePeak(pid: daemon.pid, in: &report)
        report.phases.append(Date().timeIntervalSince(started))
        report.maxConnections = report.controlDuring["maxConnections"] ?? 0
        for (index, outcome) in outcomes.enumerated() {
            switch outcome {
            case .open: report.held += 1
            case .closed:
                let lines = received[index].split(separator: 0x0a)
                let codes = lines.compactMap { line -> Int? in
                    guard case .response(_, .failure(let error))? = try? JSONRPC.ServerMessage(line: line) else { return nil }
                    return error.code.rawValue
                }
                if codes.isEmpty { report.closedWithoutLine += 1 } else { report.refusedWithLine += 1 }
                report.refusalCodes.formUnion(codes)
            }
        }

        // The subscriber still gets changes; then everything closes and the daemon recovers.
        _ = try statusClient.result("newConversation", ["name": "after the flood"])
        report.subscriberNotified = (try? subscriber.nextNotification()) != nil
        for fd in fds { close(fd) }
        let settleDeadline = Date().addingTimeInterval(30)
        while daemon.isRunning, Date() < settleDeadline {
            report.connectionsAfter = (try statusClient.result("status")["control"] as? [String: Int])?["connections"] ?? -1
            if report.connectionsAfter == 2 { break }
            var pollFD = pollfd(fd: statusClient.fd, events: Int16(POLLIN), revents: 0)
            _ = poll(&pollFD, 1, 100)
        }
        report.phases.append(Date().timeIntervalSince(started))
        report.openFilesAfter = (try? ProcessUsage.sample(pid: daemon.pid))?.openFiles ?? -1
        report.statusAfter = try cli(["status"]).status
        daemon.signal(SIGTERM)
        report.daemonExit = daemon.waitForExit()
        report.seconds = Date().timeIntervalSince(started)
    }

    enum Outcome { case open, closed }

    /// Reads what each still-open flood connection received, without blocking.
    static func collect(_ fds: [Int32], _ outcomes: inout [Outcome], _ received: inout [[UInt8]]) {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for (index, fd) in fds.enumerated() where outcomes[index] == .open {
            while true {
                let n = recv(fd, &buffer, buffer.count, Int32(MSG_DONTWAIT))
                if n > 0 {
                    received[index] += buffer[0..<n]
                    continue
                }
                if n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) { outcomes[index] = .closed }
                break
            }
        }
    }

    static func notePeak(pid: Int32, in report: inout Report) {
        guard let usage = try? ProcessUsage.sample(pid: pid) else { return }
        report.peakThreads = max(report.peakThreads, usage.threads)
        report.peakRSSKB = max(report.peakRSSKB, usage.rssKB)
    }

    /// A connected stream socket with a 5 s connect deadline (a full backlog blocks
    /// `connect`), then non-blocking; -1 when the daemon does not take it.
    static func connect(_ path: String) -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0, var address = UnixSocket.address(path) else { return -1 }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let rc = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard rc == 0 else {
            close(fd)
            return -1
        }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        return fd
    }

    static func raiseOwnFileLimit(to wanted: Int) throws {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        guard limit.rlim_max >= rlim_t(wanted) else {
            throw StressFailure("this test needs \(wanted) open files; the hard limit is \(limit.rlim_max)")
        }
        if limit.rlim_cur < rlim_t(wanted) {
            limit.rlim_cur = rlim_t(wanted)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        }
    }

    /// "1024 1024" from /proc/PID/limits (soft and hard open files).
    static func fileLimitLine(pid: Int32) -> String {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? ""
        guard let line = text.split(separator: "\n").first(where: { $0.hasPrefix("Max open files") }) else { return "?" }
        return line.split(separator: " ").dropFirst(3).prefix(2).joined(separator: " ")
    }
}
