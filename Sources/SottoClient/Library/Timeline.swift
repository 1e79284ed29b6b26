import ControlProtocol
import Dispatch
import Synchronization
import SottoWire

/// One conversation's timeline, as a UI observes it: the latest page of messages, older
/// pages fetched from the daemon on demand (`loadOlder`, never the whole conversation), and
/// the intents that change it (send, reply, react, mark read). What this device sends shows
/// at once as a local echo, `pending`, then with the status the daemon reports as it moves
/// (relayed/sent → delivered, or failed). Updates come from a change feed limited to this
/// conversation, so a change in another conversation never wakes this timeline's observers;
/// a new or changed message is applied from its `change` notification, which carries it,
/// with no `readMessages` round trip; the latest page is read again only when the feed
/// cannot say what changed (a reconnect, a change without its message, one arriving while a
/// read is on its way) (docs/adr/0070);
/// it holds at most `window` messages: paging up past that drops the newest page, which
/// `loadNewer` reads again when the UI scrolls back down (so scrolling through 100,000
/// messages costs the same per page and the same memory as scrolling through 500);
/// while the timeline runs, the daemon counts the conversation open in a client (no desktop
/// notification for it). All I/O runs on the timeline's own queue and feed thread.
///
/// ```swift
/// let timeline = Timeline(conversation: "3fa2…", socketPath: path)
/// let observation = timeline.observe { snapshot in draw(snapshot.items) }
/// timeline.start()
/// timeline.send("train at 9?")
/// timeline.react(to: snapshot.items[0].id, emoji: "👍")
/// timeline.loadOlder()
/// if timeline.current.hasNewer { timeline.loadNewer() }   // scrolling back down
/// ```
public final class Timeline: Sendable {
    public let conversation: String
    public let pageSize: Int
    /// The most messages held at once (at least two pages).
    public let window: Int
    private let channel: RequestChannel
    private let queue = DispatchQueue(label: "sotto.timeline")
    private let observers = Observers<TimelineSnapshot>()
    private let feed: Mutex<ChangeFeedSession?> = Mutex(nil)

    private struct Echo {
        var localId: String
        var text: String
        var replyTo: String?
        var createdAtMs: Int64
        var messageId: String?
        var error: String?
    }
    private struct State {
        var snapshot: TimelineSnapshot
        var confirmed: [MessageInfo] = []
        var echoes: [Echo] = []
        var nextEcho = 0
        var refreshing = false
        var refreshAgain = false
        var unreadAtOpen: Int64 = 0
        var loadedOnce = false
        /// Messages the feed named as inserted or changed since the last refresh began; nil
        /// when a refresh must read the whole latest page (a reconnect, a change without an id).
        var changedIds: Set<String>? = []
        /// The pages dropped from the newest end, newest first: the id of each one's oldest
        /// message. The page on top is read again with `before` = the one under it (nil
        /// for the newest: the latest page). Empty when the latest page is loaded.
        var droppedNewer: [String] = []
        /// A message changed while the latest page was not loaded: `loadNewer` reads it again
        /// once it reaches it, when the change may have come after its read.
        var changedWhileBack = false
        var markingRead = false
        var markReadAgain = false
        /// `readMessages` calls made (``Timeline/readCalls``).
        var readCalls = 0
    }
    private let state: Mutex<State>

    /// `unreadAtOpen`: the unread count the list showed, to place the "new" marker.
    /// `window`: the most messages held (default 10 pages); `Int.max` holds every page read.
    public init(conversation: String, socketPath: String, pageSize: Int = 50, window: Int = 500, unreadAtOpen: Int64 = 0) {
        self.conversation = conversation
        self.pageSize = pageSize
        self.window = max(window, 2 * pageSize)
        channel = RequestChannel(socketPath: socketPath)
        var initial = State(snapshot: TimelineSnapshot(conversationId: conversation))
        initial.unreadAtOpen = unreadAtOpen
        state = Mutex(initial)
    }

    public var current: TimelineSnapshot { state.withLock { $0.snapshot } }

    /// How many `readMessages` calls this timeline made: a page on opening, one per page up
    /// or down, and a read of the latest page only when the feed could not say what changed
    /// (tests and benchmarks assert that a new message costs none).
    public var readCalls: Int { state.withLock { $0.readCalls } }

