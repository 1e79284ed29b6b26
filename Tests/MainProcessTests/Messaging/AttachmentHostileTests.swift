import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// Issue #35, second layer, hostile senders (docs/adr/0074): an attachment message from a
/// member whose file name carries terminal escapes, BEL, markup and a right-to-left override
/// reaches Alice's real worker and daemon, and her real `sotto read`, `sotto watch` and desktop
/// notification (a real notification server that reads markup) show it inert; with the
/// preview hiding texts the notification says who sent a photo, never the name. A reference
/// that is not one is refused with `malformed_message` and nothing is written.
@Suite("Attachments from a hostile member", .serialized, .timeLimit(.minutes(3)))
struct AttachmentHostileTests {
    static let hostileName = "\u{1B}[2Jphoto \u{1B}]0;pwned\u{07}<b>x</b>\u{07}\u{202E}gpj.exe"
    static let inertName = "␛[2Jphoto ␛]0;pwned␇<b>x</b>␇<U+202E>gpj.exe"

    static func reference(name: String = hostileName, mediaType: String = "image/jpeg") -> AttachmentReference {
        AttachmentReference(id: SecureRandom.bytes(16), size: 1_258_291, sha256: SecureRandom.bytes(32), key: SecureRandom.bytes(32),
                            name: name, mediaType: mediaType)
    }

    @Test("a hostile file name is inert in read, watch and the notification (escaped for markup); the name-only preview says who sent a file, not its name")
    func hostileNameIsInert() async throws {
        try await onOwnThread { try self.hostileNameSteps() }
    }

    private func hostileNameSteps() throws {
        let server = try TestNotificationServer(capabilities: TestNotificationServer.markupCapabilities)
        // Mallory's file stays `waiting` (her endpoint serves no file): the line shows that state.
        let net = try Network(["alice"], environment: ["DBUS_SESSION_BUS_ADDRESS": server.address, "SOTTO_OPEN_COMMAND": "/bin/true"]
                                .merging(AttachmentDirectFetchTests.noAutomaticFetch) { $1 })
        let alice = net["alice"]
        let sotto = try builtExecutable("sotto")
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String, "conversationId")
        let mallory = try RemoteMember.join(conversationId: trip, databasePath: alice.group.databasePath, name: "Mallory")
        // The worker shows a member with no (readable) profile name by its inbox id's first 8 characters.
        let sender = String(mallory.identity.inboxId.prefix(8))
        try NotificationMarkupTests.waitForDesktopNotifications(alice)

        let push = { (reference: AttachmentReference, id: String) throws in
            let ack = try PushClient.send(try mallory.push(contentType: ContentType.attachment, content: reference.encode(),
                                                           fallback: AttachmentReference.outerFallback, id: id),
                                          to: alice.runtime.pushSocketPath)
            #expect(ack.hasPrefix(#"{"ok":true"#), "ack: \(ack)")
        }
        let first = Hex.encode(SecureRandom.bytes(16))
        try push(Self.reference(), first)

        // The notification: who sent a photo, and the name inert and markup-escaped.
        let shown = try NotificationMarkupTests.next(server) { $0.body.contains("sent a photo") }
        #expect(shown.summary == "Trip")
        #expect(shown.body == "\(sender) sent a photo: ␛[2Jphoto ␛]0;pwned␇&lt;b&gt;x&lt;/b&gt;␇&lt;U+202E&gt;gpj.exe", "\(shown.body)")
        #expect(NotificationMarkupTests.controls(shown.body).isEmpty, "\(shown.body)")

        // With the preview hiding texts: never the name.
        _ = try alice.json(["notifications", trip, "--preview", "name"])
        try push(Self.reference(mediaType: "application/pdf"), Hex.encode(SecureRandom.bytes(16)))
        let hidden = try NotificationMarkupTests.next(server) { $0.body.contains("sent a") }
        #expect(hidden.body == "\(sender) sent a file", "\(hidden.body)")

