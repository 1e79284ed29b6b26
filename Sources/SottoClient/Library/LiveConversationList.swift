import ControlProtocol
import Dispatch
import Synchronization

/// Every conversation of this device, kept current from the daemon's change feed: name,
/// unread count, last message, state, awake, muted, explosion time, in the order `sotto ls`
/// gives them (most recently active first). All I/O runs on the list's own queue and feed
/// thread; `current` and `observe` never wait for the daemon.
///
/// ```swift
/// let list = LiveConversationList(socketPath: runtime.controlSocketPath)
/// let observation = list.observe { snapshot in print(snapshot.conversations.map(\.id)) }
/// list.start()
/// ```
public final class LiveConversationList: Sendable {
    /// What the list holds at one moment.
    ///
    /// ```swift
    /// snapshot.conversations.first?.unread   // the most recently active one's unread count
    /// ```
    public struct Snapshot: Sendable, Equatable {
        public var conversations: [ConversationInfo] = []
        /// False until the first load, and while the daemon is unreachable.
        public var connected = false
        /// Why the last load failed, for a status line.
        public var problem: String?
        /// How many loads have completed (tests wait on it).
        public var generation = 0

        public init() {}

        /// The conversation whose id is `reference` or starts with it, when exactly one does.
        public func find(_ reference: String) -> ConversationInfo? {
            if let exact = conversations.first(where: { $0.id == reference }) { return exact }
            let matches = conversations.filter { $0.id.hasPrefix(reference.lowercased()) }
            return matches.count == 1 ? matches[0] : nil
        }
    }

    private let channel: RequestChannel
    private let queue = DispatchQueue(label: "sotto.conversation-list")
    private let observers = Observers<Snapshot>()
    private let state = Mutex<(snapshot: Snapshot, loading: Bool, dirty: Bool)>((Snapshot(), false, false))
    private let feed: Mutex<ChangeFeedSession?> = Mutex(nil)

    public init(socketPath: String) { channel = RequestChannel(socketPath: socketPath) }

    public var current: Snapshot { state.withLock { $0.snapshot } }

    /// `handler` gets every new snapshot, on the list's queue.
    public func observe(_ handler: @escaping @Sendable (Snapshot) -> Void) -> Observation { observers.add(handler) }

    /// Follows the change feed and loads the list once it is connected (so no change falls
    /// between the load and the subscription, and starting costs one load).
    public func start() {
        let session = ChangeFeedSession(socketPath: channel.socketPath) { [weak self] event in self?.handle(event) }
        feed.withLock { $0 = session }
        session.start()
    }

    /// Stops following; never waits for the daemon (a request in flight finishes on the queue).
    public func stop() {
        feed.withLock { $0 }?.stop()
        queue.async { [channel] in channel.close() }
    }

    /// Loads the list again (coalesced: requests while a load runs make one more load after it).
    public func refresh() {
        let startNow = state.withLock { state -> Bool in
            if state.loading {
                state.dirty = true
                return false
            }
            state.loading = true
            return true
        }
        if startNow { queue.async { [self] in load() } }
    }

    // MARK: Loading

    private func load() {
        while true {
            let result: Result<ControlProtocol.ConversationList, ControlClient.Failure>
            do throws(ControlClient.Failure) {
                result = .success(try channel.call(ClientRequests.listConversations()))
            } catch let failure {
                result = .failure(failure)
            }
            let (snapshot, again) = state.withLock { state -> (Snapshot, Bool) in
                switch result {
                case .success(let list):
                    state.snapshot.conversations = list.conversations
                    state.snapshot.connected = true
                    state.snapshot.problem = nil
                case .failure(let failure):
                    state.snapshot.connected = false
                    state.snapshot.problem = failure.description
                }
                state.snapshot.generation += 1
                let again = state.dirty
                state.dirty = false
                if !again { state.loading = false }
                return (state.snapshot, again)
            }
            observers.notify(snapshot)
            if !again { return }
        }
    }

    // MARK: The feed

    private func handle(_ event: ChangeFeedSession.Event) {
        switch event {
        case .connected:
            refresh()   // after a reconnect the daemon may have changed anything
        case .changes(let changes):
            if changes.contains(where: { Self.changesTheList($0.kind) }) { refresh() }
        case .disconnected(let reason):
            let snapshot = state.withLock { state -> Snapshot in
                state.snapshot.connected = false
                state.snapshot.problem = reason
                return state.snapshot
            }
            observers.notify(snapshot)
        case .refused:
            break
        }
    }

    /// The kinds that can change a row of the list or its order.
    static func changesTheList(_ kind: String) -> Bool {
        kind != "messageStatusChanged" && kind != "rosterRequested" && kind != "joinRequestReceived"
    }
}
