import Foundation
import SottoCrypto
import SottoWire

/// `../shared/tools/open_push.py`: an independent reader of version-1 pushes, written from
/// PROTOCOL.md with pyca/cryptography, for tests that check what Sotto *sends*. It opens a push
/// with the recipient's key and verifies the signed message inside.
///
/// ```swift
/// let opened = try IndependentReader.open(payload, recipient: bobIdentity, topic: trip.topic)
/// opened.contentType   // "xmtp.org/text:1.0"; opened.content is the decoded bytes
/// ```
public enum IndependentReader {
    /// What the reader printed for a push it opened and verified (signature valid, low S).
    public struct Opened: @unchecked Sendable {
        public let fields: [String: Any]
        public var contentType: String { fields["contentType"] as? String ?? "" }
        public var id: String { fields["id"] as? String ?? "" }
        public var senderInboxId: String { fields["senderInboxId"] as? String ?? "" }
        public var conversationId: String { fields["conversationId"] as? String ?? "" }
        public var content: [UInt8] { (fields["content"] as? String).flatMap(Base64URL.decode) ?? [] }
    }

    public struct Refusal: Error, CustomStringConvertible {
        public let description: String
    }

    public static var toolPath: String { PackagePaths.shared.appendingPathComponent("tools/open_push.py").path }

    /// Opens `payload` (a push as a sender writes it, without its LF) with `recipient`'s key;
    /// `topic` for a push that omits it (a relay's). Throws with the reader's own error when
    /// it does not open or does not verify.
    public static func open(_ payload: [UInt8], recipient: Identity, topic: String? = nil) throws -> Opened {
        var arguments = [toolPath, "--key", Hex.encode(recipient.privateKey.exportBytes())]
        if let topic { arguments += ["--topic", topic] }
        let run = try ChildProcess.run("/usr/bin/env", ["python3"] + arguments, stdinBytes: payload)
        guard let object = try? JSONSerialization.jsonObject(with: Data(run.stdout.utf8)) as? [String: Any] else {
            throw Refusal(description: "open_push.py printed no JSON (exit \(run.status)): \(run.stderr.prefix(300))")
        }
        guard run.status == 0, object["signatureValid"] as? Bool == true, object["lowS"] as? Bool == true else {
            throw Refusal(description: "open_push.py refused it (exit \(run.status)): \(object["error"] ?? object)")
        }
        return Opened(fields: object)
    }
}
