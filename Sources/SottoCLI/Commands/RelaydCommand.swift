import ArgumentParser
import FoundationEssentials
import SottoWire

/// `sotto relayd`: runs the relay receiver in the foreground by exec'ing `sotto-relayd` from
/// the directory of this binary, with the same environment (`SOTTO_RELAY`, credentials,
/// `SOTTO_GROUP_DIR`, `SOTTO_RUNTIME_DIR`) and any arguments passed through.
///
/// ```
/// SOTTO_RELAY=nats://127.0.0.1:4222 sotto relayd --ack-wait-ms 40000
/// ```
struct RelaydCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "relayd",
        abstract: "Run the relay receiver (sotto-relayd) in the foreground.",
        discussion: """
            Replaces this process with sotto-relayd from the same directory. It holds one
            durable consumer per identity on the relay named by SOTTO_RELAY
            (nats://HOST:PORT or tls://HOST:PORT; credentials in SOTTO_RELAY_CREDS,
            SOTTO_RELAY_USER/SOTTO_RELAY_PASSWORD or SOTTO_RELAY_SIGNING_KEY) and hands
            each message to push.sock.
            Arguments after `relayd` go to sotto-relayd (try `sotto relayd --help`).

            Exit status: that of sotto-relayd (78: malformed relay URL or credentials,
            64: usage), or 1 if it cannot be started.
            """)

    @Argument(parsing: .captureForPassthrough, help: "Arguments for sotto-relayd.")
    var arguments: [String] = []

    func run() throws {
        let reason = SiblingExecutable.replaceProcess(with: SiblingExecutable.path("sotto-relayd"), arguments: arguments)
        StandardError.line("sotto relayd: \(reason)")
        throw ExitCode(1)
    }
}
