/// A binary min-heap whose elements are addressable by key, so a priority can be changed or an
/// element removed in O(log n) without searching. The inbox LRU keeps its evictable
/// inboxes here, ordered by recency, so picking the least recently active one never sorts.
///
/// ```swift
/// var heap = IndexedMinHeap<String, Int>()
/// heap.upsert("a", priority: 5)
/// heap.upsert("b", priority: 3)
/// heap.popMin()   // ("b", 3)
/// ```
struct IndexedMinHeap<Key: Hashable, Priority: Comparable> {
    private var elements: [(key: Key, priority: Priority)] = []
    private var positions: [Key: Int] = [:]

    var count: Int { elements.count }
    var isEmpty: Bool { elements.isEmpty }
    var min: (key: Key, priority: Priority)? { elements.first }

    func contains(_ key: Key) -> Bool { positions[key] != nil }
    func priority(of key: Key) -> Priority? { positions[key].map { elements[$0].priority } }

    // MARK: Mutations, each O(log n)

    /// Inserts `key`, or moves it to its new place if it is already present.
    mutating func upsert(_ key: Key, priority: Priority) {
        if let index = positions[key] {
            let old = elements[index].priority
            elements[index].priority = priority
            if priority < old { siftUp(index) } else { siftDown(index) }
        } else {
            elements.append((key, priority))
            positions[key] = elements.count - 1
            siftUp(elements.count - 1)
        }
    }

    @discardableResult
    mutating func remove(_ key: Key) -> Priority? {
        guard let index = positions[key] else { return nil }
        let removed = elements[index].priority
        let last = elements.count - 1
        if index != last {
            swapAt(index, last)
        }
        elements.removeLast()
        positions[key] = nil
        if index < elements.count {
            siftDown(index)
            siftUp(index)
        }
        return removed
    }

    @discardableResult
    mutating func popMin() -> (key: Key, priority: Priority)? {
        guard let first = elements.first else { return nil }
        remove(first.key)
        return first
    }

    mutating func removeAll() {
        elements.removeAll()
        positions.removeAll()
    }

    // MARK: Heap order

    private mutating func siftUp(_ start: Int) {
        var child = start
        while child > 0 {
            let parent = (child - 1) / 2
            guard elements[child].priority < elements[parent].priority else { return }
            swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ start: Int) {
        var parent = start
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < elements.count, elements[left].priority < elements[smallest].priority { smallest = left }
            if right < elements.count, elements[right].priority < elements[smallest].priority { smallest = right }
            guard smallest != parent else { return }
            swapAt(parent, smallest)
            parent = smallest
        }
    }

    private mutating func swapAt(_ i: Int, _ j: Int) {
        elements.swapAt(i, j)
        positions[elements[i].key] = i
        positions[elements[j].key] = j
    }
}
