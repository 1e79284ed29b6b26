import SottoWire

/// The `attachmentData` notification line written and read without a JSON tree: a 64 KiB
/// piece is 87,382 base64url characters, and building, escaping and parsing them as a JSON
/// string cost more than decrypting them (docs/adr/0077). The line is exactly
///
/// ```
/// {"jsonrpc":"2.0","method":"attachmentData","params":{"offset":N,"size":N,"data":"<base64url>"}}\n
/// ```
///
/// which is the notification `JSONRPC.notificationLine(AttachmentData)` describes (base64url
/// needs no escaping); a client that meets any other spelling of it parses it as JSON.
///
/// ```swift
/// let line = AttachmentDataLine.encode(offset: 0, size: 5, bytes: raw)        // [UInt8], ending in LF
/// var plain: [UInt8] = []
/// if let (offset, size) = AttachmentDataLine.decode(line.dropLast(), appendingTo: &plain) { … }
/// ```
public enum AttachmentDataLine {
    static let head = Array(#"{"jsonrpc":"2.0","method":"attachmentData","params":{"offset":"#.utf8)
    static let sizeKey = Array(#","size":"#.utf8)
    static let dataKey = Array(#","data":""#.utf8)
    static let tail = Array(#""}}"#.utf8)

    /// The line for `bytes` at `offset` of a `size`-byte file, with its LF.
    public static func encode(offset: Int64, size: Int64, bytes: UnsafeRawBufferPointer) -> [UInt8] {
        var line: [UInt8] = []
        line.reserveCapacity(head.count + 48 + Base64URL.encodedCount(bytes.count) + tail.count + 1)
        line += head
        line += Array(String(offset).utf8)
        line += sizeKey
        line += Array(String(size).utf8)
        line += dataKey
        Base64URL.append(bytes, to: &line)
        line += tail
        line.append(0x0a)
        return line
    }

    /// Reads a line (without its LF) spelled exactly as `encode` writes it: appends its bytes
    /// to `out` and returns its offset and size; nil (and `out` as it was) for any other line.
    public static func decode(_ line: UnsafeRawBufferPointer, appendingTo out: inout [UInt8]) -> (offset: Int64, size: Int64)? {
        var index = 0
        func expect(_ literal: [UInt8]) -> Bool {
            guard line.count - index >= literal.count else { return false }
            for (at, byte) in literal.enumerated() where line[index + at] != byte { return false }
            index += literal.count
            return true
        }
        func number() -> Int64? {
            let start = index
            var value: Int64 = 0
            while index < line.count, index - start < 18, (0x30...0x39).contains(line[index]) {
                value = value * 10 + Int64(line[index] - 0x30)
                index += 1
            }
            guard index > start, line[start] != 0x30 || index - start == 1 else { return nil }
            return value
        }
        guard expect(head), let offset = number(), expect(sizeKey), let size = number(), expect(dataKey) else { return nil }
        let dataStart = index
        guard line.count - dataStart >= tail.count else { return nil }
        let dataEnd = line.count - tail.count
        index = dataEnd
        guard expect(tail) else { return nil }
        guard Base64URL.decode(UnsafeRawBufferPointer(rebasing: line[dataStart..<dataEnd]), appendingTo: &out) else { return nil }
        return (offset, size)
    }
}