    /// True while the latest page is being read (on opening, after a reconnect, or for a
    /// change the feed could not apply); tests wait for it to end before counting reads.
    public var isReadingLatest: Bool { state.withLock { $0.refreshing } }

    /// `handler` gets every new snapshot of this conversation, on the timeline's queue.
    public func observe(_ handler: @escaping @Sendable (TimelineSnapshot) -> Void) -> Observation { observers.add(handler) }

    /// Loads the latest page (marking it read) and follows this conversation's changes.
    public func start() {
        let session = ChangeFeedSession(socketPath: channel.socketPath, conversation: conversation) { [weak self] event in
            self?.handle(event)
        }
        feed.withLock { $0 = session }
        // The first page is read when the feed is connected (`handle(.connected)`), so
        // nothing that happens in between is missed, and opening reads it once.
        session.start()
    }

    /// Stops following: the conversation is no longer open in this client.
    public func stop() {
        feed.withLock { $0 }?.stop()
        queue.async { [channel] in channel.close() }
    }

    // MARK: Intents

    /// Sends `text` (a reply when `replyTo` names a message); it shows at once as a pending echo.
    public func send(_ text: String, replyTo: String? = nil) {
        let localId = state.withLock { state -> String in
            state.nextEcho += 1
            let id = "local-\(state.nextEcho)"
            state.echoes.append(Echo(localId: id, text: text, replyTo: replyTo, createdAtMs: WallClock.nowMs()))
            return id
        }
        publish()
        queue.async { [self] in
            let outcome: Result<SentMessage, ControlClient.Failure>
            do throws(ControlClient.Failure) {
                outcome = .success(try channel.call(ClientRequests.send(conversation: conversation, text: text, replyTo: replyTo)))
            } catch let failure {
                outcome = .failure(failure)
            }
            state.withLock { state in
                guard let index = state.echoes.firstIndex(where: { $0.localId == localId }) else { return }
                switch outcome {
                case .success(let sent): state.echoes[index].messageId = state.echoes[index].messageId ?? sent.messageId
                case .failure(let failure): state.echoes[index].error = failure.description
                }
            }
            // The stored message comes with its `messageInserted` change, which the echo adopts.
            publish()
        }
    }

    /// Adds (or with `remove` takes back) a reaction to the message `messageId`.
    public func react(to messageId: String, emoji: String, remove: Bool = false) {
        queue.async { [self] in
            do throws(ControlClient.Failure) {
                _ = try channel.call(ClientRequests.react(conversation: conversation, message: messageId, emoji: emoji, remove: remove))
            } catch let failure {
                setProblem(failure.description)
            }
        }
    }

    /// Marks the conversation read on this device.
    public func markRead() {
        queue.async { [self] in
            do throws(ControlClient.Failure) { _ = try channel.call(ClientRequests.markRead(conversation: conversation)) } catch let failure { setProblem(failure.description) }
        }
    }

    /// Fetches the page of messages just older than the oldest loaded one (nothing when the
    /// start is loaded or a page is on its way).
    public func loadOlder() {
        let oldest = state.withLock { state -> String?? in
            guard state.snapshot.hasOlder, !state.snapshot.loadingOlder, !state.snapshot.loadingNewer, state.loadedOnce else { return .none }
            state.snapshot.loadingOlder = true
            return .some(state.confirmed.first?.id)
        }
        guard let oldest else { return }
        readPage(before: oldest, loading: \.loadingOlder) { [self] state, messages in
            if messages.count < pageSize || oldest == nil { state.snapshot.hasOlder = false }
            Self.merge(messages, into: &state)
            dropNewest(&state)
            return false
        }
    }

