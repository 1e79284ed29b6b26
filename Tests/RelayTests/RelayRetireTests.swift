import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// What a retired mailbox leaves on the relay (docs/adr/0030), with a real nats-server and
/// real sotto-relayd processes: a push published after the purge expires with the stream's
/// age limit; a stream made without one gets it; a relayd killed between purge and consumer
/// delete, or stopped while an identity was deleted, finishes the retirement after a restart
/// from its mailbox record, without touching another device's consumer on the same relay; a
/// garbage record retires nothing.
@Suite("relay: retired mailboxes", .serialized, .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
struct RelayRetireTests {
    private static let crashPoint = "relayd.retire.purged"

    // MARK: - (a) the stream's age limit

    @Test("a push published into a mailbox after relayd retired it is deleted by the stream's age limit")
    func latePushExpires() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        // relayd connects first, so it creates the stream (with the test's short age).
        try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "500", "--gone-after-ms", "300",
                                        "--test-mailbox-max-age-ms", "5000"])
        #expect(try rig.publisher().streamMaxAgeMs() == 5_000)
        let keystore = try Keystore(directory: rig.fixture.group.keystorePath, environment: [:])
        let retired = Identity.generate()
        try keystore.save(retired)
        let box = try Mailbox(clientId: retired.clientId)
        try waitUntil("a consumer for \(box)", timeout: 60) { try rig.publisher().consumerState(box) != nil }
        try keystore.delete(inboxId: retired.inboxId)
        try waitUntil("the consumer deleted", timeout: 60) { try rig.publisher().consumerState(box) == nil }

        // A member that has not heard of the explode yet publishes into it.
        _ = try rig.publisher().publish(Array("late".utf8), to: box, messageId: "late-push")
        #expect(try rig.publisher().storedCount(box) == 1)
        try waitUntil("the late push expired", timeout: 60) { try rig.publisher().storedCount(box) == 0 }
    }

    @Test("a stream made without an age limit gets one from relayd, and from any creator's ensureStream; an operator's limit is kept")
    func legacyStreamGetsTheLimit() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        // The stream as devices made it before ADR 0030, holding a push for a mailbox no one consumes.
        let old = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(rig.server.url)))
        defer { old.close() }
        #expect(try old.ensureStream(MailboxStream(maxAgeMs: 0)) == .created)
        #expect(try old.streamMaxAgeMs() == 0)
        let abandoned = try Mailbox(clientId: Identity.generate().clientId)
        _ = try old.publish(Array("forever?".utf8), to: abandoned, messageId: "abandoned")
        #expect(try old.storedCount(abandoned) == 1)

        try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "500", "--test-mailbox-max-age-ms", "3000"])
        #expect(try rig.publisher().streamMaxAgeMs() == 3_000)
        #expect(rig.relaydOutput.contains { $0.contains("mailbox stream had no age limit") })
        try waitUntil("the abandoned push expired", timeout: 60) { try old.storedCount(abandoned) == 0 }
        // The limit stays; a later ensureStream (the daemon's, another device's) keeps it.
        #expect(try old.ensureStream() == .found(maxAgeMs: 3_000))
    }

    @Test("ensureStream: the default definition is 30 days; an old stream gets it added; an operator's limit is left alone")
    func streamDefinition() throws {
        for (existing, expected) in [(Int64(0), MailboxStreamCheck.ageLimitAdded(maxAgeMs: MailboxStream.defaultMaxAgeMs)),
                                     (7 * 86_400_000, .found(maxAgeMs: 7 * 86_400_000))] {
            let dir = try TemporaryDirectory(prefix: "sotto-stream")
            defer { dir.remove() }
            let server = try NatsServer.start(storeDirectory: dir.path + "/js")
            defer { server.stop() }
            let relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
            defer { relay.close() }
            #expect(try relay.ensureStream(MailboxStream(maxAgeMs: existing)) == .created)
            #expect(try relay.ensureStream() == expected)
            #expect(try relay.streamMaxAgeMs() == (existing == 0 ? MailboxStream.defaultMaxAgeMs : existing))
        }
        #expect(MailboxStream.defaultMaxAgeMs == 30 * 86_400_000)
        #expect(MailboxStream(maxAgeMs: 3_000).effectiveDuplicateWindowMs == 3_000)
    }

    @Test("--test-mailbox-max-age-ms refuses garbage and out-of-range values (exit 64)",
          arguments: ["soon", "", "-5", "999", "0", "2592000001", "1e4", "99999999999999999999"])
    func maxAgeOptionRefusesGarbage(value: String) throws {
        let dir = try TemporaryDirectory(prefix: "sotto-relayd-age")
        defer { dir.remove() }
        let result = try ChildProcess.run(try builtExecutable("sotto-relayd"), ["--test-mailbox-max-age-ms", value],
                                          environment: ["SOTTO_KEY_STORE": "file", "SOTTO_GROUP_DIR": dir.path + "/group", "SOTTO_RUNTIME_DIR": dir.path + "/run",
                                                        "SOTTO_RELAY": "nats://127.0.0.1:1"])
        #expect(result.status == 64, "\(result.stderr)")
        #expect(result.stderr.contains("--test-mailbox-max-age-ms takes milliseconds"), "\(result.stderr)")
    }

    // MARK: - (b) the mailbox record

    @Test("a consumer delete the relay refuses (its store cannot remove the consumer's directory) is retried within seconds, not at the next minute's rescan (issue #32)")
    func refusedDeleteIsRetriedSoon() throws {
        guard getuid() == 0 else {
            print("not root: cannot make the relay's store read-only under it; skipped")
            return
        }
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "500", "--gone-after-ms", "300"])
        let keystore = try Keystore(directory: rig.fixture.group.keystorePath, environment: [:])
        let retired = Identity.generate()
        try keystore.save(retired)
        let box = try Mailbox(clientId: retired.clientId)
        try waitUntil("a consumer for \(box)", timeout: 60) { try rig.publisher().consumerState(box) != nil }

        // What nats-server 2.9 answered under load ("unlinkat …/obs/…: directory not empty"):
        // the consumer's directory cannot be removed. A read-only bind mount over it does that.
        let directory = rig.server.storeDirectory + "/jetstream/$G/streams/\(Mailbox.streamName)/obs/\(box.durable)"
        #expect(FileManager.default.fileExists(atPath: directory), "the consumer's directory in the relay's store")
        for arguments in [["--bind", directory, directory], ["-o", "remount,ro,bind", directory]] {
            let mount = try ChildProcess.run("/usr/bin/mount", arguments)
            #expect(mount.status == 0, "mount \(arguments): \(mount.stderr)")
        }
        var mounted = true
        defer { if mounted { _ = try? ChildProcess.run("/usr/bin/umount", ["-l", directory]) } }

        try keystore.delete(inboxId: retired.inboxId)
        try waitUntil("relayd's delete refused", timeout: 60) {
            rig.relaydOutput.contains { $0.contains("relay cleanup failed") && $0.contains(box.description) }
        }
        #expect(try ChildProcess.run("/usr/bin/umount", ["-l", directory]).status == 0)
        mounted = false
        let refusedAt = Date()
        try waitUntil("the retirement finished", timeout: 60) {
            rig.relaydOutput.contains { $0.contains("identity gone: consumer deleted and mailbox purged: \(box)") }
        }
        let took = Date().timeIntervalSince(refusedAt)
        print("RELAY retirement retried \(String(format: "%.1f", took)) s after the refusal")
        #expect(took < 20, "retried after \(took) s: the minute's rescan, not a retry of its own")
        #expect(try rig.publisher().consumerState(box) == nil)
    }

    @Test("relayd killed between purge and consumer delete, or stopped while an identity is deleted: a restart finishes the retirement; another device's consumer stays")
    func restartFinishesRetirement() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        let other = try OtherDevice.start(rig: rig)
        defer { other.stop() }

        let arguments = ["--ack-wait-ms", "2000", "--retry-min-ms", "500", "--gone-after-ms", "300"]
        try rig.startRelayd(arguments: arguments, extraEnvironment: [CrashPoint.variable: Self.crashPoint])
        let keystore = try Keystore(directory: rig.fixture.group.keystorePath, environment: [:])
        let crashed = Identity.generate(), whileDown = Identity.generate()
        try keystore.save(crashed)
        try keystore.save(whileDown)
        let crashedBox = try Mailbox(clientId: crashed.clientId), downBox = try Mailbox(clientId: whileDown.clientId)
        for box in [crashedBox, downBox] {
            try waitUntil("a consumer for \(box)", timeout: 60) { try rig.publisher().consumerState(box) != nil }
        }
        _ = try rig.publisher().publish(Array("{}".utf8), to: crashedBox, messageId: "held")

        // Killed at the crash point: purged, consumer left.
        try keystore.delete(inboxId: crashed.inboxId)
        try waitUntil("relayd killed at \(Self.crashPoint)", timeout: 60) { rig.relayd?.isRunning == false }
        rig.killRelayd()
        #expect(try rig.publisher().consumerState(crashedBox) != nil, "the crash point is between purge and delete")
        #expect(try rig.publisher().storedCount(crashedBox) == 0)

        // And one more identity deleted while relayd is down.
        try keystore.delete(inboxId: whileDown.inboxId)
        try rig.startRelayd(arguments: arguments)
        for box in [crashedBox, downBox] {
            try waitUntil("the consumer of \(box) deleted after the restart", timeout: 60) {
                try rig.publisher().consumerState(box) == nil
            }
        }
        try waitUntil("the record no longer lists them", timeout: 60) {
            let text = (try? String(contentsOfFile: rig.recordPath, encoding: .utf8)) ?? ""
            return text.contains(rig.mailbox.clientId) && !text.contains(crashed.clientId) && !text.contains(whileDown.clientId)
        }
        #expect(try rig.publisher().consumerState(other.mailbox) != nil, "another device's consumer stays")
        #expect(try rig.publisher().consumerState(rig.mailbox) != nil)
        #expect(other.relayd.isRunning)
    }

    @Test("a garbage, oversized, foreign or non-file record: a clear log line, relayd keeps running, nothing retired, the record rewritten",
          arguments: RecordGarbage.allCases)
    func garbageRecord(garbage: RecordGarbage) throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        let other = try OtherDevice.start(rig: rig)
        defer { other.stop() }
        // A clientId of ours that is not in the keystore sits in every variant, and another
        // device's: a lenient reader would retire (purge and delete) them.
        let stale = try Mailbox(clientId: Identity.generate().clientId)
        _ = try MailboxConsumer(relay: try rig.publisher(), mailbox: stale, ackWaitMs: 2_000)
        try garbage.plant(at: rig.recordPath, mentioning: [stale, other.mailbox], tmp: rig.fixture.tmp.path)

        // --gone-after-ms 1: a mailbox taken for ours would be retired at the very next scan.
        try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "500", "--gone-after-ms", "1"])
        try waitUntil("relayd refused the record", timeout: 60) {
            rig.relaydOutput.contains { $0.contains("ignoring the mailbox record") }
        }
        if garbage.isReplaceable {
            try waitUntil("the record rewritten from the keystore", timeout: 60) {
                MailboxRecordText.lines(at: rig.recordPath)?.first == "sotto-relayd mailboxes 1"
                    && MailboxRecordText.lines(at: rig.recordPath)?.contains(rig.mailbox.clientId) == true
            }
        } else {
            try waitUntil("relayd said it cannot write the record", timeout: 60) {
                rig.relaydOutput.contains { $0.contains("cannot write the mailbox record") }
            }
        }
        let line = rig.relaydOutput.first { $0.contains("ignoring the mailbox record") } ?? ""
        #expect(!line.contains(stale.clientId) && !line.contains(other.mailbox.clientId), "the log names the problem, not the content")
        // A scan well after the first (the one a retirement would have come from): an identity
        // added now is picked up by it.
        let later = Identity.generate()
        try Keystore(directory: rig.fixture.group.keystorePath, environment: [:]).save(later)
        let laterBox = try Mailbox(clientId: later.clientId)
        try waitUntil("the identity added later has its consumer", timeout: 60) {
            try rig.publisher().consumerState(laterBox) != nil
        }
        #expect(rig.relayd?.isRunning == true)
        #expect(try rig.publisher().consumerState(stale) != nil)
        #expect(try rig.publisher().consumerState(other.mailbox) != nil)
        #expect(!rig.relaydOutput.contains { $0.contains("identity gone") })
    }
}

