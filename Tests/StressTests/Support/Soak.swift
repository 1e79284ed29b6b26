import Foundation
import SharedStore
import TestSupport

/// Issue #10, soak: two real devices (daemon + socket-activated worker each) do what users
/// do (a conversation joined by the other device, texts both ways, a reaction, a second
/// conversation created, joined and exploded), then sit idle while `/proc` is read every
/// second: CPU time and resident memory must stay flat. The short profile is 8 rounds, then
/// a 12 s idle window; the full one (`make stress`) repeats rounds of 20 texts a side, each
/// followed by a 45 s idle gap, for `SOTTO_SOAK_MINUTES` (60), and prints the RSS curve.
///
/// ```swift
/// let report = try Soak(profile: .short).run()
/// print(report.summaryLine)   // STRESS soak: rounds=1 alice cpu=0.3% rss+=12kB …
/// ```
struct Soak {
    let profile: StressProfile

    /// One device's figures over its worst idle window, and its RSS over the whole run.
    struct DeviceFigures: Sendable {
        var name = ""
        var idleCPUShare = 0.0
        var idleCPUTicks: Int64 = 0
        var idleSeconds = 0.0
        var idleRSSGrowthKB: Int64 = 0
        /// RSS at the end of the first and of the last idle window (the long profile's drift).
        var firstIdleRSSKB: Int64 = 0
        var lastIdleRSSKB: Int64 = 0
        var threads = 0
        /// (minutes since start, RSS kB) at the end of each idle window.
        var curve: [(Double, Int64)] = []
        /// (RssAnon kB, RssFile kB) at the end of each idle window, in step with `curve`.
        var parts: [(Int64, Int64)] = []
        /// SQLite's heap in the daemon (kB, from `sotto status`), in step with `curve`: its part
        /// of RssAnon (docs/adr/0053).
        var sqliteKB: [Int64] = []

        /// How much private memory (RssAnon) grew over the second half of the rounds: from the
        /// sample after round ⌈n/2⌉ to the last. RssFile is left out: it is the database and
        /// libraries mapped from disk, reclaimable, and jumps by megabytes as the kernel pages
        /// them (seen: ±2 MB between two idle windows).
        var secondHalfAnonGrowthKB: Int64 {
            guard parts.count >= 2 else { return 0 }
            return parts[parts.count - 1].0 - parts[(parts.count - 1) / 2].0
        }

        /// The least-squares line through RssAnon over the same second half: its slope (kB per
        /// round) and what it grows over that half. Unlike the two end points, one late page
        /// fault or one early free does not decide it; a steady leak does.
        var secondHalfAnonFit: (slopeKBPerRound: Double, growthKB: Double) {
            let samples = parts[((parts.count - 1) / 2)...].map { Double($0.0) }
            guard samples.count >= 2 else { return (0, 0) }
            let n = Double(samples.count)
            let meanX = (n - 1) / 2
            let meanY = samples.reduce(0, +) / n
            var covariance = 0.0, variance = 0.0
            for (x, y) in samples.enumerated() {
                covariance += (Double(x) - meanX) * (y - meanY)
                variance += (Double(x) - meanX) * (Double(x) - meanX)
            }
            let slope = covariance / variance
            return (slope, slope * (n - 1))
        }
    }

    struct Report: Sendable {
        var rounds = 0
        var messagesSent = 0
        var exploded = 0
        var devices: [DeviceFigures] = []
        var seconds = 0.0

        var summaryLine: String {
            let parts = devices.map { device in
                "\(device.name) idleCpu=\(String(format: "%.2f", device.idleCPUShare * 100))% "
                    + "(\(device.idleCPUTicks) ticks/\(String(format: "%.0f", device.idleSeconds)) s) "
                    + "idleRss+=\(device.idleRSSGrowthKB)kB rss=\(device.lastIdleRSSKB)kB "
                    + "drift=\(device.lastIdleRSSKB - device.firstIdleRSSKB)kB anonSecondHalf+=\(device.secondHalfAnonGrowthKB)kB "
                    + "anonSlope=\(String(format: "%.1f", device.secondHalfAnonFit.slopeKBPerRound))kB/round "
                    + "anonFitted+=\(String(format: "%.0f", device.secondHalfAnonFit.growthKB))kB "
                    + "threads=\(device.threads)"
            }
            return "STRESS soak: rounds=\(rounds) sent=\(messagesSent) exploded=\(exploded) " + parts.joined(separator: " ")
                + " seconds=\(String(format: "%.0f", seconds))"
        }

