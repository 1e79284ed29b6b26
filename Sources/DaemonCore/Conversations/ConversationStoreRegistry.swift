/// The conversation stores of awake conversations: one is created when a conversation wakes
/// and dropped when it sleeps. Looking up a sleeping
/// conversation returns nil rather than creating a store behind the inbox LRU's back.
///
/// ```swift
/// let registry = ConversationStoreRegistry()
/// let store = try await registry.open("c1") { try readHistory("c1") }   // on wake
/// await registry.store(for: "c1")?.append(message)
/// await registry.drop("c1")                                              // on sleep
/// ```
public actor ConversationStoreRegistry {
    private var stores: [String: ConversationStore] = [:]
    public nonisolated let cap: Int

    public init(cap: Int = ConversationStore.defaultCap) {
        self.cap = cap
    }

    /// The store of an awake conversation, or nil.
    public func store(for conversationId: String) -> ConversationStore? { stores[conversationId] }

    public var openConversationIds: [String] { stores.keys.sorted() }

    /// Creates the store from its history, or returns the one already open (history ignored).
    public func open(_ conversationId: String, history: [TimelineMessage] = [],
                     readMarker: TimelinePosition? = nil) throws(ConversationStoreError) -> ConversationStore {
        if let existing = stores[conversationId] { return existing }
        let store = try ConversationStore(conversationId: conversationId, cap: cap,
                                          history: history, readMarker: readMarker)
        stores[conversationId] = store
        return store
    }

    /// Creates the store from the history `load` reads, or returns the one already open
    /// (`load` not called). `load` runs on this actor, between the lookup and the insert, with
    /// no suspension: a writer that commits a message and then finds no store here (and so
    /// appends nothing) has committed before `load` reads, so the history holds its message;
    /// one that looks after the insert finds the store and appends. Reading the history
    /// before calling ``open(_:history:readMarker:)`` leaves a window where both miss it.
    public func open(_ conversationId: String,
                     loading load: () throws -> [TimelineMessage]) throws -> ConversationStore {
        if let existing = stores[conversationId] { return existing }
        return try open(conversationId, history: try load())
    }

    /// Forgets the store. Returns false if it was not open.
    @discardableResult
    public func drop(_ conversationId: String) -> Bool {
        stores.removeValue(forKey: conversationId) != nil
    }
}
