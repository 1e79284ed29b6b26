import SottoWire

/// JSON text with sorted keys in the exact bytes `JSONSerialization` writes on Linux with
/// `.sortedKeys`, `.fragmentsAllowed` and `.withoutEscapingSlashes`: what `sotto --json` has
/// always printed, so scripts that compare it keep working, without Foundation's serializer.
/// Pretty: two spaces a level, `" : "` between key and value, an empty array or object as
/// `[` and `]` on lines of their own with an empty line between. Keys in ``JSONKeyOrder``;
/// a double as Swift prints it without a trailing `.0`; DEL and non-ASCII raw.
///
/// ```swift
/// SortedJSONText.text(["b": 1, "a": []], pretty: true)    // "{\n  \"a\" : [\n\n  ],\n  \"b\" : 1\n}"
/// SortedJSONText.text(["b": 1, "a": []], pretty: false)   // {"a":[],"b":1}
/// ```
public enum SortedJSONText {
    public static func text(_ value: JSONValue, pretty: Bool) -> String {
        var out: [UInt8] = []
        write(value, level: pretty ? 0 : nil, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    // MARK: - Values

    /// `level` is the indentation depth when pretty, nil when compact.
    private static func write(_ value: JSONValue, level: Int?, to out: inout [UInt8]) {
        switch value {
        case .string(let text):
            JSONWriter.writeString(text, escapingDelete: false, to: &out)
        case .double(let number) where number.isFinite:
            var text = number.description
            if text.hasSuffix(".0") { text.removeLast(2) }
            out.append(contentsOf: text.utf8)
        case .array(let items):
            writeContainer(open: "[", close: "]", count: items.count, level: level, to: &out) { index, inner, out in
                write(items[index], level: inner, to: &out)
            }
        case .object(let object):
            let members = object.members.sorted { JSONKeyOrder.precedes($0.key, $1.key) }
            writeContainer(open: "{", close: "}", count: members.count, level: level, to: &out) { index, inner, out in
                JSONWriter.writeString(members[index].key, escapingDelete: false, to: &out)
                out.append(contentsOf: (inner == nil ? ":" : " : ").utf8)
                write(members[index].value, level: inner, to: &out)
            }
        default:
            JSONWriter.write(value, to: &out)
        }
    }

    // MARK: - Layout

    /// The brackets, and `count` elements separated by commas; when pretty, each element on a
    /// line of its own one level in, and an empty container still broken over two lines.
    private static func writeContainer(open: Unicode.Scalar, close: Unicode.Scalar, count: Int, level: Int?,
                                       to out: inout [UInt8],
                                       element: (_ index: Int, _ level: Int?, _ out: inout [UInt8]) -> Void) {
        out.append(UInt8(ascii: open))
        if let level {
            out.append(0x0a)
            for index in 0..<count {
                if index > 0 { out.append(contentsOf: ",\n".utf8) }
                indent(level + 1, &out)
                element(index, level + 1, &out)
            }
            out.append(0x0a)
            indent(level, &out)
        } else {
            for index in 0..<count {
                if index > 0 { out.append(UInt8(ascii: ",")) }
                element(index, nil, &out)
            }
        }
        out.append(UInt8(ascii: close))
    }

    private static func indent(_ level: Int, _ out: inout [UInt8]) {
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * 2))
    }
}
