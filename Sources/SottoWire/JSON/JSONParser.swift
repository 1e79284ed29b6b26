/// A strict RFC 8259 parser: one value, optional surrounding whitespace, UTF-8 validated,
/// `\u` escapes including surrogate pairs (lone surrogates rejected), duplicate keys rejected,
/// size and depth bounded before any work. It never traps on any input.
///
/// Containers nested deeper than `maxDepth` are rejected (`.tooDeep`), or, with
/// `beyondMaxDepth: .skip`, checked for well-formedness without recursion and kept as `.null`:
/// what the protocol does with unknown keys (PROTOCOL: "unknown object keys are ignored"),
/// whatever their depth, while the recursion stays bounded by `maxDepth`.
///
/// ```swift
/// let value = try JSONParser.parse(bytes, limits: .init(maxBytes: 4096, maxDepth: 16))
/// let id = value["id"]?.string
/// let lenient = try JSONParser.parse(bytes, limits: .init(maxBytes: 4096, maxDepth: 8, beyondMaxDepth: .skip))
/// ```
public enum JSONParser {
    /// What to do with a container nested deeper than `maxDepth`.
    public enum DeepValues: Sendable {
        /// Fail with `.tooDeep`.
        case reject
        /// Check it (iteratively, no recursion) and keep `.null` in its place.
        case skip
    }

    public struct Limits: Sendable {
        public var maxBytes: Int
        public var maxDepth: Int
        public var beyondMaxDepth: DeepValues

        public init(maxBytes: Int, maxDepth: Int = 32, beyondMaxDepth: DeepValues = .reject) {
            self.maxBytes = maxBytes
            self.maxDepth = maxDepth
            self.beyondMaxDepth = beyondMaxDepth
        }

        /// 1 MiB, depth 32: for trusted-size inputs such as control-socket requests.
        public static let `default` = Limits(maxBytes: 1 << 20, maxDepth: 32)
    }

    public static func parse<Bytes: Collection>(
        _ bytes: Bytes, limits: Limits = .default
    ) throws(JSONError) -> JSONValue where Bytes.Element == UInt8 {
        guard bytes.count <= limits.maxBytes else { throw JSONError(.tooLarge, at: 0) }
        var parser = Parser(bytes: Array(bytes), maxDepth: limits.maxDepth, skipsDeepValues: limits.beyondMaxDepth == .skip)
        return try parser.parseDocument()
    }

    public static func parse(_ text: String, limits: Limits = .default) throws(JSONError) -> JSONValue {
        try parse(Array(text.utf8), limits: limits)
    }
}

// MARK: - Recursive descent

private struct Parser {
    let bytes: [UInt8]
    let maxDepth: Int
    let skipsDeepValues: Bool
    var index = 0
    var depth = 0

    init(bytes: [UInt8], maxDepth: Int, skipsDeepValues: Bool) {
        self.bytes = bytes
        self.maxDepth = maxDepth
        self.skipsDeepValues = skipsDeepValues
    }

    mutating func parseDocument() throws(JSONError) -> JSONValue {
        skipWhitespace()
        let value = try parseValue()
        skipWhitespace()
        guard index == bytes.count else { throw JSONError(.trailingData, at: index) }
        return value
    }

    private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

    private mutating func skipWhitespace() {
        while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0a || byte == 0x0d { index += 1 }
    }

