import Foundation
import SottoCrypto
import TestSupport
import SottoWire

/// A device outside systemd that talks through the same relay as the systemd-installed one:
/// a `Device` (its own `sotto daemon`, push.sock with the real worker) started with
/// `SOTTO_RELAY`, and its own `sotto-relayd` in the foreground.
///
/// ```swift
/// let peer = try RelayPeerDevice.start(in: tmp.path, relay: server.url, user: "u", password: "p")
/// defer { peer.stop() }
/// let id = try peer.send(conversation, "hello")
/// ```
final class RelayPeerDevice: @unchecked Sendable {
    let device: Device
    let relayd: LoggedProcess

    private init(device: Device, relayd: LoggedProcess) {
        self.device = device
        self.relayd = relayd
    }

    /// Starts the daemon, push socket and sotto-relayd, logging in with `user` and `password`;
    /// returns once relayd is connected.
    static func start(in parent: String, relay: String, user: String, password: String) throws -> RelayPeerDevice {
        let device = try Device.start("peer", in: parent, environment: [
            "SOTTO_RELAY": relay, "SOTTO_RELAY_USER": user, "SOTTO_RELAY_PASSWORD": password,
        ])
        let relayd: LoggedProcess
        do {
            relayd = try LoggedProcess.launch(try builtExecutable("sotto-relayd"), ["--ack-wait-ms", "3000", "--retry-min-ms", "200"],
                                              environment: device.environment.merging(["PATH": "/usr/bin:/bin"]) { $1 })
        } catch {
            device.stop()
            throw error
        }
        let peer = RelayPeerDevice(device: device, relayd: relayd)
        guard relayd.waitForLine(containing: "relay connected:", timeout: 60) else {
            peer.stop()
            throw Device.Failure(message: "the peer's sotto-relayd did not connect: \(relayd.output.suffix(8))")
        }
        return peer
    }

    /// Sends `text` and returns the new message's id.
    func send(_ conversation: String, _ text: String) throws -> String {
        guard let id = try device.json(["send", conversation, text])["messageId"] as? String else {
            throw Device.Failure(message: "the peer's send returned no messageId")
        }
        return id
    }

    /// The outbox states of our message `id` (one per member it goes to).
    func outboxStates(_ id: String) throws -> [String] {
        try device.query("SELECT state FROM outbox WHERE messageId = ?", [.text(id)]).map { try $0.string(0) }
    }

    /// Texts of the conversation's incoming text messages, oldest first.
    func receivedTexts(_ conversation: String) -> [String] {
        device.messages(conversation).filter { $0["outgoing"] as? Bool == false && $0["contentType"] as? String == ContentType.text }
            .compactMap { $0["text"] as? String }
    }

    func stop() {
        relayd.signal(SIGTERM)
        _ = relayd.waitForExit()
        device.stop()
    }
}
