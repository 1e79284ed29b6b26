/// Shapes of the identifiers of PROTOCOL §1, checked without allocating.
///
/// ```swift
/// ProtocolIds.isClientId("3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10")   // true
/// ProtocolIds.topic(conversationId: "6808def4bd91c908e46f977561042b0e")   // "/sotto/1/c/6808…"
/// ProtocolIds.conversationId(fromTopic: "/sotto/1/c/6808def4bd91c908e46f977561042b0e")   // "6808…"
/// ```
public enum ProtocolIds {
    public static let topicPrefix = "/sotto/1/c/"

    /// Canonical lowercase `8-4-4-4-12` UUID.
    public static func isClientId(_ text: String) -> Bool {
        let utf8 = text.utf8
        guard utf8.count == 36 else { return false }
        for (index, char) in utf8.enumerated() {
            if index == 8 || index == 13 || index == 18 || index == 23 {
                guard char == UInt8(ascii: "-") else { return false }
            } else {
                guard (0x30...0x39).contains(char) || (0x61...0x66).contains(char) else { return false }
            }
        }
        return true
    }

    /// 16 bytes, lowercase hex (conversationId, messageId).
    public static func isId16(_ text: String) -> Bool { Hex.isCanonical(text, byteCount: 16) }

    /// 32 bytes, lowercase hex (inboxId).
    public static func isInboxId(_ text: String) -> Bool { Hex.isCanonical(text, byteCount: 32) }

    public static func topic(conversationId: String) -> String { topicPrefix + conversationId }

    /// The conversation id of a well-formed topic, else nil.
    public static func conversationId(fromTopic topic: String) -> String? {
        guard topic.utf8.count == topicPrefix.utf8.count + 32, topic.hasPrefix(topicPrefix) else { return nil }
        let id = String(topic.dropFirst(topicPrefix.count))
        return isId16(id) ? id : nil
    }

    /// `unix:<absolute path>` (fits in `sun_path`), `tcp:<host>:<port>`, or a relay
    /// `nats://<host>:<port>` / `tls://<host>:<port>` (PROTOCOL §1); no control characters.
    public static func isEndpoint(_ text: String) -> Bool {
        let utf8 = Array(text.utf8)
        guard utf8.count <= 512, !utf8.contains(where: { $0 < 0x20 || $0 == 0x7f }) else { return false }
        if text.hasPrefix("unix:") {
            let path = utf8.dropFirst(5)
            return path.first == UInt8(ascii: "/") && path.count < 108
        }
        if text.hasPrefix("tcp:") {
            let rest = utf8.dropFirst(4)
            guard let colon = rest.lastIndex(of: UInt8(ascii: ":")) else { return false }
            let host = rest[rest.startIndex..<colon]
            let port = rest[(colon + 1)...]
            guard !host.isEmpty, !port.isEmpty, port.count <= 5,
                  port.allSatisfy({ (0x30...0x39).contains($0) }),
                  let number = Int(String(decoding: port, as: UTF8.self)), (1...65535).contains(number)
            else { return false }
            return !host.contains(UInt8(ascii: " "))
        }
        if text.hasPrefix("nats://") { return relayHostPort(text.dropFirst("nats://".count)) != nil }
        if text.hasPrefix("tls://") { return relayHostPort(text.dropFirst("tls://".count)) != nil }
        return false
    }

    /// The `HOST:PORT` of a relay endpoint, strictly: a DNS name or IPv4 address (letters,
    /// digits, `-`, `.`; no empty label, none starting or ending with `-`), or `[IPv6]`; then
    /// a decimal port 1…65535. Nothing else: no user info, path, query or spaces.
    public static func relayHostPort(_ text: Substring) -> (host: String, port: Int)? {
        let utf8 = Array(text.utf8)
        guard let colon = utf8.lastIndex(of: UInt8(ascii: ":")) else { return nil }
        let host = utf8[..<colon]
        let port = utf8[(colon + 1)...]
        guard (1...5).contains(port.count), port.allSatisfy({ (0x30...0x39).contains($0) }),
              let number = Int(String(decoding: port, as: UTF8.self)), (1...65535).contains(number),
              !host.isEmpty, host.count <= 255 else { return nil }
        if host.first == UInt8(ascii: "[") {
            guard host.last == UInt8(ascii: "]"), host.count > 2,
                  host.dropFirst().dropLast().allSatisfy({ Hex.isDigit($0) || (0x41...0x46).contains($0) || $0 == UInt8(ascii: ":") || $0 == UInt8(ascii: ".") })
            else { return nil }
        } else {
            for label in host.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false) {
                guard !label.isEmpty, label.count <= 63, label.first != UInt8(ascii: "-"), label.last != UInt8(ascii: "-"),
                      label.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5a).contains($0)
                                         || (0x61...0x7a).contains($0) || $0 == UInt8(ascii: "-") })
                else { return nil }
            }
        }
        return (String(decoding: host, as: UTF8.self), number)
    }
}