    private mutating func parseValue() throws(JSONError) -> JSONValue {
        guard let byte = current else { throw JSONError(.unexpectedEnd, at: index) }
        if skipsDeepValues, depth >= maxDepth, byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") {
            try skipContainer()
            return .null
        }
        switch byte {
        case UInt8(ascii: "{"): return try parseObject()
        case UInt8(ascii: "["): return try parseArray()
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return try parseNumber()
        default: throw JSONError(.unexpectedByte, at: index)
        }
    }

    private mutating func expectLiteral(_ literal: StaticString) throws(JSONError) {
        let count = literal.utf8CodeUnitCount
        guard bytes.count - index >= count else { throw JSONError(.unexpectedEnd, at: index) }
        let expected = UnsafeBufferPointer(start: literal.utf8Start, count: count)
        for offset in 0..<count where bytes[index + offset] != expected[offset] {
            throw JSONError(.unexpectedByte, at: index + offset)
        }
        index += count
    }

    private mutating func enter() throws(JSONError) {
        depth += 1
        guard depth <= maxDepth else { throw JSONError(.tooDeep, at: index) }
    }

    // MARK: Containers

    private mutating func parseObject() throws(JSONError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var members: [(key: String, value: JSONValue)] = []
        var seen: Set<String> = []
        skipWhitespace()
        if current == UInt8(ascii: "}") {
            index += 1
            return .object(JSONObject(uniqueMembers: members))
        }
        while true {
            skipWhitespace()
            guard current == UInt8(ascii: "\"") else {
                throw JSONError(current == nil ? .unexpectedEnd : .unexpectedByte, at: index)
            }
            let keyOffset = index
            let key = try parseString()
            guard seen.insert(key).inserted else { throw JSONError(.duplicateKey, at: keyOffset) }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else {
                throw JSONError(current == nil ? .unexpectedEnd : .unexpectedByte, at: index)
            }
            index += 1
            skipWhitespace()
            members.append((key, try parseValue()))
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "}"): index += 1; return .object(JSONObject(uniqueMembers: members))
            case nil: throw JSONError(.unexpectedEnd, at: index)
            default: throw JSONError(.unexpectedByte, at: index)
            }
        }
    }

    private mutating func parseArray() throws(JSONError) -> JSONValue {
        try enter()
        defer { depth -= 1 }
        index += 1
        var items: [JSONValue] = []
        skipWhitespace()
        if current == UInt8(ascii: "]") {
            index += 1
            return .array(items)
        }
        while true {
            skipWhitespace()
            items.append(try parseValue())
            skipWhitespace()
            switch current {
            case UInt8(ascii: ","): index += 1
            case UInt8(ascii: "]"): index += 1; return .array(items)
            case nil: throw JSONError(.unexpectedEnd, at: index)
            default: throw JSONError(.unexpectedByte, at: index)
            }
        }
    }

    // MARK: Skipped containers

    /// Walks one well-formed container without building it and without recursion: the only
    /// state is a stack of "object or array", bounded by the input's size.
    private mutating func skipContainer() throws(JSONError) {
        var isObject: [Bool] = []
        var needValue = true
        while true {
            skipWhitespace()
            guard let byte = current else { throw JSONError(.unexpectedEnd, at: index) }
            if needValue {
                switch byte {
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    let object = byte == UInt8(ascii: "{")
                    index += 1
                    skipWhitespace()
                    if current == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                        index += 1
                        needValue = false
                        if isObject.isEmpty { return }
                        continue
                    }
                    isObject.append(object)
                    if object { try skipKey() }
                    continue
                case UInt8(ascii: "\""): _ = try parseString()
                case UInt8(ascii: "t"): try expectLiteral("true")
                case UInt8(ascii: "f"): try expectLiteral("false")
                case UInt8(ascii: "n"): try expectLiteral("null")
                case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): _ = try parseNumber()
                default: throw JSONError(.unexpectedByte, at: index)
                }
                needValue = false
            } else {
                guard let object = isObject.last else { return }
                if byte == UInt8(ascii: ",") {
                    index += 1
                    if object { try skipKey() }
                    needValue = true
                } else if byte == (object ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    index += 1
                    isObject.removeLast()
                    if isObject.isEmpty { return }
                } else {
                    throw JSONError(.unexpectedByte, at: index)
                }
            }
        }
    }

    /// `"key" :` inside a skipped object.
    private mutating func skipKey() throws(JSONError) {
        skipWhitespace()
        guard current == UInt8(ascii: "\"") else {
            throw JSONError(current == nil ? .unexpectedEnd : .unexpectedByte, at: index)
        }
        _ = try parseString()
        skipWhitespace()
        guard current == UInt8(ascii: ":") else {
            throw JSONError(current == nil ? .unexpectedEnd : .unexpectedByte, at: index)
        }
        index += 1
    }

    // MARK: Strings

    private mutating func parseString() throws(JSONError) -> String {
        let start = index
        index += 1
        var out: [UInt8] = []
        while true {
            guard let byte = current else { throw JSONError(.unexpectedEnd, at: index) }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: out, as: UTF8.self) else {
                    throw JSONError(.invalidUTF8, at: start)
                }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try parseEscape(into: &out)
            case 0x00..<0x20:
                throw JSONError(.invalidString, at: index)
            default:
                out.append(byte)
                index += 1
            }
        }
    }

    private mutating func parseEscape(into out: inout [UInt8]) throws(JSONError) {
        guard let byte = current else { throw JSONError(.unexpectedEnd, at: index) }
        index += 1
        switch byte {
        case UInt8(ascii: "\""): out.append(0x22)
        case UInt8(ascii: "\\"): out.append(0x5c)
        case UInt8(ascii: "/"): out.append(0x2f)
        case UInt8(ascii: "b"): out.append(0x08)
        case UInt8(ascii: "f"): out.append(0x0c)
        case UInt8(ascii: "n"): out.append(0x0a)
        case UInt8(ascii: "r"): out.append(0x0d)
        case UInt8(ascii: "t"): out.append(0x09)
        case UInt8(ascii: "u"):
            let escapeStart = index - 2
            var scalar = UInt32(try parseHex4())
            if (0xd800...0xdbff).contains(scalar) {
                guard bytes.count - index >= 2, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u")
                else { throw JSONError(.invalidEscape, at: escapeStart) }
                index += 2
                let low = UInt32(try parseHex4())
                guard (0xdc00...0xdfff).contains(low) else { throw JSONError(.invalidEscape, at: escapeStart) }
                scalar = 0x10000 + ((scalar - 0xd800) << 10) + (low - 0xdc00)
            } else if (0xdc00...0xdfff).contains(scalar) {
                throw JSONError(.invalidEscape, at: escapeStart)
            }
            guard let unicode = Unicode.Scalar(scalar) else { throw JSONError(.invalidEscape, at: escapeStart) }
            out.append(contentsOf: UTF8.encode(unicode)!)
        default:
            throw JSONError(.invalidEscape, at: index - 1)
        }
    }

    private mutating func parseHex4() throws(JSONError) -> UInt16 {
        guard bytes.count - index >= 4 else { throw JSONError(.unexpectedEnd, at: index) }
        var value: UInt16 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let nibble: UInt8
            switch byte {
            case 0x30...0x39: nibble = byte - 0x30
            case 0x61...0x66: nibble = byte - 0x61 + 10
            case 0x41...0x46: nibble = byte - 0x41 + 10
            default: throw JSONError(.invalidEscape, at: index)
            }
            value = value << 4 | UInt16(nibble)
            index += 1
        }
        return value
    }

    // MARK: Numbers

    private mutating func parseNumber() throws(JSONError) -> JSONValue {
        let start = index
        var isInteger = true
        if current == UInt8(ascii: "-") { index += 1 }
        guard let first = current, isDigit(first) else { throw JSONError(.invalidNumber, at: index) }
        if first == UInt8(ascii: "0") {
            index += 1
        } else {
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: ".") {
            isInteger = false
            index += 1
            guard let byte = current, isDigit(byte) else { throw JSONError(.invalidNumber, at: index) }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
            isInteger = false
            index += 1
            if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
            guard let byte = current, isDigit(byte) else { throw JSONError(.invalidNumber, at: index) }
            while let byte = current, isDigit(byte) { index += 1 }
        }
        let text = String(decoding: bytes[start..<index], as: UTF8.self)
        if isInteger, let value = Int64(text) { return .int(value) }
        guard let value = Double(text), value.isFinite else { throw JSONError(.invalidNumber, at: start) }
        return .double(value)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
