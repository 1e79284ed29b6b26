/// The datagram a worker sends to the daemon's `events.sock` after it commits:
/// `{"seq":N,"pid":P}`, the newest change_log seq it wrote and its process id. It only says
/// "look now": the daemon reads the truth from change_log, so a lost or forged one costs a read.
///
/// ```swift
/// UnixSocket.sendDatagram(EventsDatagram(seq: 42, pid: Int64(getpid())).encode(), to: path)
/// EventsDatagram.parse(bytes)?.seq   // 42; nil for anything else
/// ```
public struct EventsDatagram: Sendable, Equatable {
    /// A datagram longer than this is not one of ours (the longest is 43 bytes).
    public static let maxBytes = 256

    public let seq: Int64
    public let pid: Int64

    public init(seq: Int64, pid: Int64) {
        self.seq = seq
        self.pid = pid
    }

    public func encode() -> [UInt8] {
        JSONWriter.bytes(["seq": .int(seq), "pid": .int(pid)])
    }

    /// Reads a datagram; nil for anything that is not an object with integer `seq` and `pid`
    /// (other members are ignored).
    public static func parse<Bytes: Collection>(_ bytes: Bytes) -> EventsDatagram? where Bytes.Element == UInt8 {
        guard let value = try? JSONParser.parse(bytes, limits: .init(maxBytes: maxBytes, maxDepth: 1, beyondMaxDepth: .skip)),
              let seq = value["seq"]?.int64, let pid = value["pid"]?.int64 else { return nil }
        return EventsDatagram(seq: seq, pid: pid)
    }
}