    /// Reads again the page just newer than the newest loaded one, when paging up dropped
    /// it (`hasNewer`); the oldest page goes when the window is full. The newest dropped page
    /// is the latest page: reading it makes the timeline follow new messages again.
    public func loadNewer() {
        let cursor = state.withLock { state -> String?? in
            guard state.snapshot.hasNewer, !state.snapshot.loadingOlder, !state.snapshot.loadingNewer,
                  !state.droppedNewer.isEmpty else { return .none }
            state.snapshot.loadingNewer = true
            if state.droppedNewer.count == 1 { state.changedWhileBack = false }   // this read sees what came before it
            return .some(state.droppedNewer.count >= 2 ? state.droppedNewer[state.droppedNewer.count - 2] : nil)
        }
        guard let cursor else { return }
        readPage(before: cursor, loading: \.loadingNewer) { [self] state, messages in
            state.droppedNewer.removeLast()
            state.snapshot.hasNewer = !state.droppedNewer.isEmpty
            if !state.snapshot.hasNewer { state.snapshot.newerArrived = 0 }
            Self.merge(messages, into: &state)
            dropOldest(&state)
            // Back at the latest page: a change told while its read was on the way may be newer than it.
            guard state.droppedNewer.isEmpty, state.changedWhileBack else { return false }
            state.changedWhileBack = false
            state.changedIds = nil
            return true
        }
    }

    /// Reads the page before `cursor` (the latest page for nil) on the timeline's queue, then
    /// clears `loading` and either applies the page under the lock or records the failure;
    /// publishes before and after, and reads the latest page again when `apply` says so.
    /// What `loadOlder` and `loadNewer` share.
    private func readPage(before cursor: String?, loading: any WritableKeyPath<TimelineSnapshot, Bool> & Sendable,
                          apply: @escaping @Sendable (inout State, [MessageInfo]) -> Bool) {
        publish()
        queue.async { [self] in
            var refresh = false
            do throws(ControlClient.Failure) {
                let page = try readMessages(limit: pageSize, before: cursor)
                state.withLock { state in
                    state.snapshot[keyPath: loading] = false
                    refresh = apply(&state, page.messages)
                }
            } catch let failure {
                state.withLock { state in
                    state.snapshot[keyPath: loading] = false
                    state.snapshot.problem = failure.description
                }
            }
            publish()
            if refresh { refreshLatest() }
        }
    }

    /// One `readMessages` call, counted.
    private func readMessages(limit: Int, before cursor: String? = nil) throws(ControlClient.Failure) -> MessageList {
        state.withLock { $0.readCalls += 1 }
        return try channel.call(ClientRequests.readPage(conversation: conversation, limit: limit, before: cursor))
    }

    /// Back to the latest page at once (sending from a timeline scrolled far back): drops
    /// what is loaded and reads the latest page.
    public func showLatest() {
        let dropped = state.withLock { state -> Bool in
            guard !state.droppedNewer.isEmpty else { return false }
            state.droppedNewer = []
            state.confirmed = []
            state.changedIds = nil
            state.snapshot.hasNewer = false
            state.snapshot.newerArrived = 0
            state.snapshot.hasOlder = true
            return true
        }
        if dropped {
            publish()
            refreshLatest()
        }
    }

    /// Past the window after a page up: drops the newest pages (read again by `loadNewer`).
    private func dropNewest(_ state: inout State) {
        while state.confirmed.count > window {
            let cut = state.confirmed.count - pageSize
            state.droppedNewer.append(state.confirmed[cut].id)
            state.confirmed.removeSubrange(cut...)
            state.snapshot.hasNewer = true
        }
    }

    /// Past the window after a page down: drops the oldest (read again by `loadOlder`).
    private func dropOldest(_ state: inout State) {
        guard state.confirmed.count > window else { return }
        state.confirmed.removeFirst(state.confirmed.count - window)
        state.snapshot.hasOlder = true
    }

    // MARK: Loading the latest page

    /// Reads the latest page again (coalesced), after a change or a reconnect.
    private func refreshLatest() {
        let startNow = state.withLock { state -> Bool in
            if state.refreshing {
                state.refreshAgain = true
                return false
            }
            state.refreshing = true
            return true
        }
        if startNow { queue.async { [self] in runRefreshes() } }
    }

    /// How many of the latest messages a refresh reads first when the feed named what
    /// changed: a new message is almost always among the newest, so most refreshes read
    /// this few (the daemon annotates and encodes fewer, the UI decodes fewer); a refresh
    /// whose named messages are not all in it reads the whole latest page, as the first does.
    static let quickRefresh = 8

