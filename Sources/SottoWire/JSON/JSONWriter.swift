/// Compact JSON text (no whitespace) with RFC 8259 string escaping. Object members are
/// written in order. Non-finite doubles, which JSON cannot express, are written as `null`.
///
/// ```swift
/// JSONWriter.string(["ok": true, "messageId": "00ff"])   // {"ok":true,"messageId":"00ff"}
/// ```
public enum JSONWriter {
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        write(value, to: &out)
        return out
    }

    public static func string(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    public static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: out.append(contentsOf: "null".utf8)
        case .bool(let flag): out.append(contentsOf: (flag ? "true" : "false").utf8)
        case .int(let number): out.append(contentsOf: String(number).utf8)
        case .double(let number):
            if number.isFinite {
                out.append(contentsOf: number.description.utf8)
            } else {
                out.append(contentsOf: "null".utf8)
            }
        case .string(let text): writeString(text, to: &out)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (position, item) in items.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            for (position, member) in object.members.enumerated() {
                if position > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// `escapingDelete: false` leaves DEL (0x7f) raw, as RFC 8259 allows and `JSONSerialization`
    /// does (the CLI's `--json` text, SottoClient's `SortedJSONText`).
    public static func writeString(_ text: String, escapingDelete: Bool = true, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): out.append(contentsOf: [0x5c, 0x22])
            case UInt8(ascii: "\\"): out.append(contentsOf: [0x5c, 0x5c])
            case 0x0a: out.append(contentsOf: [0x5c, UInt8(ascii: "n")])
            case 0x0d: out.append(contentsOf: [0x5c, UInt8(ascii: "r")])
            case 0x09: out.append(contentsOf: [0x5c, UInt8(ascii: "t")])
            case 0x08: out.append(contentsOf: [0x5c, UInt8(ascii: "b")])
            case 0x0c: out.append(contentsOf: [0x5c, UInt8(ascii: "f")])
            case 0x7f where !escapingDelete: out.append(byte)
            case 0x00..<0x20, 0x7f:
                out.append(contentsOf: [0x5c, UInt8(ascii: "u"), 0x30, 0x30, hexDigits[Int(byte >> 4)], hexDigits[Int(byte & 0x0f)]])
            default: out.append(byte)
            }
        }
        out.append(UInt8(ascii: "\""))
    }
}
