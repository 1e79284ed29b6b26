import Foundation
import TestSupport

/// Reads a relay's monitoring endpoints over and over on a thread of its own while a test
/// runs, and keeps everything they ever showed: each connection's name, the users it logged
/// in as and who issued them, its subscriptions (`/connz?state=all&subs=1&auth=1`), and each
/// consumer's configuration (`/jsz`), so a consumer that is deleted before the end (an
/// explode) or a connection that opened and closed between two reads of the end state still
/// counts. The protocol trace (`RelayLinkage`) has every SUB and PUB; this has what the trace
/// does not: users and consumer settings.
///
/// ```swift
/// let sampler = try RelayMonitorSampler.start(server: peers.server)
/// … the scenario …
/// let seen = sampler.stop()   // seen.connections[cid]?.users, seen.consumers[name]
/// ```
final class RelayMonitorSampler: @unchecked Sendable {
    struct Connection: Sendable {
        var name = ""
        var users: Set<String> = []
        var issuers: Set<String> = []
        var subscriptions: Set<String> = []
    }

    struct Consumer: Sendable {
        var filter = ""
        /// Every setting but the names (durable, name, filter), as the relay shows it.
        var settings: [String: String] = [:]
    }

    struct Seen: Sendable {
        var connections: [Int: Connection] = [:]
        var consumers: [String: Consumer] = [:]
        var samples = 0
        var failures: [String] = []
    }

    /// The names a consumer's configuration carries; everything else is a setting.
    static let consumerNameKeys: Set<String> = ["name", "durable_name", "filter_subject", "filter_subjects"]

    private let monitor: NatsMonitor
    private let lock = NSLock()
    private let finished = DispatchSemaphore(value: 0)
    private var seen = Seen()
    private var stopping = false

    private init(monitor: NatsMonitor) { self.monitor = monitor }

    static func start(server: NatsServer, intervalMs: UInt32 = 200) throws -> RelayMonitorSampler {
        guard let port = server.monitorPort else { throw RelayRigFailure("the server has no monitoring port") }
        let sampler = RelayMonitorSampler(monitor: NatsMonitor(port: port))
        let thread = Thread {
            while !sampler.isStopping {
                sampler.sample()
                usleep(intervalMs * 1_000)  // the polling interval, not a synchronization
            }
            sampler.sample()
            sampler.finished.signal()
        }
        thread.start()
        return sampler
    }

    /// Stops after one last read and returns everything seen; again, only returns it.
    func stop() -> Seen {
        let first = lock.withLock { () -> Bool in
            defer { stopping = true }
            return !stopping
        }
        if first { finished.wait() }
        return lock.withLock { seen }
    }

    private var isStopping: Bool { lock.withLock { stopping } }

    private func sample() {
        do {
            let connz = try monitor.json("/connz?state=all&subs=1&auth=1&limit=100000")
            let jsz = try monitor.json("/jsz?accounts=true&streams=true&consumers=true&config=true")
            lock.withLock {
                seen.samples += 1
                for entry in connz["connections"] as? [[String: Any]] ?? [] {
                    guard let cid = entry["cid"] as? Int else { continue }
                    var connection = seen.connections[cid] ?? Connection()
                    connection.name = entry["name"] as? String ?? ""
                    if let user = entry["authorized_user"] as? String, !user.isEmpty { connection.users.insert(user) }
                    if let issuer = entry["issuer_key"] as? String, !issuer.isEmpty { connection.issuers.insert(issuer) }
                    connection.subscriptions.formUnion(entry["subscriptions_list"] as? [String] ?? [])
                    seen.connections[cid] = connection
                }
                for account in jsz["account_details"] as? [[String: Any]] ?? [] {
                    for stream in account["stream_detail"] as? [[String: Any]] ?? [] {
                        for entry in stream["consumer_detail"] as? [[String: Any]] ?? [] {
                            guard let name = entry["name"] as? String else { continue }
                            let config = entry["config"] as? [String: Any] ?? [:]
                            var consumer = Consumer(filter: config["filter_subject"] as? String ?? "")
                            for (key, value) in config where !Self.consumerNameKeys.contains(key) {
                                consumer.settings[key] = "\(value)"
                            }
                            seen.consumers[name] = consumer
                        }
                    }
                }
            }
        } catch {
            lock.withLock { seen.failures.append("\(error)") }
        }
    }
}
