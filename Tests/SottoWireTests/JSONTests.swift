import SottoWire
import TestSupport
import Testing

@Suite("JSON")
struct JSONTests {
    func parse(_ text: String, depth: Int = 32) throws(JSONError) -> JSONValue {
        try JSONParser.parse(Array(text.utf8), limits: .init(maxBytes: 1 << 16, maxDepth: depth))
    }

    @Test func integersStayExact() throws {
        #expect(try parse("9007199254740993") == .int(9_007_199_254_740_993))
        #expect(try parse("-9223372036854775808") == .int(.min))
        #expect(try parse("1763760000000").int64 == 1_763_760_000_000)
        #expect(try parse("1.5") == .double(1.5))
        #expect(try parse("1e3") == .double(1000))
        #expect(try parse("99999999999999999999") == .double(1e20))
    }

    @Test func stringsAndEscapes() throws {
        #expect(try parse(#""a\"\\\/\b\f\n\r\t\u00e9""#) == .string("a\"\\/\u{8}\u{c}\n\r\té"))
        #expect(try parse(#""\ud83d\udc4d""#) == .string("👍"))
        #expect(try parse("\"héllo\"") == .string("héllo"))
    }

    @Test("Rejects what RFC 8259 rejects", arguments: [
        "", " ", "[1,]", "{\"a\":1,}", "01", "1.", ".5", "-", "+1", "tru", "nul", "[1 2]", "{\"a\" 1}", "{1:2}",
        "\"\\ud83d\"", "\"\\udc4d\"", "\"\\ud83dx\"", "\"\\x\"", "\"a\nb\"", "\"abc", "[", "{\"a\":1,\"a\":2}",
        "1 2", "NaN", "Infinity", "1e999", "'a'",
    ])
    func rejects(_ text: String) {
        #expect(throws: JSONError.self) { try parse(text) }
    }

    @Test func rejectsInvalidUTF8AndBounds() {
        #expect(throws: JSONError.self) { try JSONParser.parse([0x22, 0xc3, 0x28, 0x22]) }
        #expect(throws: JSONError.self) { try JSONParser.parse([0x22, 0xed, 0xa0, 0x80, 0x22]) }
        #expect(throws: JSONError(.tooLarge, at: 0)) { try JSONParser.parse(Array("[1,2]".utf8), limits: .init(maxBytes: 4)) }
        #expect(throws: JSONError.self) { try parse(String(repeating: "[", count: 33) + String(repeating: "]", count: 33)) }
        #expect((try? parse(String(repeating: "[", count: 32) + String(repeating: "]", count: 32))) != nil)
        // Deep nesting far past the limit must not overflow the stack.
        #expect(throws: JSONError.self) { try parse(String(repeating: "[", count: 100_000), depth: 32) }
    }

    @Test func writerRoundTripsAndEscapes() throws {
        let value: JSONValue = ["s": "q\"b\\n\n\u{1}é👍", "i": .int(-5), "d": 0.25, "a": [true, false, nil], "o": [:]]
        let text = JSONWriter.string(value)
        #expect(text == #"{"s":"q\"b\\n\n\u0001é👍","i":-5,"d":0.25,"a":[true,false,null],"o":{}}"#)
        #expect(try parse(text) == value)
        #expect(value["a"]?[2]?.isNull == true)
        #expect(value["missing"] == nil)
    }

    // MARK: - Containers beyond the depth limit, skipped (protocol documents)

    func skipping(_ bytes: [UInt8], depth: Int) throws(JSONError) -> JSONValue {
        try JSONParser.parse(bytes, limits: .init(maxBytes: 1 << 16, maxDepth: depth, beyondMaxDepth: .skip))
    }

    @Test func deepContainersAreSkippedNotRejected() throws {
        let deep = "{\"id\":1,\"x\":{\"a\":[{\"b\":[1,\"s\\\"]\",true,null,{}]}]},\"y\":[[]]}"
        #expect(throws: JSONError.self) { try parse(deep, depth: 2) }
        let value = try skipping(Array(deep.utf8), depth: 2)
        #expect(value["id"] == .int(1))
        #expect(value["x"]?["a"] == .null)
        #expect(value["y"] == .array([.null]))
        // 2,000 levels in one value: walked without recursion.
        let tower = "{\"id\":2,\"t\":" + String(repeating: "[", count: 2000) + String(repeating: "]", count: 2000) + "}"
        #expect(try skipping(Array(tower.utf8), depth: 8)["id"] == .int(2))
        for bad in ["{\"x\":[[[1,]]]}", "{\"x\":[[[1]]}", "{\"x\":[[{\"k\" 1}]]}", "{\"x\":[[{1:2}]]}",
                    "{\"x\":[[\"\\q\"]]}", "{\"x\":[[01]]}", "{\"x\":[[tru]]}", "{\"x\":[[\"\u{1}\"]]}"] {
            #expect(throws: JSONError.self, "\(bad)") { try skipping(Array(bad.utf8), depth: 2) }
        }
    }

    /// Differential: with skipping, a document parses exactly when it parses with no depth
    /// limit at all (duplicate keys inside skipped containers aside: they are not kept).
    @Test func skippingAcceptsExactlyWhatAnUnlimitedParseAccepts() throws {
        var rng = SeededGenerator(state: 0x5077_0dee)
        let seeds = ["{\"a\":{\"b\":[1,{\"c\":[true,false,null,\"x\\u00e9\",-1.5e3]}],\"d\":{}},\"e\":[[[[]]]]}",
                     "[[[{\"k\":[{\"k\":[\"v\"]}]}]]]"]
        var compared = 0
        for round in 0..<4000 {
            var bytes = Array(seeds[round % seeds.count].utf8)
            for _ in 0...Int.random(in: 0...2, using: &rng) {
                let index = Int.random(in: 0...bytes.count, using: &rng)
                let pool = Array("{}[]\",:\\ 1e-.tn".utf8)
                switch Int.random(in: 0..<3, using: &rng) {
                case 0 where index < bytes.count: bytes.remove(at: index)
                case 1 where index < bytes.count: bytes[index] = pool.randomElement(using: &rng)!
                default: bytes.insert(pool.randomElement(using: &rng)!, at: index)
                }
            }
            let reference: Bool
            do {
                _ = try JSONParser.parse(bytes, limits: .init(maxBytes: 1 << 16, maxDepth: 10_000))
                reference = true
            } catch where error.kind == .duplicateKey {
                continue
            } catch {
                reference = false
            }
            let skipped = (try? skipping(bytes, depth: 2)) != nil
            #expect(skipped == reference, "\(String(decoding: bytes, as: UTF8.self))")
            compared += 1
        }
        #expect(compared > 3000)
    }
}
