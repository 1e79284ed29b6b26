import SharedStore
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
}
