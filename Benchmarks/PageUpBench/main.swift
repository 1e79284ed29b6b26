import ControlProtocol
import Dispatch
import Foundation
import Glibc
import SottoClient
import SottoWire
import TestSupport

// Page up deep in a long conversation (issue #34): the library object `sotto chat` pages
// with (`Timeline.loadOlder`, one older page from the daemon per page up), against a real
// daemon and worker, release build. Figures are ratios against baselines in the same run:
//  1. one page up when 100,000 messages are behind it (the last pages of scrolling through
//     all of a 100,000-message conversation), against one page up at message 100 of a
//     200-message conversation (goal ≤ 1.2×);
//  2. the RSS of a process that paged through all 100,000, against the same process with an
//     empty conversation open (goal ≤ 1.5×).
// Each measurement runs in a child process of its own (this executable with `--child`), so
// the RSS is the timeline's and nothing else's. The same two figures are then measured
// through the app a person uses: `sotto chat` on a pseudo-terminal, the PageUp key written
// → the frame drawn for it read back whole, and the app's RSS (ChatOnTerminal.swift).
// Run through Benchmarks/page-up-bench.sh.

// MARK: - The child: one timeline, measured

func rssKiB() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        return Int(line.split(separator: " ")[1]) ?? 0
    }
    return 0
}

/// A timeline whose snapshots can be waited on.
final class Watched: @unchecked Sendable {
    let timeline: Timeline
    private let condition = NSCondition()
    private var latest: TimelineSnapshot
    private var observation: Observation?

    init(conversation: String, socketPath: String, window: Int) {
        timeline = Timeline(conversation: conversation, socketPath: socketPath, window: window)
        latest = timeline.current
        observation = timeline.observe { [self] snapshot in
            condition.lock()
            latest = snapshot
            condition.broadcast()
            condition.unlock()
        }
    }

    func wait(_ what: String, _ done: (TimelineSnapshot) -> Bool) -> TimelineSnapshot {
        condition.lock()
        defer { condition.unlock() }
        let deadline = Date(timeIntervalSinceNow: 60)
        while !done(latest) {
            if !condition.wait(until: deadline) { fatalError("timed out waiting for \(what)") }
        }
        return latest
    }

    /// Opens the conversation and waits for its first page.
    func open() -> TimelineSnapshot {
        timeline.start()
        return wait("the first page") { $0.connected }
    }

    /// One page up: asks for the next older page and waits until it is merged (ns).
    func pageUp() -> (ns: UInt64, snapshot: TimelineSnapshot) {
        let before = wait("no page on its way") { !$0.loadingOlder }
        let started = MonotonicClock.nowNs()
        timeline.loadOlder()
        let after = wait("the older page") { !$0.loadingOlder && $0.generation > before.generation }
        return (MonotonicClock.nowNs() - started, after)
    }

    func close() {
        observation = nil
        timeline.stop()
    }
}

/// Prints and flushes: each figure shows as it is measured, also into a file.
func say(_ line: String) {
    print(line)
    fflush(nil)
}

func median(_ values: [UInt64]) -> Double { Double(values.sorted()[values.count / 2]) }

/// WINDOW: the timeline's window (`Int.max`: every page held, as before docs/adr/0069).
/// `--child page100 ID SOCKET ROUNDS WINDOW`: in ROUNDS fresh timelines, the page up from 100
/// loaded messages to 150. `--child deep ID SOCKET COUNT`: pages up through all of it; the
/// last 20 page ups (the last 1,000 messages) and the RSS at the end. `--child empty ID
/// SOCKET`: the RSS with the empty conversation open.
func child(_ arguments: [String]) {
    let mode = arguments[0], conversation = arguments[1], socket = arguments[2]
    let window = Int(arguments[4])!
    switch mode {
    case "page100":
        var costs: [UInt64] = []
        for _ in 0..<(Int(arguments[3]) ?? 30) {
            let watched = Watched(conversation: conversation, socketPath: socket, window: window)
            _ = watched.open()
            _ = watched.pageUp()                    // 50 → 100 loaded
            let (ns, snapshot) = watched.pageUp()    // the page up at message 100
            precondition(snapshot.items.count == 150, "\(snapshot.items.count) loaded")
            costs.append(ns)
            watched.close()
        }
        say("page100 \(Int(median(costs)))")
    case "deep":
        let count = Int(arguments[3])!
        let watched = Watched(conversation: conversation, socketPath: socket, window: window)
        var snapshot = watched.open()
        var costs: [UInt64] = []
        var pages = 0
        let started = MonotonicClock.nowNs()
        while snapshot.hasOlder {
            let step = watched.pageUp()
            snapshot = step.snapshot
            costs.append(step.ns)
            pages += 1
        }
        let total = MonotonicClock.nowNs() - started
        precondition(pages * 50 + 50 >= count, "paged \(pages) pages of a \(count)-message conversation")
        let oldest = snapshot.items.first?.message.text ?? ""
        say("deep \(Int(median(Array(costs.suffix(20))))) \(Int(median(Array(costs.prefix(20))))) \(rssKiB()) \(pages) \(total) \(snapshot.items.count) \(oldest.replacingOccurrences(of: " ", with: "_"))")
    case "empty":
        let watched = Watched(conversation: conversation, socketPath: socket, window: window)
        _ = watched.open()
        say("empty \(rssKiB())")
        watched.close()
    default:
        fatalError("unknown mode \(mode)")
    }
}

// MARK: - The parent: a device, three conversations, the children

