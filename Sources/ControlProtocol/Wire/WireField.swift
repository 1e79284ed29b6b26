import SottoWire

/// One member of a wire object as the OpenRPC document describes it: name, JSON type,
/// whether it is always present, and what it means.
///
/// ```swift
/// WireField("limit", .integer(minimum: 1, maximum: 10_000), optional: true, "how many of the latest messages")
/// ```
public struct WireField {
    /// A member's JSON type, as its schema says it.
    ///
    /// ```swift
    /// WireField.Kind.array(MessageInfo.self).schema   // {"type":"array","items":{"$ref":"#/components/schemas/Message"}}
    /// ```
    public indirect enum Kind {
        case string
        case nonEmptyString
        case integer(minimum: Int64? = nil, maximum: Int64? = nil)
        case boolean
        case strings
        /// An object of integers keyed by name.
        case integerMap
        case object(any WireCodable.Type)
        case array(any WireCodable.Type)

        public static var integer: Kind { .integer() }
    }

    public let name: String
    public let kind: Kind
    public let isRequired: Bool
    public let summary: String

    public init(_ name: String, _ kind: Kind, optional: Bool = false, _ summary: String) {
        self.name = name
        self.kind = kind
        self.isRequired = !optional
        self.summary = summary
    }
}

// MARK: - JSON Schema

extension WireField.Kind {
    /// This member's JSON Schema; nested wire types are `$ref`s into `components.schemas`.
    public var schema: JSONValue {
        switch self {
        case .string: return ["type": "string"]
        case .nonEmptyString: return ["type": "string", "minLength": 1]
        case .integer(let minimum, let maximum):
            var out = WireObjectBuilder()
            out["type"] = "integer"
            out["minimum"] = minimum.map(JSONValue.int)
            out["maximum"] = maximum.map(JSONValue.int)
            return out.json
        case .boolean: return ["type": "boolean"]
        case .strings: return ["type": "array", "items": ["type": "string"]]
        case .integerMap: return ["type": "object", "additionalProperties": ["type": "integer"]]
        case .object(let type): return ["$ref": .string("#/components/schemas/\(type.schemaName)")]
        case .array(let type): return ["type": "array", "items": ["$ref": .string("#/components/schemas/\(type.schemaName)")]]
        }
    }

    /// Whether `value` is of this kind (nested wire objects checked member by member).
    public func admits(_ value: JSONValue) -> Bool {
        switch (self, value) {
        case (.string, .string): return true
        case (.nonEmptyString, .string(let text)): return !text.isEmpty
        case (.integer(let minimum, let maximum), .int(let number)):
            return number >= (minimum ?? .min) && number <= (maximum ?? .max)
        case (.boolean, .bool): return true
        case (.strings, .array(let items)): return items.allSatisfy { $0.string != nil }
        case (.integerMap, .object(let map)): return map.members.allSatisfy { $0.value.int64 != nil }
        case (.object(let type), _): return WireSchema.conformanceErrors(value, to: type).isEmpty
        case (.array(let type), .array(let items)):
            return items.allSatisfy { WireSchema.conformanceErrors($0, to: type).isEmpty }
        default: return false
        }
    }
}

/// A wire type's JSON Schema, and a check that an encoded value matches it: the test that
/// keeps the OpenRPC document true to the types runs it over every method's samples.
///
/// ```swift
/// WireSchema.object(for: SentMessage.self)          // {"type":"object","properties":{…},"required":[…]}
/// WireSchema.conformanceErrors(sent.json, to: SentMessage.self)   // [] when it matches
/// ```
public enum WireSchema {
    public static func object(for type: any WireCodable.Type) -> JSONValue {
        var properties = JSONObject()
        for field in type.fields {
            guard case .object(var schema) = field.kind.schema else { continue }
            schema.set("description", .string(field.summary))
            properties.set(field.name, .object(schema))
        }
        var out = WireObjectBuilder()
        out["type"] = "object"
        out["properties"] = .object(properties)
        let required = type.fields.filter(\.isRequired).map(\.name)
        out["required"] = required.isEmpty ? nil : .strings(required)
        return out.json
    }

    /// What is wrong with `value` as a `type`: a member the schema does not declare, a
    /// required member missing, a member of the wrong kind. Empty when it conforms.
    public static func conformanceErrors(_ value: JSONValue, to type: any WireCodable.Type) -> [String] {
        guard case .object(let object) = value else { return ["\(type.schemaName): not an object"] }
        var errors: [String] = []
        let fields = type.fields
        for key in object.keys where !fields.contains(where: { $0.name == key }) {
            errors.append("\(type.schemaName).\(key): not in the schema")
        }
        for field in fields {
            guard let member = object[field.name] else {
                if field.isRequired { errors.append("\(type.schemaName).\(field.name): required but missing") }
                continue
            }
            if !field.kind.admits(member) { errors.append("\(type.schemaName).\(field.name): not a \(field.kind.schema)") }
        }
        return errors
    }
}
