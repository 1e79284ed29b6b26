/// The one JSON line the worker writes back on the push socket (PROTOCOL §2).
///
/// ```swift
/// PushAck.ok(messageId: "00ff…", duplicate: false).encodeLine()
/// // {"ok":true,"messageId":"00ff…","duplicate":false}\n
/// PushAck.error(PushError(.busy, "database locked")).encodeLine()
/// // {"ok":false,"error":"busy","retry":true,"detail":"database locked"}\n
/// ```
public enum PushAck: Sendable, Equatable {
    case ok(messageId: String, duplicate: Bool)
    case error(PushError)

    public func encodeLine() -> [UInt8] {
        let value: JSONValue
        switch self {
        case .ok(let messageId, let duplicate):
            value = ["ok": true, "messageId": .string(messageId), "duplicate": .bool(duplicate)]
        case .error(let error):
            value = ["ok": false, "error": .string(error.code.rawValue), "retry": .bool(error.code.retry),
                     "detail": .string(error.detail)]
        }
        var out = JSONWriter.bytes(value)
        out.append(0x0a)
        return out
    }

    /// Reads an ack line (trailing LF optional), for senders and tests. An unknown error
    /// code reads as `internal`.
    public static func parse(_ line: [UInt8]) -> PushAck? {
        var bytes = line
        if bytes.last == 0x0a { bytes.removeLast() }
        guard let value = try? JSONParser.parse(bytes, limits: .init(maxBytes: 8192, maxDepth: 4, beyondMaxDepth: .skip)),
              let ok = value["ok"]?.bool else { return nil }
        if ok {
            guard let id = value["messageId"]?.string else { return nil }
            return .ok(messageId: id, duplicate: value["duplicate"]?.bool ?? false)
        }
        guard let code = value["error"]?.string else { return nil }
        return .error(PushError(PushErrorCode(rawValue: code) ?? .internal, value["detail"]?.string ?? ""))
    }
}