func pushAll(_ count: Int, to conversation: String, on device: Device) throws {
    let remote = try RemoteMember.join(conversationId: conversation, databasePath: device.group.databasePath)
    let start = WallClock.nowMs() - Int64(count)
    var first = 0
    while first < count {
        let last = min(first + PushBatchExchange.maxPushes, count)
        let payloads = try (first..<last).map { try remote.push("m \($0)", sentAtMs: start + Int64($0)) }
        let acks = try PushClient.sendBatch(payloads, to: device.runtime.pushSocketPath)
        guard acks.allSatisfy({ if case .ok? = $0 { true } else { false } }) else { fatalError("refused: \(acks.prefix(2))") }
        first = last
    }
}

func runChild(_ arguments: [String], environment: [String: String]) throws -> [String] {
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    let process = try ChildProcess.launch(me, ["--child"] + arguments, environment: environment)
    let result = process.finish()
    guard result.status == 0, let line = result.stdout.split(separator: "\n").last else {
        fatalError("child \(arguments[0]) exited \(result.status): \(result.stderr)")
    }
    return line.split(separator: " ").map(String.init)
}

func run(count: Int, rounds: Int) throws {
    let tmp = try TemporaryDirectory(prefix: "pageup")
    let device = try Device.start("bench", in: tmp.path)
    defer { device.stop() }
    func new(_ name: String) throws -> String {
        guard let id = try device.json(["new", "--name", name])["conversationId"] as? String else { fatalError("sotto new") }
        return id
    }
    let empty = try new("Empty"), short = try new("Short"), long = try new("Long")
    let filling = MonotonicClock.nowNs()
    try pushAll(200, to: short, on: device)
    try pushAll(count, to: long, on: device)
    say(String(format: "%d + 200 messages pushed through the worker in %.1f s",
                 count, Double(MonotonicClock.nowNs() - filling) / 1e9))
    let socket = device.runtime.controlSocketPath
    let environment = device.environment

    let window = Int(ProcessInfo.processInfo.environment["SOTTO_BENCH_WINDOW"] ?? "") ?? 500
    // SOTTO_BENCH_BEFORE=1 also measures a timeline that holds every page it read, as it
    // was before docs/adr/0069 (minutes at 100,000: each page up costs the whole window).
    var variants = [("the timeline as it is (window \(window))", window)]
    if ProcessInfo.processInfo.environment["SOTTO_BENCH_BEFORE"] == "1" {
        variants.append(("every page held (window Int.max, before docs/adr/0069)", Int.max))
    }
    let through = ProcessInfo.processInfo.environment["SOTTO_BENCH_THROUGH"] ?? "both"
    if through != "app" {
        for (label, window) in variants {
            say("-- through the library: \(label)")
            try measure(count: count, rounds: rounds, window: window, conversations: (empty, short, long), socket: socket, environment: environment)
        }
    }
    if through != "library" {
        say("-- through the app: `sotto chat` on a pseudo-terminal (80×24), the PageUp key → its frame read back")
        try measureThroughTheApp(count: count, rounds: max(3, rounds / 3), conversations: (empty, short, long), environment: environment)
    }
}

func measure(count: Int, rounds: Int, window: Int, conversations: (empty: String, short: String, long: String),
             socket: String, environment: [String: String]) throws {
    let baseline = try runChild(["page100", conversations.short, socket, "\(rounds)", "\(window)"], environment: environment)
    let deep = try runChild(["deep", conversations.long, socket, "\(count)", "\(window)"], environment: environment)
    let emptyRSS = try runChild(["empty", conversations.empty, socket, "0", "\(window)"], environment: environment)
    let at100 = Double(baseline[1])!, atDeep = Double(deep[1])!, firstDeep = Double(deep[2])!
    let rssDeep = Double(deep[3])!, rssEmpty = Double(emptyRSS[1])!
    say(String(format: "page up at message 100 (200-message conversation, median of %d): %.3f ms", rounds, at100 / 1e6))
    say(String(format: "page up at message ~100 of the long one (median of its first 20):   %.3f ms", firstDeep / 1e6))
    say(String(format: "page up at message ~%d (median of the last 20):              %.3f ms", count, atDeep / 1e6))
    say("  \(deep[4]) page ups in \(String(format: "%.1f", Double(deep[5])! / 1e9)) s, \(deep[6]) messages held at the end, oldest shown \(deep[7].replacingOccurrences(of: "_", with: " "))")
    say(String(format: "  ratio page up at %d / at 100: %.2f (goal ≤ 1.2)", count, atDeep / at100))
    say(String(format: "RSS with the empty conversation open: %.1f MB", rssEmpty / 1024))
    say(String(format: "RSS after paging through all %d:  %.1f MB", count, rssDeep / 1024))
    say(String(format: "  ratio RSS %d / empty: %.2f (goal ≤ 1.5)", count, rssDeep / rssEmpty))
}

let arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "--child" {
    child(Array(arguments.dropFirst()))
    exit(0)
}
let count = Int(ProcessInfo.processInfo.environment["SOTTO_BENCH_MESSAGES"] ?? "") ?? 100_000
let rounds = Int(ProcessInfo.processInfo.environment["SOTTO_BENCH_ROUNDS"] ?? "") ?? 30
say("== page up deep in a conversation, and the RSS after (Timeline on a real daemon, release) ==")
do {
    try run(count: count, rounds: rounds)
} catch {
    say("benchmark failed: \(error)")
    exit(1)
}
