import Foundation
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// What the worker does after the commit (the daemon datagram, the desktop notification),
/// and what it must not link.
@Suite("Worker after commit")
struct WorkerAfterCommitTests {
    private func fixture(conversationName: String? = "Trip", holdsCreatorKey: Bool = false) throws -> WorkerFixture {
        try WorkerFixture(vectors: try #require(try Vectors.load()), conversationName: conversationName,
                          holdsCreatorKey: holdsCreatorKey)
    }

    private func runStdin(_ push: WorkerFixture.Push, _ environment: [String: String]) throws
        -> (status: Int32, stdout: String, stderr: String) {
        try ChildProcess.run(try WorkerRun.worker(), ["--payload", "-"], environment: environment,
                             stdin: String(decoding: push.payload, as: UTF8.self) + "\n")
    }

    @Test("The daemon gets {\"seq\":N,\"pid\":P} on events.sock with N the change_log seq")
    func eventsDatagram() throws {
        let f = try fixture()
        let path = f.runtimeDirectory + "/events.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd); unlink(path) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        var timeout = timeval(tv_sec: 10, tv_usec: 0)   // a safety net only: the datagram comes first
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))

        let push = try f.sealText("ping the daemon")
        let worker = try ChildProcess.launch(try WorkerRun.worker(), ["--payload", "-"], environment: f.environment)
        worker.write(String(decoding: push.payload, as: UTF8.self) + "\n")
        let pid = worker.pid
        var buffer = [UInt8](repeating: 0, count: 256)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        let result = worker.finish()
        #expect(result.status == 0)
        #expect(n > 0)
        // Read with the daemon's parser (EventsSocketListener uses EventsDatagram.parse).
        let datagram = try #require(EventsDatagram.parse(buffer.prefix(max(n, 0))))
        let seq = try f.open().queryOne("SELECT max(seq) FROM change_log")?.int64(0)
        #expect(datagram.seq == seq)
        #expect(datagram.pid == Int64(pid))
    }

    @Test("No session bus: the push still succeeds, and the worker says so without loading libsystemd")
    func noBus() throws {
        let f = try fixture()
        let push = try f.sealText("quiet")
        let result = try runStdin(push, f.environment)   // DBUS_SESSION_BUS_ADDRESS points nowhere
        #expect(result.status == 0)
        #expect(try #require(PushAck.parse(Array(result.stdout.utf8))) == .ok(messageId: push.messageId, duplicate: false))
        // Said by the check that runs before dlopen (SessionBusAddress), with the path it looked at.
        let address = try #require(f.environment["DBUS_SESSION_BUS_ADDRESS"])
        #expect(result.stderr.contains("notification not shown: no session bus at " + address.dropFirst("unix:path=".count)),
                "\(result.stderr)")
    }

    // MARK: - Desktop notifications on a private session bus

    /// A private session bus watched for Notify calls (TestSupport).
    private typealias PrivateBus = NotificationBusMonitor

    @Test("Notify on the session bus: conversation name, then the sender's name and text, category im.received")
    func notifies() throws {
        let f = try fixture()
        let bus = try PrivateBus()
        let push = try f.sealText("see you at 7")
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        #expect(try runStdin(push, environment).status == 0)
        let calls = try bus.readCalls()
        #expect(calls.count == 1)
        let strings = try #require(calls.first)
        // app_name, app_icon, summary, body, then the hint key "category" and its value.
        #expect(strings.prefix(4) == ["Sotto", "", "Trip", "\(f.senderProfileName): see you at 7"])
        #expect(strings.contains("im.received"))
    }

    @Test("A 64 KiB text by reference is stored whole; its notification shows a bounded preview")
    func longTextPreview() throws {
        let f = try fixture()
        let bus = try PrivateBus()
        let text = "éclair " + String(repeating: "0123456789", count: 6_552)  // 65,528 bytes
        let content = Array(text.utf8)
        #expect(content.count <= ContentLimits.maxTextBytes)
        let push = f.byReference(contentType: ContentType.text, content: content)
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let result = try ChildProcess.run(try WorkerRun.worker(), ["--payload", "-"], environment: environment,
                                          stdinBytes: push.payload + [0x0a] + push.body)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try f.message(id: push.messageId)?.content == content)
        let strings = try #require(try bus.readCalls().first)
        let body = strings[3]
        #expect(body.hasPrefix("\(f.senderProfileName): éclair 0123"))
        #expect(body.hasSuffix("…"))
        #expect(body.count == "\(f.senderProfileName): ".count + 200 + 1)
    }

    @Test("What a notification shows follows the conversation's setting, else the device's", arguments: [
        (nil as String?, nil as String?, ["Trip", "Sam: the code is 4711"]),
        ("name", nil, ["Trip", "Sam: New message"]),
        ("none", nil, ["Sotto", "New message"]),
        ("none", "full", ["Trip", "Sam: the code is 4711"]),
        (nil, "none", ["Sotto", "New message"]),
        ("full", "name", ["Trip", "Sam: New message"]),
    ])
    func previewSetting(device: String?, conversation: String?, expected: [String]) throws {
        let f = try fixture()
        if let device {
            try f.open().run("INSERT INTO device_setting(key, value) VALUES ('notificationPreview', ?)", [.text(device)])
        }
        if let conversation {
            try f.open().run("UPDATE conversation_local_state SET notificationPreview = ? WHERE conversationId = ?",
                             [.text(conversation), .text(f.recipient.conversationId)])
        }
        let bus = try PrivateBus()
        let push = try f.sealText("the code is 4711")
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        #expect(try runStdin(push, environment).status == 0)
        let strings = try #require(try bus.readCalls().first)
        #expect(Array(strings[2...3]) == expected)
        if expected[1] != "Sam: the code is 4711" { #expect(!strings.contains { $0.contains("4711") }) }
    }

    @Test("A notification server that never answers does not hold the worker")
    func stalledServerDoesNotHoldTheWorker() throws {
        let f = try fixture()
        let bus = try PrivateBus(stalledServer: true)
        let push = try f.sealText("are you there")
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let result = try runStdin(push, environment)
        #expect(result.status == 0)
        #expect(try #require(PushAck.parse(Array(result.stdout.utf8))) == .ok(messageId: push.messageId, duplicate: false))
        // Waiting for a reply ends in a timeout that the worker reports; sent without
        // expecting one, the call is on the bus and the worker has nothing to wait for.
        #expect(!result.stderr.contains("notification not shown"), "\(result.stderr)")
        #expect(try bus.readCalls().count == 1)
    }

    @Test("A libsystemd that does not load is said in the log, nothing is posted, and the push is stored")
    func libsystemdThatDoesNotLoad() throws {
        let f = try fixture()
        let bus = try PrivateBus()
        // Found first on the library path: what a worker meets whose libsystemd is gone, or
        // whose static libc no longer matches the machine's (docs/adr/0055).
        let libraries = f.tmp.path + "/broken-libs"
        try FileManager.default.createDirectory(atPath: libraries, withIntermediateDirectories: true)
        try Data("not an ELF object".utf8).write(to: URL(fileURLWithPath: libraries + "/libsystemd.so.0"))
        let push = try f.sealText("unseen")
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["LD_LIBRARY_PATH"] = libraries
        let result = try runStdin(push, environment)
        #expect(result.status == 0)
        #expect(try #require(PushAck.parse(Array(result.stdout.utf8))) == .ok(messageId: push.messageId, duplicate: false))
        #expect(result.stderr.contains("notification not shown: libsystemd not loaded: "), "\(result.stderr)")
        #expect(try bus.readCalls().isEmpty)
    }

    @Test("Unnamed conversation: the summary is the sender's profile name")
    func notifiesWithSenderName() throws {
        let f = try fixture(conversationName: nil)
        let bus = try PrivateBus()
        let push = try f.sealText("hello")
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        #expect(try runStdin(push, environment).status == 0)
        let calls = try bus.readCalls()
        #expect(calls.first?.prefix(4) == ["Sotto", "", f.senderProfileName, "hello"])
    }

    @Test("A sender without a profile name is shown by a short inbox id, and only then")
    func notifiesWithShortIdWithoutName() throws {
        let f = try fixture()
        try f.open().run("UPDATE member_profile SET name = '' WHERE inboxId = ?", [.text(f.senderKey.publicKey.inboxId)])
        let bus = try PrivateBus()
        let push = try f.sealText("who am i")
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        #expect(try runStdin(push, environment).status == 0)
        let calls = try bus.readCalls()
        #expect(calls.first?.prefix(4) == ["Sotto", "", "Trip", "\(f.senderKey.publicKey.inboxId.prefix(8)): who am i"])
    }

    @Test("Muted conversation: stored, no Notify call")
    func mutedIsSilent() throws {
        let f = try fixture()
        try f.open().run("UPDATE conversation_local_state SET muted = 1 WHERE conversationId = ?",
                         [.text(f.recipient.conversationId)])
        let bus = try PrivateBus()
        let push = try f.sealText("shh")
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        #expect(try runStdin(push, environment).status == 0)
        #expect(try bus.readCalls().isEmpty)
        #expect(try f.message(id: push.messageId) != nil)
    }

    @Test("An explosion's notification never shows its content")
    func explodeNotificationHidesContent() throws {
        let f = try fixture(holdsCreatorKey: true)
        let bus = try PrivateBus()
        let expiresAt = f.now + 3_600_000
        let content = Array("{\"expiresAt\":\"\(ISO8601.string(fromMillis: expiresAt))\"}".utf8)
        let push = try f.seal(contentType: ContentType.explodeSettings, content: content, fallback: "secret fallback",
                              signer: f.creatorKey)
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        #expect(try runStdin(push, environment).status == 0)
        #expect(try f.conversationExpiresAt() == expiresAt)
        let calls = try bus.readCalls()
        for call in calls { #expect(!call.contains { $0.contains("secret fallback") || $0.contains("expiresAt") }) }
    }

    @Test("A refused join says why in this device's words, never the creator's bytes")
    func joinRefusedNotification() throws {
        let f = try fixture(holdsCreatorKey: true)
        let creatorKey = try #require(f.creatorKey)
        // The recipient waits on a join: pending, with the request it sent.
        let requestId = Hex.encode(SecureRandom.bytes(16))
        let conn = try f.open()
        try conn.run("UPDATE conversation SET state = 'pendingJoin' WHERE id = ?", [.text(f.recipient.conversationId)])
        try conn.run("""
            INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content, isOutgoing)
            VALUES (?, ?, ?, 1, 1, ?, X'7b7d', 1)
            """, [.text(requestId), .text(f.recipient.conversationId), .text(f.recipient.inboxId), .text(ContentType.joinRequest)])
        let bus = try PrivateBus()
        let push = try f.seal(contentType: ContentType.joinRefused,
                              content: Array("{\"joinRequestId\":\"\(requestId)\",\"reason\":\"revoked\",\"note\":\"secret words\"}".utf8),
                              fallback: "secret fallback", signer: creatorKey)
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        #expect(try runStdin(push, environment).status == 0)
        let calls = try bus.readCalls()
        #expect(calls.count == 1)
        let strings = try #require(calls.first)
        #expect(strings.prefix(4) == ["Sotto", "", "Trip", "Your request to join was refused: the invite was revoked"])
        for call in calls { #expect(!call.contains { $0.contains("secret") }) }
    }

    @Test("A cancelled explosion: the real worker clears the time and says so, without the content; a late older decision says nothing")
    func explodeCancelNotification() throws {
        let f = try fixture(holdsCreatorKey: true)
        let bus = try PrivateBus()
        var environment = f.environment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        for schedule in [ExplodeSchedule(sequence: 1, expiresAtMs: f.now + 3_600_000), ExplodeSchedule(sequence: 2, expiresAtMs: nil)] {
            let push = try f.seal(contentType: ContentType.explodeSettings, content: schedule.content,
                                  fallback: "secret fallback", signer: f.creatorKey)
            #expect(try runStdin(push, environment).status == 0)
            #expect(try f.conversationExpiresAt() == schedule.expiresAtMs)
        }
        // An older decision arriving late: stored, changes nothing, and tells nothing.
        let stale = ExplodeSchedule(sequence: 1, expiresAtMs: f.now + 7_200_000)
        let late = try f.seal(contentType: ContentType.explodeSettings, content: stale.content, fallback: "x", signer: f.creatorKey)
        #expect(try runStdin(late, environment).status == 0)
        #expect(try f.conversationExpiresAt() == nil)
        #expect(try f.message(id: late.messageId) != nil)
        let calls = try bus.readCalls()
        #expect(calls.contains { $0.contains { $0.contains("The explosion was cancelled") } }, "\(calls)")
        #expect(calls.contains { $0.contains { $0.contains("explodes at \(ISO8601.string(fromMillis: f.now + 3_600_000))") } }, "\(calls)")
        #expect(!calls.contains { $0.contains { $0.contains(ISO8601.string(fromMillis: f.now + 7_200_000)) } }, "\(calls)")
        for call in calls { #expect(!call.contains { $0.contains("secret fallback") || $0.contains("sequence") }) }
    }

    // MARK: - Log lines

    @Test("Under journald (JOURNAL_STREAM names stderr) a line is <N>text, without a second program[PID] prefix")
    func journalLines() throws {
        let f = try fixture()
        let push = try f.sealText("log me")
        // The shell sets JOURNAL_STREAM to its stderr's device:inode, as systemd does, then
        // becomes the worker.
        let script = "export JOURNAL_STREAM=$(stat -L -c %d:%i /proc/$$/fd/2); exec \"$0\" --payload -"
        let result = try ChildProcess.run("/bin/sh", ["-c", script, try WorkerRun.worker()], environment: f.environment,
                                          stdin: String(decoding: push.payload, as: UTF8.self) + "\n")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("<6>push stored message=\(push.messageId)"), "\(result.stderr)")
        #expect(!result.stderr.contains("sotto-notify["), "\(result.stderr)")
        // Not the journal (a terminal, a pipe): the program and PID stay.
        let plain = try runStdin(try f.sealText("log me too"), f.environment)
        #expect(plain.stderr.contains("<6>sotto-notify["), "\(plain.stderr)")
    }

    // MARK: - What the binary links

    @Test("sotto-notify is one static executable and links no Foundation and no NIO")
    func linksNoFoundation() throws {
        let worker = try WorkerRun.worker()
        // docs/adr/0055: nothing for the dynamic loader to do on each push.
        let dynamic = try ChildProcess.run("/usr/bin/readelf", ["--program-headers", "--dynamic", worker])
        #expect(dynamic.status == 0)
        #expect(!dynamic.stdout.contains("INTERP"), "sotto-notify asks for a dynamic loader")
        #expect(!dynamic.stdout.contains("(NEEDED)"), "sotto-notify needs shared libraries:\n\(dynamic.stdout)")
        let nm = try ChildProcess.run("/usr/bin/nm", ["-C", worker])
        #expect(nm.status == 0)
        #expect(nm.stdout.count > 1000, "nm printed no symbols")
        let offending = nm.stdout.split(separator: "\n").filter { $0.contains("Foundation") || $0.contains("NIO") }
        #expect(offending.isEmpty, "\(offending.prefix(5))")
    }
}
