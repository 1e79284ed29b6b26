import Foundation
import SottoWire
import TestSupport

/// How a test delivers a push to the real `sotto-notify` binary.
enum DeliveryMode: String, CaseIterable, CustomStringConvertible, Sendable {
    /// systemd-socket-activate --accept: one worker per connection, the connection on fd 3.
    case acceptYes
    /// systemd-socket-activate without --accept: one worker handed the listening socket.
    case acceptNo
    /// `sotto-notify --payload -`: payload on stdin, ack on stdout.
    case payloadStdin

    var description: String { rawValue }
}

/// Runs the built worker against a fixture and returns what the sender saw.
///
/// ```swift
/// let ack = try WorkerRun.deliver(push.payload, mode: .acceptYes, fixture: f)
/// #expect(ack == .ok(messageId: push.messageId, duplicate: false))
/// ```
enum WorkerRun {
    static func worker() throws -> String { try builtExecutable("sotto-notify") }

    /// Delivers `payload` (LF-terminated) once and returns the parsed ack; throws if the ack
    /// line is not a valid ack.
    /// `body`: the bytes that follow the payload's LF (docs/protocol/bodies.md §5).
    static func deliver(_ payload: [UInt8], body: [UInt8]? = nil, mode: DeliveryMode, fixture: WorkerFixture,
                        extraEnvironment: [String: String] = [:]) throws -> PushAck {
        signal(SIGPIPE, SIG_IGN)  // a worker that answers before reading the body closes on it
        let environment = fixture.environment.merging(extraEnvironment) { $1 }
        let line: String
        switch mode {
        case .payloadStdin:
            let result = try ChildProcess.run(try worker(), ["--payload", "-"], environment: environment,
                                              stdinBytes: payload + [0x0a] + (body ?? []))
            line = result.stdout.trimmingCharacters(in: .newlines)
        case .acceptYes, .acceptNo:
            let server = try PushSocketServer.start(
                socketPath: fixture.tmp.path + "/push.sock", accept: mode == .acceptYes,
                command: mode == .acceptYes ? [try worker()] : [try worker(), "--idle-timeout", "0.2"],
                environment: environment)
            defer { server.stop() }
            line = try PushClient.send(payload, body: body, to: server.socketPath)
        }
        guard let ack = PushAck.parse(Array(line.utf8)) else {
            throw PushClient.Failure(message: "not an ack: \(line)")
        }
        return ack
    }

    /// The error code of an ack, or nil for ok.
    static func errorCode(_ ack: PushAck) -> String? {
        if case .error(let error) = ack { return error.code.rawValue }
        return nil
    }
}
