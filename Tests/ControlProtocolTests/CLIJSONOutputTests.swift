import ControlProtocol
import Foundation
import SottoClient
import SottoWire
import Testing

/// `sotto --json` prints the same bytes as before the wire moved to SharedStore's JSON: the
/// daemon used to write replies with JSONSerialization and the CLI to read them with it;
/// now both use JSONWriter/JSONParser, and the CLI prints through `sortedPrettyText`.
@Suite("CLI --json output")
struct CLIJSONOutputTests {
    /// The old path: daemon JSONSerialization → CLI JSONSerialization → pretty print.
    private static func before(_ value: JSONValue) throws -> String {
        let wire = try JSONSerialization.data(withJSONObject: Self.swiftObject(value), options: [.sortedKeys, .withoutEscapingSlashes, .fragmentsAllowed])
        let parsed = try JSONSerialization.jsonObject(with: wire, options: [.fragmentsAllowed])
        let data = try JSONSerialization.data(withJSONObject: parsed, options: [.prettyPrinted, .sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes])
        return String(decoding: data, as: UTF8.self)
    }

    /// The value as the old daemon built its replies: Swift `Bool`, `Int64`, `String`,
    /// arrays and `[String: Any]` (independent of `foundationObject`, which is under test).
    private static func swiftObject(_ value: JSONValue) -> Any {
        switch value {
        case .null: return NSNull()
        case .bool(let flag): return flag
        case .int(let number): return number
        case .double(let number): return number
        case .string(let text): return text
        case .array(let items): return items.map(swiftObject)
        case .object(let object): return Dictionary(uniqueKeysWithValues: object.members.map { ($0.key, swiftObject($0.value)) })
        }
    }

    /// The new path: daemon JSONWriter → client JSONParser → `sortedPrettyText`.
    private static func now(_ value: JSONValue) throws -> String {
        try JSONParser.parse(JSONWriter.bytes(value), limits: .init(maxBytes: JSONRPC.maxReplyBytes, maxDepth: JSONRPC.maxReplyDepth))
            .sortedPrettyText
    }

    @Test("every sample result and notification prints byte for byte as before")
    func samePrintedBytes() throws {
        var values: [JSONValue] = [WireSamples.change.json, WireSamples.bareChange.json, ["gap": WireSamples.gap.json]]
        WireSamples.forEachMethod { _, result in values.append(result.json) }
        values += [["a": [], "b": [:], "c": .null, "d": [true, false, 0, -1, .int(.max), .int(.min)], "e/f": "a/b"],
                   ["text": "control \u{1} \u{1f} \u{7f} \u{2028} 🏳️‍🌈 \\ \" /"]]
        for value in values {
            #expect(try Self.now(value) == Self.before(value), "\(value)")
        }
    }
}
