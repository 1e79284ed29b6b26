import ArgumentParser
import ControlProtocol
import FoundationEssentials
import SottoClient
import SottoWire

/// `sotto explode`: delete a conversation on every member's device (creator only), now or
/// at a set time; again to change that time, `--cancel` to call it off
/// (docs/protocol/explode-schedule.md).
struct ExplodeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explode", abstract: "Explode a conversation you created: every device deletes it.",
        discussion: """
            Without --in/--at the conversation is deleted now, after the explode message went to
            every member (or the daemon gave up waiting). With --in 1h or --at TIME every device
            deletes it at that time. Run it again to move that time (later, earlier, or now without
            --in/--at); --cancel calls the explosion off. Every device follows the latest decision;
            once the time has passed the conversation is gone and cannot be brought back. Only the
            creator may explode a conversation (exit 65 otherwise).
            """)

    @Argument(help: "Conversation id, or a unique prefix of it.")
    var conversation: String

    @Option(name: .customLong("in"), help: "Explode after this long, e.g. 10m, 1h.")
    var after: String?

    @Option(name: .long, help: "Explode at this time, ISO 8601 UTC (2026-05-01T18:00:00Z).")
    var at: String?

    @Flag(name: .long, help: "Call off the scheduled explosion.")
    var cancel = false

    @OptionGroup var client: ClientOptions

    func validate() throws {
        if after != nil && at != nil { throw ValidationError("give --in or --at, not both") }
        if cancel && (after != nil || at != nil) { throw ValidationError("give --cancel alone, without --in or --at") }
        if let after, DurationParser.milliseconds(after) == nil {
            throw ValidationError("--in must be a duration from 1ms to \(DurationParser.maximumText), such as 30s, 10m or 1h")
        }
        if let at {
            guard let ms = ISO8601.millis(from: at) else {
                throw ValidationError("--at must be ISO 8601 UTC, e.g. 2026-05-01T18:00:00Z")
            }
            if ms - WallClock.nowMs() > DurationParser.maximumMs {
                throw ValidationError("--at must be at most \(DurationParser.maximumText) from now")
            }
        }
    }

    func run() throws {
        var atMs: Int64?
        // Both bounded (validate): the sum stays far from overflow.
        if let after, let ms = DurationParser.milliseconds(after) { atMs = WallClock.nowMs() + ms }
        if let at, let ms = ISO8601.millis(from: at) { atMs = ms }
        try client.call(ClientRequests.explode(conversation: conversation, atMs: atMs, cancel: cancel)) { result in
            guard let expiresAtMs = result.expiresAtMs else {
                return "\(result.conversationId) will not explode: cancelled on every device; told \(result.delivered) member(s), \(result.undelivered) not reached yet"
            }
            if result.deleted {
                // The unreachable ones are told when they come back: the notice outlives the
                // conversation here (docs/adr/0034; `sotto status` counts what waits).
                let later = result.undelivered > 0 ? " (told when they are back, for up to 30 days)" : ""
                return "exploded \(result.conversationId): told \(result.delivered) member(s), \(result.undelivered) unreachable\(later); deleted here"
            }
            let when = ISO8601.string(fromMillis: expiresAtMs)
            return "\(result.conversationId) will explode at \(when) on every device; told \(result.delivered) member(s), \(result.undelivered) not reached yet"
        }
    }
}
