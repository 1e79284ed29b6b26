/// One at a time per key, in arrival order: a caller takes the key's turn, awaits what it
/// must, and ends the turn; another caller for the same key waits until then (other keys
/// do not). Used where an actor awaits between reading and writing, e.g. numbering an
/// explode decision and committing it (docs/adr/0040).
///
/// ```swift
/// let turns = KeyedTurns()
/// await turns.take(conversationId)
/// // … read, await, write …
/// await turns.end(conversationId)                    // on every path, errors too
/// ```
actor KeyedTurns {
    /// Keys whose turn is taken, with the callers waiting for it.
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    func take(_ key: String) async {
        guard waiting[key] != nil else {
            waiting[key] = []
            return
        }
        await withCheckedContinuation { waiting[key, default: []].append($0) }
    }

    func end(_ key: String) {
        guard var queue = waiting[key], !queue.isEmpty else {
            waiting[key] = nil
            return
        }
        let next = queue.removeFirst()
        waiting[key] = queue
        next.resume()
    }
}
