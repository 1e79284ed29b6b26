import Glibc
import ControlProtocol
import SottoClient
import SottoWire
import Synchronization

/// What `sotto watch` prints for each event of its `ChangeFeedSession`: changes and gap
/// lines on stdout (JSON with `--json`), the daemon going away and coming back on stderr.
///
/// ```swift
/// let output = WatchOutput(json: false, since: nil)
/// output.show(.disconnected(reason: "the daemon closed the connection"))
/// // stderr: sotto: the daemon went away (the daemon closed the connection); reconnecting… (Ctrl-C to stop)
/// ```
final class WatchOutput: Sendable {
    private let json: Bool
    /// The seq of the last change printed (or where the feed stood when it was first joined).
    private let state: Mutex<(lastSeq: Int64?, reconnecting: Bool)>

    init(json: Bool, since: Int64?) {
        self.json = json
        state = Mutex((since, false))
    }

    func show(_ event: ChangeFeedSession.Event) {
        switch event {
        case .connected(let lastSeq, let gap):
            let (resumed, after) = state.withLock { state -> (Bool, Int64) in
                defer { state.reconnecting = false }
                if state.lastSeq == nil { state.lastSeq = lastSeq }
                return (state.reconnecting, state.lastSeq ?? lastSeq)
            }
            if resumed { StandardError.line("sotto: the daemon is back; going on after #\(after)") }
            if let gap { show(gap) }
        case .changes(let changes):
            for change in changes {
                print(json ? WatchCommand.jsonLine(change) : WatchCommand.line(change))
                state.withLock { $0.lastSeq = change.seq }
            }
            fflush(nil)
        case .disconnected(let reason):
            state.withLock { $0.reconnecting = true }
            StandardError.line("sotto: the daemon went away (\(CLIOutput.line(reason))); reconnecting… (Ctrl-C to stop)")
        case .refused:
            break   // `follow` returns the refusal: the command exits with it
        }
    }

    /// Never skip changes in silence: say which ones are missing and why.
    private func show(_ gap: ChangeGap) {
        let resumed = gap.resumedAtSeq.map { "#\($0)" } ?? "the end"
        let line = "gap: changes after #\(gap.afterSeq) before \(resumed) cannot be read: \(gap.reason); \(gap.remedy)"
        StandardError.line("sotto: \(line)")
        print(json ? InertText.json((["gap": gap.json] as JSONValue).sortedCompactText) : line)
        fflush(nil)
    }
}