        /// The RSS curves, one line per device (minute:MB anon+file).
        var curveLines: [String] {
            devices.map { device in
                "STRESS soak-rss \(device.name) (min:MB anon+file, sqlite): " + device.curve.indices.map { index in
                    let (minute, rss) = device.curve[index]
                    let (anon, file) = device.parts[index]
                    let sqlite = index < device.sqliteKB.count ? Double(device.sqliteKB[index]) / 1024 : -1
                    return String(format: "%.1f:%.1f(%.1f+%.1f, %.1f)", minute, Double(rss) / 1024,
                                  Double(anon) / 1024, Double(file) / 1024, sqlite)
                }.joined(separator: " ")
            }
        }
    }

    /// Where the creator's daemon grows, when the curve says it does: with
    /// `SOTTO_SOAK_HEAPTRACK=/tmp/alice.raw` (Debian's heaptrack installed), alice's daemon runs
    /// with heaptrack's preload and writes its raw trace there; read it with
    /// `/usr/lib/heaptrack/libexec/heaptrack_interpret < raw | gzip > alice.gz` and
    /// `heaptrack_print -f alice.gz --print-leaks 1` (how docs/adr/0059 found the commit
    /// signal's leak). Her RssAnon then includes heaptrack's own buffers: read bob's curve.
    static func heaptrackEnvironment(rawOutput: String) -> [String: String] {
        ["LD_PRELOAD": "/usr/lib/heaptrack/libheaptrack_preload.so", "DUMP_HEAPTRACK_OUTPUT": rawOutput]
    }

    static var minutes: Double {
        Double(ProcessInfo.processInfo.environment["SOTTO_SOAK_MINUTES"] ?? "") ?? 60
    }

    /// The idle window of the short profile, and of each gap in the full one.
    var idleSeconds: Double {
        if let set = Double(ProcessInfo.processInfo.environment["SOTTO_SOAK_IDLE_SECONDS"] ?? ""), set >= 1 { return set }
        return profile.name == "full" ? 45 : 12
    }
    /// Texts each device sends per round.
    var textsPerRound: Int { profile.name == "full" ? 20 : 3 }
    /// The short profile's rounds: enough for a second half to measure a slope on.
    static let shortRounds = 8

    func run() throws -> Report {
        var report = Report()
        let started = Date()
        let tmp = try TemporaryDirectory(prefix: "soak")
        let alice = try Device.start("alice", in: tmp.path)
        let bob = try Device.start("bob", in: tmp.path)
        if let raw = ProcessInfo.processInfo.environment["SOTTO_SOAK_HEAPTRACK"] {
            alice.stopDaemon()
            try alice.startDaemon(environment: Self.heaptrackEnvironment(rawOutput: raw))
        }
        defer {
            alice.stop()
            bob.stop()
        }
        var figures = [DeviceFigures(name: "alice"), DeviceFigures(name: "bob")]
        let trip = try Self.conversation(creator: alice, joiner: bob, name: "Soak")
        let full = profile.name == "full"
        let endAt = started.addingTimeInterval(full ? Self.minutes * 60 : 0)
        repeat {
            report.rounds += 1
            try Self.round(report.rounds, texts: textsPerRound, trip: trip, alice: alice, bob: bob, report: &report)
            try Self.waitUntilQuiet([alice, bob])
            // The short profile measures one idle window, after its last round; before that,
            // one sample per round for the slope.
            let last = full || report.rounds == Self.shortRounds
            let window = try idleWindow([alice, bob], startedAt: started, figures: &figures, seconds: last ? idleSeconds : 0)
            for index in figures.indices {
                if report.rounds == 1 { figures[index].firstIdleRSSKB = window[index].rssKB }
                figures[index].lastIdleRSSKB = window[index].rssKB
            }
        } while full ? Date() < endAt : report.rounds < Self.shortRounds
        report.devices = figures
        report.seconds = Date().timeIntervalSince(started)
        return report
    }

