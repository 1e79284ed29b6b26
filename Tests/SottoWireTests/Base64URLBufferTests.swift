import SottoWire
import Testing

/// `Base64URL.append` and `decode(_:appendingTo:)`, the bulk forms `sotto save` uses
/// (docs/adr/0077): the same text and the same refusals as `encode` and `decode`.
@Suite("base64url between buffers")
struct Base64URLBufferTests {
    @Test("append writes what encode writes, and decode(appendingTo:) reads it back, for every length 0 … 300")
    func sameAsTheStringForms() {
        var generator = SystemRandomNumberGenerator()
        for count in 0...300 {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            var out: [UInt8] = [0x41]
            bytes.withUnsafeBytes { Base64URL.append($0, to: &out) }
            #expect(out == [0x41] + Array(Base64URL.encode(bytes).utf8), "\(count)")
            #expect(out.count - 1 == Base64URL.encodedCount(count))
            var back: [UInt8] = [9]
            let ok = Array(out.dropFirst()).withUnsafeBytes { Base64URL.decode($0, appendingTo: &back) }
            #expect(ok && back == [9] + bytes, "\(count)")
        }
    }

    @Test("decode(appendingTo:) refuses what decode refuses, leaving the output as it was")
    func refusals() {
        for text in ["A", "A+", "a/bc", "AB", "AAB", "AA==", "AA A", "\u{0}AAA", "AAAAA"] {
            var out: [UInt8] = [7]
            let ok = Array(text.utf8).withUnsafeBytes { Base64URL.decode($0, appendingTo: &out) }
            #expect(!ok && out == [7], "\(text)")
            #expect(Base64URL.decode(text) == nil || text.hasSuffix("=="), "\(text)")
        }
    }
}
