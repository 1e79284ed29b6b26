import SottoWire

/// Indented JSON text (two spaces, members in order) for documents people read and diff,
/// such as docs/control-api.openrpc.json. Strings and numbers are written by `JSONWriter`.
///
/// ```swift
/// PrettyJSON.string(["a": [1, 2]])   // "{\n  \"a\": [\n    1,\n    2\n  ]\n}"
/// ```
public enum PrettyJSON {
    public static func string(_ value: JSONValue) -> String {
        var out: [UInt8] = []
        write(value, indent: 0, to: &out)
        return String(decoding: out, as: UTF8.self)
    }

    private static func write(_ value: JSONValue, indent: Int, to out: inout [UInt8]) {
        switch value {
        case .array(let items) where !items.isEmpty:
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                out.append(contentsOf: (position == 0 ? "\n" : ",\n").utf8)
                pad(indent + 1, &out)
                write(item, indent: indent + 1, to: &out)
            }
            out.append(0x0a)
            pad(indent, &out)
            out.append(UInt8(ascii: "]"))
        case .object(let object) where object.count > 0:
            out.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                out.append(contentsOf: (position == 0 ? "\n" : ",\n").utf8)
                pad(indent + 1, &out)
                JSONWriter.writeString(member.key, to: &out)
                out.append(contentsOf: ": ".utf8)
                write(member.value, indent: indent + 1, to: &out)
            }
            out.append(0x0a)
            pad(indent, &out)
            out.append(UInt8(ascii: "}"))
        default:
            JSONWriter.write(value, to: &out)
        }
    }

    private static func pad(_ level: Int, _ out: inout [UInt8]) {
        out.append(contentsOf: repeatElement(UInt8(ascii: " "), count: level * 2))
    }
}