    /// Texts both ways, a reaction, and a second conversation joined then exploded.
    static func round(_ number: Int, texts: Int, trip: String, alice: Device, bob: Device, report: inout Report) throws {
        for index in 0..<texts {
            _ = try alice.json(["send", trip, "alice \(number).\(index)"])
            _ = try bob.json(["send", trip, "bob \(number).\(index)"])
            report.messagesSent += 2
        }
        let last = "bob \(number).\(texts - 1)"
        try alice.waitUntil("alice has \(last)") { alice.messages(trip).contains { $0["text"] as? String == last } }
        if let id = alice.messages(trip).first(where: { $0["text"] as? String == last })?["id"] as? String {
            _ = try alice.json(["react", trip, id, "👍"])
        }
        let doomed = try conversation(creator: alice, joiner: bob, name: "Doomed \(number)")
        _ = try bob.json(["send", doomed, "before the end"])
        try alice.waitUntil("alice has bob's text in \(doomed)") { !alice.messages(doomed).isEmpty }
        _ = try alice.json(["explode", doomed])
        try bob.waitUntil("bob deleted \(doomed)") { try bob.conversation(doomed) == nil }
        report.exploded += 1
    }

    static func conversation(creator: Device, joiner: Device, name: String) throws -> String {
        guard let id = try creator.json(["new", "--name", name])["conversationId"] as? String,
              let code = try creator.json(["invite", id, "--expires", "1h"])["code"] as? String else {
            throw StressFailure("no conversation or invite code")
        }
        _ = try joiner.json(["join", code, "--profile-name", joiner.name])
        try joiner.waitUntil("\(joiner.name) active in \(name)") { try joiner.conversation(id)?["state"] as? String == "active" }
        try creator.waitUntil("\(creator.name) lists the joiner") { try creator.conversation(id)?["members"] as? Int == 2 }
        return id
    }

    /// Every push delivered, and each daemon's spare inbox prepared again: nothing is left
    /// for the daemons to do but wait.
    static func waitUntilQuiet(_ devices: [Device]) throws {
        for device in devices {
            try device.waitUntil("\(device.name)'s outbox empty", timeoutMs: 60_000) {
                try device.query("SELECT count(*) FROM outbox WHERE state = 'pending'")[0].int64(0) == 0
            }
            try device.waitUntil("\(device.name)'s spare inbox ready", timeoutMs: 60_000) {
                try device.json(["status"])["unusedInboxReady"] as? Bool == true
            }
        }
    }

    /// Samples each daemon once a second for `idleSeconds` while nothing talks to it; keeps
    /// the worst window's figures. Returns the last samples.
    func idleWindow(_ devices: [Device], startedAt: Date, figures: inout [DeviceFigures],
                    seconds: Double) throws -> [ProcessUsage] {
        let pids = try devices.map { device -> Int32 in
            guard let pid = device.daemonPID else { throw StressFailure("\(device.name)'s daemon is not running") }
            return pid
        }
        let first = try pids.map { try ProcessUsage.sample(pid: $0) }
        var last = first
        let windowEnd = Date().addingTimeInterval(seconds)
        while Date() < windowEnd {
            // The idle window is the measurement itself, not a wait for some event.
            Thread.sleep(forTimeInterval: min(1, max(0, windowEnd.timeIntervalSinceNow)))
            last = try pids.map { try ProcessUsage.sample(pid: $0) }
        }
        let minutes = Date().timeIntervalSince(startedAt) / 60
        let sqliteKB = devices.map { device -> Int64 in
            let heap = (try? device.json(["status"]))?["sqliteHeap"] as? [String: Any]
            return ((heap?["usedBytes"] as? NSNumber)?.int64Value ?? -1024) / 1024
        }
        for index in figures.indices {
            figures[index].sqliteKB.append(sqliteKB[index])
            figures[index].curve.append((minutes, last[index].rssKB))
            figures[index].parts.append((last[index].rssAnonKB, last[index].rssFileKB))
            figures[index].threads = last[index].threads
            guard seconds > 0 else { continue }
            let share = last[index].cpuShare(since: first[index])
            if share >= figures[index].idleCPUShare {
                figures[index].idleCPUShare = share
                figures[index].idleCPUTicks = last[index].cpuTicks - first[index].cpuTicks
                figures[index].idleSeconds = last[index].seconds(since: first[index])
            }
            figures[index].idleRSSGrowthKB = max(figures[index].idleRSSGrowthKB, last[index].rssKB - first[index].rssKB)
        }
        return last
    }
}