    private func runRefreshes() {
        while true {
            do throws(ControlClient.Failure) {
                let (changed, loadedOnce) = state.withLock { state -> (Set<String>?, Bool) in
                    defer { state.changedIds = [] }
                    return (state.changedIds, state.loadedOnce)
                }
                let quick = loadedOnce && changed != nil && Self.quickRefresh < pageSize
                var page = try readMessages(limit: quick ? Self.quickRefresh : pageSize)
                if quick, let changed, !changed.isSubset(of: Set(page.messages.map(\.id))) {
                    page = try readMessages(limit: pageSize)
                }
                state.withLock { state in
                    if !state.loadedOnce {
                        state.loadedOnce = true
                        if page.messages.count < pageSize { state.snapshot.hasOlder = false }
                        let unread = Int(min(state.unreadAtOpen, Int64(page.messages.count)))
                        if unread > 0 { state.snapshot.firstUnreadId = page.messages[page.messages.count - unread].id }
                    }
                    state.snapshot.connected = true
                    state.snapshot.problem = nil
                    // Scrolled back past the window (`showLatest` is on its way): the latest
                    // page is not next to what is loaded; `loadNewer` reaches it page by page.
                    if state.droppedNewer.isEmpty {
                        Self.merge(page.messages, into: &state)
                        dropOldest(&state)
                    }
                }
            } catch let failure {
                state.withLock { $0.changedIds = nil }   // the next refresh reads the whole page
                setProblem(failure.description, publishing: false)
            }
            let again = state.withLock { state -> Bool in
                let again = state.refreshAgain
                state.refreshAgain = false
                if !again { state.refreshing = false }
                return again
            }
            publish()
            if !again { return }
        }
    }

    // MARK: The feed

    private func handle(_ event: ChangeFeedSession.Event) {
        switch event {
        case .connected:
            state.withLock { $0.changedIds = nil }
            refreshLatest()   // whatever happened while the connection was down
        case .changes(let changes):
            let relevant = changes.filter { $0.kind == "messageInserted" || $0.kind == "messageStatusChanged" }
            guard !relevant.isEmpty else { return }
            let outcome = state.withLock { state -> FeedOutcome in
                var outcome = FeedOutcome()
                for change in relevant {
                    switch Self.apply(change, to: &state) {
                    case .applied(let incoming):
                        outcome.publish = true
                        outcome.markRead = outcome.markRead || incoming
                    case .nothingShown:
                        continue
                    case .readAgain:
                        if let id = change.entityId { state.changedIds?.insert(id) } else { state.changedIds = nil }
                        outcome.refresh = true
                    }
                }
                // Away from the latest page nothing new shows: counted for a "↓ N new" indicator.
                if !state.droppedNewer.isEmpty {
                    let arrived = relevant.count(where: { $0.kind == "messageInserted" })
                    if arrived > 0 {
                        state.snapshot.newerArrived += arrived
                        outcome.publish = true
                    }
                }
                if outcome.publish { dropOldest(&state) }
                return outcome
            }
            if outcome.publish { publish() }
            if outcome.refresh { refreshLatest() }
            if outcome.markRead { markShownRead() }
        case .disconnected(let reason):
            state.withLock { state in
                state.snapshot.connected = false
                state.snapshot.problem = reason
            }
            publish()
        case .refused(let reason):
            setProblem(reason)
        }
    }

    // MARK: Applying a change from its notification

    private struct FeedOutcome {
        var publish = false
        var refresh = false
        var markRead = false
    }

    private enum Applied {
        /// Shown; `incoming`: a message another device sent, now on screen (so read).
        case applied(incoming: Bool)
        /// Nothing loaded shows it: older than the loaded window, or newer while scrolled back.
        case nothingShown
        /// The notification cannot be applied: the latest page is read again.
        case readAgain
    }

    /// Applies one change from what its notification carries, when the loaded window is the
    /// latest page and nothing read is on its way (a page read before the change was committed
    /// could otherwise undo it): an insert is placed by (sentAt, id), a status change replaces
    /// the message it names. Anything else asks for a read.
    private static func apply(_ change: ChangeNotification, to state: inout State) -> Applied {
        guard state.droppedNewer.isEmpty else {
            state.changedWhileBack = true
            return .nothingShown
        }
        guard state.loadedOnce, !state.refreshing, let message = change.message, message.id == change.entityId else {
            return .readAgain
        }
        if let index = state.confirmed.firstIndex(where: { $0.id == message.id }) {
            state.confirmed[index] = message
            return .applied(incoming: false)
        }
        guard change.kind == "messageInserted" else { return .nothingShown }   // a status of a message not loaded
        // Older than the oldest loaded while older pages exist: it is history, read with its page.
        if state.snapshot.hasOlder, let oldest = state.confirmed.first,
           (message.sentAtMs, message.id) < (oldest.sentAtMs, oldest.id) {
            return .nothingShown
        }
        merge([message], into: &state)
        return .applied(incoming: !message.outgoing)
    }

