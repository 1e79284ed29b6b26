/// Every push published into a mailbox has one size on the relay (docs/protocol/relay-padding.md,
/// docs/adr/0044): a version byte, the push's length (2 bytes, big-endian), the push, and zero
/// bytes up to `frameBytes`. sotto-relayd strips it before the worker sees the push; a frame
/// that is not exactly this is refused with the reason (and never a byte of its content).
///
/// ```swift
/// let frame = try RelayPadding.pad(push)        // 4,099 bytes, whatever the push's length
/// let push = try RelayPadding.unpad(frame)      // the push again
/// ```
public enum RelayPadding {
    public static let version: UInt8 = 1
    public static let headerBytes = 3
    /// The largest push (PROTOCOL §2: 4,096 bytes).
    public static let maxPushBytes = 4_096
    public static let frameBytes = headerBytes + maxPushBytes

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case wrongSize(Int)
        case unknownVersion(UInt8)
        case badLength(Int)
        case nonZeroPadding(offset: Int)
        case pushTooLarge(Int)
        case emptyPush

        public var description: String {
            switch self {
            case .wrongSize(let size): "a relay frame is \(frameBytes) bytes, this one \(size)"
            case .unknownVersion(let version): "unknown relay frame version \(version)"
            case .badLength(let length): "push length \(length) is not 1 to \(maxPushBytes)"
            case .nonZeroPadding(let offset): "padding byte at offset \(offset) is not zero"
            case .pushTooLarge(let length): "a push of \(length) bytes is larger than \(maxPushBytes)"
            case .emptyPush: "an empty push"
            }
        }
    }

    public static func pad(_ push: [UInt8]) throws(Failure) -> [UInt8] {
        guard !push.isEmpty else { throw .emptyPush }
        guard push.count <= maxPushBytes else { throw .pushTooLarge(push.count) }
        var frame = [UInt8](repeating: 0, count: frameBytes)
        frame[0] = version
        frame[1] = UInt8(push.count >> 8)
        frame[2] = UInt8(push.count & 0xff)
        frame.replaceSubrange(headerBytes..<headerBytes + push.count, with: push)
        return frame
    }

    public static func unpad(_ frame: [UInt8]) throws(Failure) -> [UInt8] {
        guard frame.count == frameBytes else { throw .wrongSize(frame.count) }
        guard frame[0] == version else { throw .unknownVersion(frame[0]) }
        let length = Int(frame[1]) << 8 | Int(frame[2])
        guard (1...maxPushBytes).contains(length) else { throw .badLength(length) }
        let end = headerBytes + length
        if let offset = frame[end...].firstIndex(where: { $0 != 0 }) { throw .nonZeroPadding(offset: offset) }
        return Array(frame[headerBytes..<end])
    }
}
