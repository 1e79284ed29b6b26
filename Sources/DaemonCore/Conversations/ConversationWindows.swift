/// The conversation windows of awake conversations: one is created when a conversation wakes
/// and dropped when it sleeps. Looking up a sleeping
/// conversation returns nil rather than creating a window behind the inbox LRU's back.
///
/// ```swift
/// let windows = ConversationWindows()
/// let window = try await windows.open("c1") { try readHistory("c1") }   // on wake
/// await windows.window(for: "c1")?.append(message)
/// await windows.drop("c1")                                              // on sleep
/// ```
public actor ConversationWindows {
    private var windows: [String: ConversationWindow] = [:]
    public nonisolated let cap: Int

    public init(cap: Int = ConversationWindow.defaultCap) {
        self.cap = cap
    }

    /// The window of an awake conversation, or nil.
    public func window(for conversationId: String) -> ConversationWindow? { windows[conversationId] }

    public var openConversationIds: [String] { windows.keys.sorted() }

    /// Creates the store from its history, or returns the one already open (history ignored).
    public func open(_ conversationId: String, history: [TimelineMessage] = []) throws(ConversationWindowError) -> ConversationWindow {
        if let existing = windows[conversationId] { return existing }
        let store = try ConversationWindow(conversationId: conversationId, cap: cap,
                                          history: history)
        windows[conversationId] = store
        return store
    }

    /// Creates the store from the history `load` reads, or returns the one already open
    /// (`load` not called). `load` runs on this actor, between the lookup and the insert, with
    /// no suspension: a writer that commits a message and then finds no store here (and so
    /// appends nothing) has committed before `load` reads, so the history holds its message;
    /// one that looks after the insert finds the store and appends. Reading the history
    /// before calling ``open(_:history:)`` leaves a window where both miss it.
    public func open(_ conversationId: String,
                     loading load: () throws -> [TimelineMessage]) throws -> ConversationWindow {
        if let existing = windows[conversationId] { return existing }
        return try open(conversationId, history: try load())
    }

    /// Forgets the store. Returns false if it was not open.
    @discardableResult
    public func drop(_ conversationId: String) -> Bool {
        windows.removeValue(forKey: conversationId) != nil
    }
}
