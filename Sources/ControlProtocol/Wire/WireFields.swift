import SottoWire

/// Reads the members of a wire object, each with the check its contract states and an error
/// that names it (the daemon's `invalidParams` messages: "'limit' must be an integer").
/// Unknown members are ignored, so older clients and daemons keep working with newer ones.
///
/// ```swift
/// let fields = try WireFields(json)
/// let conversation = try fields.nonEmptyString("conversation")
/// let limit = try fields.optionalInt("limit") ?? 50
/// ```
public struct WireFields {
    /// Integers beyond this are refused: they would not survive a JavaScript or double client.
    public static let maxSafeInteger: Int64 = 9_000_000_000_000_000

    public let object: JSONObject

    public init(_ value: JSONValue) throws(WireError) {
        switch value {
        case .object(let object): self.object = object
        case .null: self.object = JSONObject()
        default: throw WireError("expected an object")
        }
    }

    private func present(_ key: String) -> JSONValue? {
        guard let value = object[key], !value.isNull else { return nil }
        return value
    }

    // MARK: Strings

    public func string(_ key: String) throws(WireError) -> String {
        guard let text = try optionalString(key) else { throw WireError("'\(key)' must be a string") }
        return text
    }

    public func nonEmptyString(_ key: String) throws(WireError) -> String {
        guard let text = present(key)?.string, !text.isEmpty else { throw WireError("'\(key)' must be a non-empty string") }
        return text
    }

    public func optionalString(_ key: String) throws(WireError) -> String? {
        guard let value = present(key) else { return nil }
        guard let text = value.string else { throw WireError("'\(key)' must be a string") }
        return text
    }

    // MARK: Numbers

    public func int(_ key: String, minimum: Int64? = nil) throws(WireError) -> Int64 {
        guard let number = try optionalInt(key, minimum: minimum) else { throw WireError("'\(key)' must be an integer") }
        return number
    }

    /// An integer; `5.0` counts (a client that only has doubles writes it so), `5.5` does not.
    public func optionalInt(_ key: String, minimum: Int64? = nil) throws(WireError) -> Int64? {
        guard let value = present(key) else { return nil }
        let number: Int64
        switch value {
        case .int(let integer) where abs(integer) < Self.maxSafeInteger:
            number = integer
        case .double(let double) where double == double.rounded() && abs(double) < Double(Self.maxSafeInteger):
            number = Int64(double)
        default:
            throw WireError("'\(key)' must be an integer")
        }
        if let minimum, number < minimum { throw WireError("'\(key)' must be ≥ \(minimum)") }
        return number
    }

    /// A count: an integer ≥ 0.
    public func count(_ key: String) throws(WireError) -> Int {
        Int(try int(key, minimum: 0))
    }

    // MARK: Booleans

    public func bool(_ key: String) throws(WireError) -> Bool {
        guard let flag = try optionalBool(key) else { throw WireError("'\(key)' must be a boolean") }
        return flag
    }

    public func optionalBool(_ key: String) throws(WireError) -> Bool? {
        guard let value = present(key) else { return nil }
        guard let flag = value.bool else { throw WireError("'\(key)' must be a boolean") }
        return flag
    }

    // MARK: Nested values

    public func decode<T: WireCodable>(_ key: String, as _: T.Type = T.self) throws(WireError) -> T {
        guard let value = try optionalDecode(key, as: T.self) else { throw WireError("'\(key)' must be an object") }
        return value
    }

    public func optionalDecode<T: WireCodable>(_ key: String, as _: T.Type = T.self) throws(WireError) -> T? {
        guard let value = present(key) else { return nil }
        do {
            return try T(json: value)
        } catch {
            throw WireError("'\(key)': \(error.detail)")
        }
    }

    public func array<T: WireCodable>(_ key: String, of _: T.Type = T.self) throws(WireError) -> [T] {
        guard let items = present(key)?.array else { throw WireError("'\(key)' must be an array") }
        var out: [T] = []
        out.reserveCapacity(items.count)
        for (index, item) in items.enumerated() {
            do {
                out.append(try T(json: item))
            } catch {
                throw WireError("'\(key)'[\(index)]: \(error.detail)")
            }
        }
        return out
    }

    /// nil when `key` is absent or null; otherwise an array of `T`, as `array`.
    public func optionalArray<T: WireCodable>(_ key: String, of _: T.Type = T.self) throws(WireError) -> [T]? {
        guard present(key) != nil else { return nil }
        return try array(key, of: T.self)
    }

    public func strings(_ key: String) throws(WireError) -> [String] {
        guard let items = present(key)?.array else { throw WireError("'\(key)' must be an array of strings") }
        var out: [String] = []
        for item in items {
            guard let text = item.string else { throw WireError("'\(key)' must be an array of strings") }
            out.append(text)
        }
        return out
    }

    /// nil when `key` is absent or null; otherwise an object of integers, as `integerMap`.
    public func optionalIntegerMap(_ key: String) throws(WireError) -> [String: Int64]? {
        guard present(key) != nil else { return nil }
        return try integerMap(key)
    }

    /// An object of integers keyed by name (`wakeReasons`).
    public func integerMap(_ key: String) throws(WireError) -> [String: Int64] {
        guard let map = present(key)?.object else { throw WireError("'\(key)' must be an object of integers") }
        var out: [String: Int64] = [:]
        for member in map.members {
            guard let number = member.value.int64 else { throw WireError("'\(key)' must be an object of integers") }
            out[member.key] = number
        }
        return out
    }
}

// MARK: - Writing

/// Builds a wire object member by member, leaving out optionals that are nil.
///
/// ```swift
/// var out = WireObjectBuilder()
/// out["conversationId"] = .string(id)
/// out["name"] = name.map(JSONValue.string)   // absent when nil
/// return out.json
/// ```
public struct WireObjectBuilder {
    private var object = JSONObject()

    public init() {}

    public subscript(key: String) -> JSONValue? {
        get { object[key] }
        set { if let newValue { object.set(key, newValue) } }
    }

    public var json: JSONValue { .object(object) }
}

extension JSONValue {
    /// `[String: Int64]` as an object with its keys sorted, so the same map always writes the same bytes.
    public static func integerMap(_ map: [String: Int64]) -> JSONValue {
        .object(JSONObject(map.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.int($0.value)) }))
    }

    public static func strings(_ items: [String]) -> JSONValue { .array(items.map(JSONValue.string)) }

    public static func list<T: WireCodable>(_ items: [T]) -> JSONValue { .array(items.map(\.json)) }
}
