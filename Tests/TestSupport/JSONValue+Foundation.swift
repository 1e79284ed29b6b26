import Foundation
import SottoWire

extension JSONValue {
    /// The value as the Foundation objects `JSONSerialization` would have produced for the
    /// same text (`NSNumber` for numbers and booleans, `NSNull`, `[String: Any]`, `[Any]`):
    /// for code that prints or inspects replies with Foundation, such as the CLI's `--json`
    /// output and the tests' `[String: Any]` helpers.
    ///
    /// ```swift
    /// let object = try JSONParser.parse(#"{"ok":true}"#).foundationObject as? [String: Any]
    /// object?["ok"] as? Bool   // true
    /// ```
    public var foundationObject: Any {
        switch self {
        case .null: return NSNull()
        case .bool(let flag): return NSNumber(value: flag)
        case .int(let number): return NSNumber(value: number)
        case .double(let number): return NSNumber(value: number)
        case .string(let text): return text
        case .array(let items): return items.map(\.foundationObject)
        case .object(let object):
            var out: [String: Any] = [:]
            for member in object.members { out[member.key] = member.value.foundationObject }
            return out
        }
    }
}

extension JSONValue {
    /// Indented text with sorted keys, as `JSONSerialization` writes it: what `sotto --json`
    /// has always printed, so scripts that compare its output keep working.
    ///
    /// ```swift
    /// print(result.sortedPrettyText)   // {\n  "messageId" : "00ff",\n  "recipients" : 2\n}
    /// ```
    public var sortedPrettyText: String { text(options: [.prettyPrinted]) }

    /// One line with sorted keys (`sotto watch --json`): strings are kept exactly, whatever
    /// spaces or line breaks they hold (JSON escapes the breaks).
    ///
    /// ```swift
    /// print(change.json.sortedCompactText)   // {"kind":"messageInserted","seq":12,…}
    /// ```
    public var sortedCompactText: String { text(options: []) }

    private func text(options: JSONSerialization.WritingOptions) -> String {
        let object = foundationObject
        guard JSONSerialization.isValidJSONObject(object) || object is String || object is NSNumber,
              let data = try? JSONSerialization.data(
                withJSONObject: object, options: options.union([.sortedKeys, .fragmentsAllowed, .withoutEscapingSlashes]))
        else { return "\(object)" }
        return String(decoding: data, as: UTF8.self)
    }
}