// MARK: - Helpers

extension RelayRig {
    var recordPath: String { fixture.group.path + "/relayd-mailboxes" }
}

/// The record's lines, or nil when it cannot be read as text.
enum MailboxRecordText {
    static func lines(at path: String) -> [String]? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8), text.hasSuffix("\n") else { return nil }
        return text.dropLast().split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }
}

/// Another device on the same relay: its own group directory with one identity and its own
/// sotto-relayd, so its consumer is as real as ours.
struct OtherDevice {
    let relayd: LoggedProcess
    let mailbox: Mailbox

    static func start(rig: RelayRig) throws -> OtherDevice {
        let base = rig.fixture.tmp.path + "/other-device"
        let group = GroupDirectory(path: base + "/group")
        try group.create()
        let identity = Identity.generate()
        try Keystore(directory: group.keystorePath, environment: [:], createIfMissing: true).save(identity)
        let mailbox = try Mailbox(clientId: identity.clientId)
        let relayd = try LoggedProcess.launch(try builtExecutable("sotto-relayd"), ["--gone-after-ms", "300"], environment: [
            "SOTTO_KEY_STORE": "file", "SOTTO_GROUP_DIR": group.path, "SOTTO_RUNTIME_DIR": base + "/run", "SOTTO_RELAY": rig.server.url, "PATH": "/usr/bin:/bin",
        ])
        try waitUntil("the other device's consumer", timeout: 60) { try rig.publisher().consumerState(mailbox) != nil }
        return OtherDevice(relayd: relayd, mailbox: mailbox)
    }

