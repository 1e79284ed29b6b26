/// SplitMix64: a fixed seed makes every failure reproducible (the fuzz and property tests of
/// SottoWire, SottoCrypto and SharedStore share it).
///
/// ```swift
/// var rng = SeededGenerator(state: 0x5077_0dee)
/// let n = Int.random(in: 0..<10, using: &rng)   // the same n on every run
/// ```
public struct SeededGenerator: RandomNumberGenerator {
    public var state: UInt64

    public init(state: UInt64) { self.state = state }

    public mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    // MARK: - Mutated inputs for the parsers' fuzz tests

    /// `input` with zero to three random edits: a bit flipped, a tail cut, a byte inserted
    /// (often a JSON delimiter) or overwritten, or everything replaced by random bytes.
    public mutating func mutate(_ input: [UInt8]) -> [UInt8] {
        var bytes = input
        for _ in 0...Int.random(in: 0...3, using: &self) {
            switch Int.random(in: 0..<5, using: &self) {
            case 0 where !bytes.isEmpty:   // bit flip
                let index = Int.random(in: 0..<bytes.count, using: &self)
                bytes[index] ^= 1 << UInt8.random(in: 0..<8, using: &self)
            case 1 where !bytes.isEmpty:   // truncation
                bytes.removeLast(Int.random(in: 1...bytes.count, using: &self))
            case 2:   // insertion
                let index = Int.random(in: 0...bytes.count, using: &self)
                let pool: [UInt8] = Array("{}[]\",:\\u0d83\u{0}\u{ff}-1e9 ".utf8)
                bytes.insert(Bool.random(using: &self) ? pool.randomElement(using: &self)! : UInt8.random(in: 0...255, using: &self), at: index)
            case 3 where !bytes.isEmpty:   // overwrite a byte
                bytes[Int.random(in: 0..<bytes.count, using: &self)] = UInt8.random(in: 0...255, using: &self)
            default:   // fully random
                bytes = (0..<Int.random(in: 0...64, using: &self)).map { _ in UInt8.random(in: 0...255, using: &self) }
            }
        }
        return bytes
    }
}
