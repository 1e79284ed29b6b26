@testable import DaemonCore
import Testing

@Suite("IndexedMinHeap")
struct IndexedMinHeapTests {
    /// Random upserts, removals and pops against a dictionary reference.
    @Test func matchesAReference() {
        var heap = IndexedMinHeap<Int, Int>()
        var reference: [Int: Int] = [:]
        var rng = SplitMix(seed: 42)
        for _ in 0..<5_000 {
            let key = Int(rng.next() % 200)
            switch rng.next() % 4 {
            case 0, 1:
                let priority = Int(rng.next() % 10_000) * 1_000 + key   // unique priorities
                heap.upsert(key, priority: priority)
                reference[key] = priority
            case 2:
                #expect(heap.remove(key) == reference.removeValue(forKey: key))
            default:
                let expected = reference.min { $0.value < $1.value }
                let popped = heap.popMin()
                #expect(popped?.key == expected?.key)
                if let key = expected?.key { reference[key] = nil }
            }
            #expect(heap.count == reference.count)
        }
    }
}

struct SplitMix {
    var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