    func stop() {
        relayd.signal(SIGTERM)
        _ = relayd.waitForExit()
    }
}

/// Records relayd must refuse as a whole.
enum RecordGarbage: String, CaseIterable, CustomTestStringConvertible, Sendable {
    case binary, oversized, badLine, noHeader, cutShort, empty, groupWritable, symlink, fifo, directory

    var testDescription: String { rawValue }

    /// False when relayd cannot replace it with a fresh record (a directory in its place).
    var isReplaceable: Bool { self != .directory }

    func plant(at path: String, mentioning boxes: [Mailbox], tmp: String) throws {
        let ids = boxes.map(\.clientId)
        let valid = "sotto-relayd mailboxes 1\n" + ids.joined(separator: "\n") + "\n"
        func write(_ bytes: [UInt8], mode: Int = 0o600) throws {
            guard FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: mode]) else {
                throw RelayRigFailure("cannot plant \(path)")
            }
        }
        switch self {
        case .binary: try write(Array(valid.utf8) + [0xff, 0xfe, 0x00, 0x0a])
        case .oversized: try write(Array(valid.utf8) + Array(repeating: UInt8(ascii: "\n"), count: 5 << 20))
        case .badLine: try write(Array(("sotto-relayd mailboxes 1\n" + ids[0] + "\n../../x\n" + ids[1] + "\n").utf8))
        case .noHeader: try write(Array((ids.joined(separator: "\n") + "\n").utf8))
        case .cutShort: try write(Array(valid.utf8.dropLast(5)))
        case .empty: try write([])
        case .groupWritable: try write(Array(valid.utf8), mode: 0o620)
        case .symlink:
            try Data(valid.utf8).write(to: URL(fileURLWithPath: tmp + "/elsewhere"))
            try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: tmp + "/elsewhere")
        case .fifo: guard mkfifo(path, 0o600) == 0 else { throw RelayRigFailure("mkfifo: errno \(errno)") }
        case .directory: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        }
    }
}