    /// Marks the conversation read after a message from another device was shown, as reading
    /// the latest page does; coalesced (one call on its way, one more after it at most).
    private func markShownRead() {
        let startNow = state.withLock { state -> Bool in
            if state.markingRead {
                state.markReadAgain = true
                return false
            }
            state.markingRead = true
            return true
        }
        guard startNow else { return }
        queue.async { [self] in
            repeat {
                do throws(ControlClient.Failure) {
                    _ = try channel.call(ClientRequests.markRead(conversation: conversation))
                } catch let failure {
                    setProblem(failure.description)
                }
            } while state.withLock { state -> Bool in
                let again = state.markReadAgain
                state.markReadAgain = false
                if !again { state.markingRead = false }
                return again
            }
        }
    }

    // MARK: State

    private func setProblem(_ problem: String, publishing: Bool = true) {
        state.withLock { $0.snapshot.problem = problem }
        if publishing { publish() }
    }

    /// Upserts `messages` by id, keeps the daemon's order (sentAt, id), and lets an echo
    /// adopt the stored message it became (same text, outgoing, not yet adopted).
    private static func merge(_ messages: [MessageInfo], into state: inout State) {
        // A page from `loadOlder` or `loadNewer` lies wholly before or after what is loaded:
        // it is joined on without indexing or sorting the window (a page up costs a page).
        func key(_ message: MessageInfo) -> (Int64, String) { (message.sentAtMs, message.id) }
        if state.echoes.isEmpty, let first = messages.first, let last = messages.last,
           zip(messages, messages.dropFirst()).allSatisfy({ key($0) < key($1) }) {
            if let oldest = state.confirmed.first, key(last) < key(oldest) {
                state.confirmed.insert(contentsOf: messages, at: 0)
                return
            }
            if let newest = state.confirmed.last, key(newest) < key(first) {
                state.confirmed.append(contentsOf: messages)
                return
            }
        }
        var indexById: [String: Int] = [:]
        for (index, message) in state.confirmed.enumerated() { indexById[message.id] = index }
        var appended = false
        for message in messages {
            if let index = indexById[message.id] {
                state.confirmed[index] = message
                continue
            }
            state.confirmed.append(message)
            indexById[message.id] = state.confirmed.count - 1
            appended = true
            if message.outgoing, !state.echoes.contains(where: { $0.messageId == message.id }),
               let echo = state.echoes.firstIndex(where: { $0.messageId == nil && $0.error == nil && $0.text == message.text }) {
                state.echoes[echo].messageId = message.id
            }
        }
        if appended {
            state.confirmed.sort { ($0.sentAtMs, $0.id) < ($1.sentAtMs, $1.id) }
        }
        guard !state.echoes.isEmpty else { return }
        let confirmedIds = Set(state.confirmed.map(\.id))
        state.echoes.removeAll { echo in echo.messageId.map(confirmedIds.contains) ?? false }
    }

    private func publish() {
        let snapshot = state.withLock { state -> TimelineSnapshot in
            var items = state.confirmed.map { TimelineItem(message: $0) }
            for echo in state.echoes {
                let message = MessageInfo(id: echo.messageId ?? echo.localId, conversationId: conversation, senderInboxId: "",
                                          sentAtMs: echo.createdAtMs, contentType: echo.replyTo == nil ? "xmtp.org/text:1.0" : "xmtp.org/reply:1.0",
                                          text: echo.text, outgoing: true, deliveryStatus: "pending", referenceId: echo.replyTo)
                items.append(TimelineItem(message: message, isLocalEcho: true, sendError: echo.error))
            }
            state.snapshot.items = items
            state.snapshot.generation += 1
            return state.snapshot
        }
        observers.notify(snapshot)
    }
}
