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