        // --json: the exact name, in the attachment object.
        try alice.waitUntil("alice stores both") { alice.messages(trip).filter { $0["attachment"] != nil }.count == 2 }
        let attachment = try require(alice.messages(trip).first { $0["id"] as? String == first }?["attachment"] as? [String: Any])
        #expect(attachment["name"] as? String == Self.hostileName && attachment["state"] as? String == "waiting", "\(attachment)")
        #expect(attachment["size"] as? Int == 1_258_291 && attachment["mediaType"] as? String == "image/jpeg", "\(attachment)")

        // sotto read on a real terminal: nothing obeyed, the words there.
        let read = try PseudoTerminal.run(sotto, ["read", trip], environment: alice.environment)
        #expect(read.status == 0)
        #expect(UntrustedTextTests.obeyed(read.bytes).isEmpty, "\(UntrustedTextTests.obeyed(read.bytes))")
        let readText = UntrustedTextTests.shown(read.bytes)
        #expect(readText.contains("\(sender): 📎 \(Self.inertName) (1.2 MiB, waiting)"), "\(readText)")

        // sotto watch, replaying from the start: one line, nothing obeyed.
        let watch = try PseudoTerminal.launch(sotto, ["watch", "--since", "0"], environment: alice.environment)
        try watch.waitForOutput { UntrustedTextTests.shown($0).components(separatedBy: "(1.2 MiB, waiting)").count == 3 }
        watch.signal(SIGKILL)
        watch.waitForExit()
        #expect(UntrustedTextTests.obeyed(watch.bytes).isEmpty, "\(UntrustedTextTests.obeyed(watch.bytes))")
        #expect(UntrustedTextTests.shown(watch.bytes).contains("\(sender): 📎 \(Self.inertName) (1.2 MiB, waiting)"))
    }

    @Test("references that are not one, from a member, through the real worker: malformed_message, nothing written")
    func malformedReferencesAreRefused() throws {
        let net = try Network(["alice"])
        let alice = net["alice"]
        let trip = try require(try alice.json(["new", "--name", "Trip"])["conversationId"] as? String, "conversationId")
        let mallory = try RemoteMember.join(conversationId: trip, databasePath: alice.group.databasePath, name: "Mallory")
        let good = try require(try JSONParser.parse(Self.reference(name: "ok.jpg").encode()).object, "the reference's object")
        func with(_ key: String, _ value: JSONValue?) -> [UInt8] {
            JSONWriter.bytes(.object(JSONObject(good.members.compactMap { member in
                member.key == key ? value.map { (key, $0) } : (member.key, member.value)
            } + (good[key] == nil ? [(key, value!)] : []))))
        }
        let garbage: [(String, [UInt8])] = [
            ("not JSON", Array("📎".utf8)),
            ("no name", with("name", nil)),
            ("an empty name", with("name", .string(""))),
            ("a size over 100 MiB", with("size", .int(Int64(AttachmentLayout.maxSize + 1)))),
            ("a length that is not the size's", with("length", .int(4_121))),
            ("an uppercase media type", with("mediaType", .string("image/JPEG"))),
            ("a short key", with("key", .string("00"))),
            ("a thumbnail that is not an image", with("thumbnail", .string(Base64URL.encode(Array("GIF89a".utf8))))),
        ]
        let before = try alice.query("SELECT (SELECT count(*) FROM message), (SELECT max(seq) FROM change_log)")[0]
        for (what, content) in garbage {
            let ack = try PushClient.send(try mallory.push(contentType: ContentType.attachment, content: content,
                                                           fallback: AttachmentReference.outerFallback),
                                          to: alice.runtime.pushSocketPath)
            #expect(ack.contains(#""error":"malformed_message""#), "\(what): \(ack)")
        }
        let after = try alice.query("SELECT (SELECT count(*) FROM message), (SELECT max(seq) FROM change_log)")[0]
        #expect(try after.int64(0) == before.int64(0) && after.int64(1) == before.int64(1))
        #expect(!FileManager.default.fileExists(atPath: alice.group.attachmentsPath))
    }
}
