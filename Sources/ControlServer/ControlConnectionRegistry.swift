import ControlProtocol
import DaemonLogging
import NIOCore

/// Every connection the control socket serves, on its one event loop (only that loop's
/// thread touches it): how many there are against `maxConnections`, which have never sent a
/// request (the oldest of those is evicted to make room), the shared budget for unfinished
/// lines, and the figures `sotto status` shows.
///
/// ```swift
/// switch registry.admit() {
/// case .serve: registry.register(connection) { channelHandler.stop(context: context) }
/// case .refuse(let error): try pipeline.addHandler(ControlRefusalHandler(error))
/// }
/// ```
final class ControlConnectionRegistry {
    struct Entry {
        let connection: ControlConnection
        /// Asks its handler to finish the request in flight, write the replies and close.
        let stop: () -> Void
        /// It completed a request (a CLI mid-session, a `watch` subscriber): never evicted.
        var known = false
        var share = ControlConnectionBudget.Share()
    }

    enum Admission {
        case serve
        case refuse(JSONRPC.ErrorObject)
    }

    let limits: ControlLimits
    let stats: ControlStats
    /// `limits.maxConnections`, lowered for good when the process ran out of descriptors.
    private(set) var maxConnections: Int
    private var entries: [UInt64: Entry] = [:]
    /// Serials in accept order; known or closed ones are skipped (and dropped) when met.
    private var strangers = CircularBuffer<UInt64>()
    private var budget: ControlConnectionBudget
    private var nextSerial: UInt64 = 0
    /// Fulfilled once `entries` is empty after `closeAll` (graceful stop).
    private var drained: EventLoopPromise<Void>?

    /// File descriptors left to the rest of the daemon once the socket met EMFILE.
    static let fileLimitHeadroom = 64

    init(limits: ControlLimits, stats: ControlStats) {
        self.limits = limits
        self.stats = stats
        self.maxConnections = limits.maxConnections
        self.budget = ControlConnectionBudget(smallBufferBytes: limits.smallBufferBytes,
                                              sharedBufferBytes: limits.sharedBufferBytes)
        stats.update { $0.maxConnections = limits.maxConnections }
    }

    var count: Int { entries.count }

    // MARK: - Admitting

    /// Whether a new client is served: at the bound the oldest connection that never sent a
    /// request is evicted to make room; if every one has, the newcomer is refused.
    func admit() -> Admission {
        if entries.count >= maxConnections, !evictOldestStranger() {
            return .refuse(.unavailable("daemon busy: \(entries.count) control connections open; try again"))
        }
        return .serve
    }

    func makeSerial() -> UInt64 {
        nextSerial += 1
        return nextSerial
    }

    func register(_ connection: ControlConnection, stop: @escaping () -> Void) {
        entries[connection.serial] = Entry(connection: connection, stop: stop)
        strangers.append(connection.serial)
        if strangers.count > 2 * max(maxConnections, entries.count) {
            var kept = CircularBuffer<UInt64>(initialCapacity: entries.count)
            for serial in strangers where entries[serial]?.known == false { kept.append(serial) }
            strangers = kept
        }
        publish()
    }

    /// The connection sent a valid request: it is in use and never evicted.
    func markKnown(_ serial: UInt64) {
        entries[serial]?.known = true
    }

    func remove(_ serial: UInt64) {
        guard var entry = entries.removeValue(forKey: serial) else { return }
        budget.update(&entry.share, holding: 0)
        publish()
        if entries.isEmpty, let drained {
            self.drained = nil
            drained.succeed()
        }
    }

    func noteRefused() {
        stats.update { $0.refused += 1 }
    }

    // MARK: - Buffered input

    /// Records what `serial` holds of unfinished input. False when the shared pool is over
    /// and this connection is one of those holding more than their free part.
    @discardableResult
    func hold(_ bytes: Int, for serial: UInt64) -> Bool {
        guard var entry = entries[serial] else { return true }
        let fits = budget.update(&entry.share, holding: bytes)
        entries[serial] = entry
        stats.update { $0.bufferedBytes = budget.heldBytes }
        return fits
    }

    // MARK: - Eviction

    /// Closes the oldest connection that has not sent a request, with a busy line. False
    /// when every connection has (they are all in use).
    @discardableResult
    func evictOldestStranger() -> Bool {
        while let serial = strangers.popFirst() {
            guard let entry = entries[serial], !entry.known else { continue }
            stats.update { $0.evicted += 1 }
            entry.connection.sendFinalLine(
                JSONRPC.errorLine(id: nil, .unavailable("daemon busy: idle connection closed to make room; try again")))
            remove(serial)
            return true
        }
        return false
    }

    /// Out of descriptors: serve fewer connections from now on, leaving the rest of the
    /// daemon (database, keystore, pushes) room, and evict idle ones down to that. False when
    /// none could be evicted.
    func lowerMaxConnections() -> Bool {
        let lowered = max(16, entries.count - Self.fileLimitHeadroom)
        if lowered < maxConnections {
            DaemonLog.warning("out of file descriptors with \(entries.count) control connections; serving at most \(lowered)")
            maxConnections = lowered
            stats.update { $0.maxConnections = lowered }
        }
        var evicted = false
        while entries.count >= maxConnections, evictOldestStranger() { evicted = true }
        return evicted
    }

    // MARK: - Stopping

    /// Every connection finishes the request it is in, writes its replies and closes; the
    /// future completes when none is left.
    func closeAll(on eventLoop: any EventLoop) -> EventLoopFuture<Void> {
        guard !entries.isEmpty else { return eventLoop.makeSucceededVoidFuture() }
        let promise = drained ?? eventLoop.makePromise(of: Void.self)
        drained = promise
        for entry in entries.values { entry.stop() }
        return promise.futureResult
    }

    /// The connections still open (to close them without waiting any longer).
    var openConnections: [ControlConnection] { entries.values.map(\.connection) }

    private func publish() {
        let open = entries.count
        let held = budget.heldBytes
        stats.update {
            $0.connections = open
            $0.bufferedBytes = held
        }
    }
}
