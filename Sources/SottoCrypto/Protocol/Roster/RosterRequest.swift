import SottoWire

/// A member's request for the full roster, `sotto/roster_request:1.0` (docs/protocol/roster.md
/// §9): sent to the creator alone when the member's roster has a gap that did not fill; the
/// creator answers with the full roster to that member. `version` is the roster version the
/// member's device is at.
///
/// ```swift
/// RosterRequest(version: 41).encode()   // {"version":41}
/// ```
public struct RosterRequest: Sendable, Equatable {
    public let version: Int64

    public init(version: Int64) {
        self.version = version
    }

    public func encode() -> [UInt8] {
        JSONWriter.bytes(["version": .int(version)])
    }

    /// §9's shape rule: a JSON object whose `version` is an integer 0 … 2^53 − 1; other keys
    /// are ignored. Anything else is `malformed_message`.
    static func decode(_ value: JSONValue) throws(PushError) -> RosterRequest {
        guard let version = value["version"]?.int64, version >= 0, version <= RosterDelta.maxVersion else {
            throw PushError(.malformedMessage, "roster request version is missing or not an integer from 0 to 2^53-1")
        }
        return RosterRequest(version: version)
    }
}
