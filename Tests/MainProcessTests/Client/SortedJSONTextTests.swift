import Foundation
import SottoClient
import SottoWire
import Testing

/// `sotto --json` is written from `JSONValue` now, not by `JSONSerialization` (docs/adr/0065):
/// the same bytes, checked against written-out text and against `JSONSerialization` itself.
@Suite("Sorted JSON text")
struct SortedJSONTextTests {
    /// What `JSONSerialization` writes for the value's Foundation objects.
    private static func foundation(_ value: JSONValue, pretty: Bool) throws -> String {
        let options: JSONSerialization.WritingOptions = [.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]
        let data = try JSONSerialization.data(withJSONObject: value.foundationObject,
                                              options: pretty ? options.union(.prettyPrinted) : options)
        return String(decoding: data, as: UTF8.self)
    }

    @Test("pretty text, written out")
    func prettyText() {
        let value: JSONValue = ["name": "Zoë 🏳️‍🌈", "b": [], "a": [:], "n": [1, 2.5, 2.0, -0.5, .null, true]]
        #expect(value.sortedPrettyText == """
            {
              "a" : {

              },
              "b" : [

              ],
              "n" : [
                1,
                2.5,
                2,
                -0.5,
                null,
                true
              ],
              "name" : "Zoë 🏳️‍🌈"
            }
            """)
        #expect(JSONValue.array([]).sortedPrettyText == "[\n\n]")
        #expect(JSONValue.string("a/b").sortedPrettyText == #""a/b""#)
    }

    @Test("compact text, written out, with escapes")
    func compactText() {
        let value: JSONValue = ["text": "line\nbreak \"quoted\" back\\slash tab\t bell\u{7} del\u{7f} \u{2028} é", "id": 7]
        #expect(value.sortedCompactText
                    == #"{"id":7,"text":"line\nbreak \"quoted\" back\\slash tab\t bell\u0007 del"# + "\u{7f} \u{2028} é\"}")
    }

    /// Keys in the order `JSONSerialization` puts them: case-insensitive (lowercase first on a
    /// tie), digit runs by value, punctuation before digits before letters.
    @Test("keys sort as JSONSerialization sorts them")
    func keyOrder() throws {
        var object = JSONObject()
        for (number, key) in ["inboxes", "inboxId", "a10", "a2", "a02", "A", "a", "_x", "-x", "9f", "10a", "Zeta", "alpha",
                              "messageId", "messages", "x y", "x.y", ""].enumerated() {
            object.set(key, .int(Int64(number)))
        }
        let value = JSONValue.object(object)
        #expect(value.sortedPrettyText == (try Self.foundation(value, pretty: true)))
        #expect(value.sortedCompactText == (try Self.foundation(value, pretty: false)))
    }

    @Test("a few values print as JSONSerialization prints them")
    func sameAsFoundation() throws {
        let values: [JSONValue] = [
            .null, true, 0, .int(.min), .int(.max), 0.1, 1e20, 1e-7, 1e15, 1e16, -0.0, 3.141592653589793,
            "plain", "ünïcödé 漢字 🏳️‍🌈", "control \u{1} \u{1f} \u{7f} \u{2028} \\ \" / \r\n\t\u{8}\u{c}",
            ["nested": ["deeper": [[], [:], ["k": "v"]]], "list": [1, "two", 3.5, false]],
        ]
        for value in values {
            #expect(value.sortedPrettyText == (try Self.foundation(value, pretty: true)), "\(value)")
            #expect(value.sortedCompactText == (try Self.foundation(value, pretty: false)), "\(value)")
        }
    }
}
