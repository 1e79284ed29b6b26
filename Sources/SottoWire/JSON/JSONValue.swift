/// A parsed JSON value. Integers without fraction or exponent that fit in `Int64` stay exact
/// (`.int`), so millisecond timestamps such as `sentAtMs` never pass through a `Double`.
///
/// ```swift
/// let value = try JSONParser.parse(Array(#"{"a":[1,"x"]}"#.utf8))
/// value["a"]?[0]?.int64      // 1
/// value["a"]?[1]?.string     // "x"
/// ```
public enum JSONValue: Sendable, Equatable {
    case null
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case array([JSONValue])
    case object(JSONObject)
}

// MARK: - Accessors

extension JSONValue {
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    public subscript(index: Int) -> JSONValue? {
        if case .array(let items) = self, items.indices.contains(index) { return items[index] }
        return nil
    }

    public var string: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The value of an integer literal. A number written with a fraction or an exponent is not
    /// an integer here, even when its value is whole.
    public var int64: Int64? {
        if case .int(let value) = self { return value }
        return nil
    }

    /// Any number, as a `Double` (integers converted).
    public var double: Double? {
        switch self {
        case .int(let value): return Double(value)
        case .double(let value): return value
        default: return nil
        }
    }

    public var bool: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var array: [JSONValue]? {
        if case .array(let value) = self { return value }
        return nil
    }

    public var object: JSONObject? {
        if case .object(let value) = self { return value }
        return nil
    }

    public var isNull: Bool {
        if case .null = self { return true }
        return false
    }
}

// MARK: - Literals

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral, ExpressibleByFloatLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int64) { self = .int(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    public init(nilLiteral: ()) { self = .null }
}

/// A JSON object that keeps its members in order (so written JSON is deterministic).
/// Keys are unique: the parser rejects duplicates, and `set` replaces in place.
///
/// ```swift
/// var object: JSONObject = ["ok": true]
/// object.set("messageId", .string("00ff"))
/// object["ok"]?.bool   // true
/// ```
public struct JSONObject: Sendable, Equatable, ExpressibleByDictionaryLiteral {
    public private(set) var members: [(key: String, value: JSONValue)]

    public init(_ members: [(String, JSONValue)] = []) {
        self.members = []
        for (key, value) in members { set(key, value) }
    }

    public init(dictionaryLiteral elements: (String, JSONValue)...) { self.init(elements) }

    /// Used by the parser, which has already checked that keys are unique.
    init(uniqueMembers: [(key: String, value: JSONValue)]) { self.members = uniqueMembers }

    public var count: Int { members.count }
    public var keys: [String] { members.map(\.key) }

    public subscript(key: String) -> JSONValue? {
        for member in members where member.key == key { return member.value }
        return nil
    }

    public mutating func set(_ key: String, _ value: JSONValue) {
        if let index = members.firstIndex(where: { $0.key == key }) {
            members[index].value = value
        } else {
            members.append((key, value))
        }
    }

    public static func == (lhs: JSONObject, rhs: JSONObject) -> Bool {
        lhs.members.count == rhs.members.count
            && zip(lhs.members, rhs.members).allSatisfy { $0.key == $1.key && $0.value == $1.value }
    }
}
