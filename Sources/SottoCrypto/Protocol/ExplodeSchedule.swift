import SottoWire

/// One decision of a conversation's creator about when it explodes, as a
/// `convos.org/explode_settings:1.0` content carries it (docs/protocol/explode-schedule.md):
/// a time (or a cancel) and the creator's sequence number for it. A version-1 content (no
/// `sequence`) is sequence 0.
///
/// ```swift
/// let later = ExplodeSchedule(sequence: 2, expiresAtMs: t + 3_600_000)
/// ExplodeSchedule.inForce([first, later, .init(sequence: 3, expiresAtMs: nil)])  // the cancel, sequence 3
/// ```
public struct ExplodeSchedule: Sendable, Equatable {
    /// The creator's order of its decisions: 1, 2, 3… in one conversation; 0 for a
    /// version-1 content without one.
    public let sequence: Int64
    /// When every device deletes the conversation; nil when this decision cancels it.
    public let expiresAtMs: Int64?

    /// The largest sequence a content may carry (2^53 − 1: exact in every JSON implementation).
    public static let maxSequence: Int64 = 9_007_199_254_740_991

    public init(sequence: Int64, expiresAtMs: Int64?) {
        self.sequence = sequence
        self.expiresAtMs = expiresAtMs
    }

    public var isCancel: Bool { expiresAtMs == nil }

    /// The decision in force among the creator's decisions a device holds, whatever order
    /// they came in: the highest sequence; among decisions with the same sequence (version-1
    /// contents, or a creator that sent two), the earliest time, and a cancel only when no
    /// time shares its sequence. Nil when there is none.
    public static func inForce<S: Sequence>(_ schedules: S) -> ExplodeSchedule? where S.Element == ExplodeSchedule {
        schedules.reduce(nil) { best, next in
            guard let best else { return next }
            return next.wins(over: best) ? next : best
        }
    }

    /// True when this decision replaces `other` (see ``inForce(_:)``).
    public func wins(over other: ExplodeSchedule) -> Bool {
        if sequence != other.sequence { return sequence > other.sequence }
        switch (expiresAtMs, other.expiresAtMs) {
        case (let mine?, let theirs?): return mine < theirs
        case (.some, nil): return true
        case (nil, _): return false
        }
    }

    /// The content a creator sends: `{"expiresAt":"…","sequence":n}` or `{"cancel":true,"sequence":n}`
    /// (sequence 0: the version-1 `{"expiresAt":"…"}`). The time is written to the millisecond,
    /// as every receiver reads it back.
    public var content: [UInt8] {
        var object = JSONObject()
        if let expiresAtMs {
            object.set("expiresAt", .string(ISO8601.string(fromMillis: expiresAtMs)))
        } else {
            object.set("cancel", .bool(true))
        }
        if sequence > 0 { object.set("sequence", .int(sequence)) }
        return JSONWriter.bytes(.object(object))
    }

    /// The fallback text a creator sends with it.
    public var fallback: String {
        expiresAtMs.map { "Conversation expires at \(ISO8601.string(fromMillis: $0))" } ?? "Explosion cancelled"
    }

    /// Reads the content of a `convos.org/explode_settings:1.0`; `malformed_message` for
    /// anything but the shapes of docs/protocol/explode-schedule.md §2.
    static func decode(_ value: JSONValue) throws(PushError) -> ExplodeSchedule {
        var sequence: Int64 = 0
        if let raw = value["sequence"] {
            guard let number = raw.int64, number >= 1, number <= maxSequence else {
                throw PushError(.malformedMessage, "explode_settings sequence is not an integer from 1 to 2^53-1")
            }
            sequence = number
        }
        var cancel = false
        if let raw = value["cancel"] {
            guard let flag = raw.bool else { throw PushError(.malformedMessage, "explode_settings cancel is not a boolean") }
            cancel = flag
        }
        if cancel {
            guard value["expiresAt"] == nil else {
                throw PushError(.malformedMessage, "explode_settings has both expiresAt and cancel")
            }
            guard sequence > 0 else { throw PushError(.malformedMessage, "explode_settings cancel has no sequence") }
            return ExplodeSchedule(sequence: sequence, expiresAtMs: nil)
        }
        guard let text = value["expiresAt"]?.string else {
            throw PushError(.malformedMessage, "convos.org/explode_settings:1.0 expiresAt is missing or malformed")
        }
        guard let ms = ISO8601.millis(from: text) else {
            throw PushError(.malformedMessage, "expiresAt is not an ISO 8601 UTC date")
        }
        return ExplodeSchedule(sequence: sequence, expiresAtMs: ms)
    }
}
