import Foundation
import RelayTransport
import SottoCrypto
import TestSupport
import Testing

/// sotto-relayd's edges: bad configuration stops it at once with a clear message and exit
/// status; identities that appear in or leave the keystore are picked up without a restart.
@Suite("sotto-relayd lifecycle", .serialized)
struct RelaydLifecycleTests {
    private func run(_ arguments: [String], environment: [String: String]) throws -> (status: Int32, stderr: String) {
        let dir = try TemporaryDirectory(prefix: "sotto-relayd-cfg")
        defer { dir.remove() }
        let base = ["SOTTO_GROUP_DIR": dir.path + "/group", "SOTTO_RUNTIME_DIR": dir.path + "/run"]
        let result = try ChildProcess.run(try builtExecutable("sotto-relayd"), arguments,
                                          environment: base.merging(environment) { $1 })
        return (result.status, result.stderr)
    }

    @Test("malformed SOTTO_RELAY: exit 78 and a message naming the problem, no connection attempted", arguments: [
        "relay.example:4222", "nats://", "nats://host", "nats://u:p@host:4222", "nats://host:99999", "http://host:80",
        "nats://host:4222/x", "nats://ho\u{1}st:4222", String(repeating: "x", count: 2_000),
    ])
    func malformedRelay(value: String) throws {
        let result = try run([], environment: ["SOTTO_RELAY": value])
        #expect(result.status == 78, "\(result.stderr)")
        #expect(result.stderr.contains("malformed relay URL"), "\(result.stderr)")
        #expect(!result.stderr.contains("not reachable"))
    }

    @Test("no relay configured is exit 78; a bad argument is exit 64; --relay overrides SOTTO_RELAY")
    func usage() throws {
        let none = try run([], environment: [:])
        #expect(none.status == 78)
        #expect(none.stderr.contains("no relay configured"))
        #expect(try run(["--bogus"], environment: ["SOTTO_RELAY": "nats://127.0.0.1:1"]).status == 64)
        #expect(try run(["--retry-min-ms", "soon"], environment: ["SOTTO_RELAY": "nats://127.0.0.1:1"]).status == 64)
        #expect(try run(["--retry-min-ms", "5000", "--retry-max-ms", "10"], environment: ["SOTTO_RELAY": "nats://127.0.0.1:1"]).status == 64)
        for garbage in ["99", "0", "-1", "soon", "3600001"] {
            #expect(try run(["--sleeping-drain-ms", garbage], environment: ["SOTTO_RELAY": "nats://127.0.0.1:1"]).status == 64,
                    "--sleeping-drain-ms \(garbage)")
        }
        let overridden = try run(["--relay", "nats://"], environment: ["SOTTO_RELAY": "nats://127.0.0.1:1"])
        #expect(overridden.status == 78)
        #expect(try run(["--help"], environment: [:]).status == 0)
    }

    @Test("malformed credentials: exit 78, the file's secret never printed")
    func malformedCredentials() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-relayd-creds")
        defer { dir.remove() }
        let loose = dir.path + "/loose.creds"
        FileManager.default.createFile(atPath: loose, contents: Data(CredsText.valid.utf8), attributes: [.posixPermissions: 0o644])
        let garbage = dir.path + "/garbage.creds"
        FileManager.default.createFile(atPath: garbage, contents: Data("SUAMsecret-looking garbage\n".utf8),
                                       attributes: [.posixPermissions: 0o600])
        for env in [["SOTTO_RELAY_CREDS": loose], ["SOTTO_RELAY_CREDS": garbage],
                    ["SOTTO_RELAY_CREDS": dir.path + "/missing.creds"], ["SOTTO_RELAY_USER": "alice"],
                    ["SOTTO_RELAY_CREDS": garbage, "SOTTO_RELAY_USER": "a", "SOTTO_RELAY_PASSWORD": "b"]] {
            let result = try run([], environment: env.merging(["SOTTO_RELAY": "nats://127.0.0.1:1"]) { $1 })
            #expect(result.status == 78, "\(env): \(result.stderr)")
            #expect(result.stderr.contains("malformed relay credentials"), "\(result.stderr)")
            #expect(!result.stderr.contains("SUAM"))
        }
    }

    @Test("identities added to the keystore get a consumer without a restart, the unused slot only once it is given out, and what was published to it before waits for it (issue #19 goal 5); a deleted one's consumer and mailbox are removed",
          .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
    func identitiesComeAndGo() throws {
        guard let rig = try RelayRig.make() else { return }
        defer { rig.tearDown() }
        // No push socket: every delivery is retried, so what is published stays on the relay.
        try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "500", "--gone-after-ms", "300"])
        let keystore = try Keystore(directory: rig.fixture.group.keystorePath, environment: [:])
        // The slot is filled first: the scan that finds `added` finds the slot too.
        let unused = Identity.generate()
        try keystore.storeUnused(unused)
        let added = Identity.generate()
        try keystore.save(added)
        try waitUntil("a consumer for the added identity", timeout: 30) {
            try rig.publisher().consumerState(try Mailbox(clientId: added.clientId)) != nil
        }
        // The relay learns nothing of the unused inbox until the daemon gives it out.
        let unusedBox = try Mailbox(clientId: unused.clientId)
        #expect(try rig.publisher().consumerState(unusedBox) == nil, "the unused slot's mailbox is on the relay")
        #expect(!rig.relaydOutput.contains { $0.contains(unusedBox.subject) })
        // What is published to it meanwhile waits in the stream for the owner's consumer.
        _ = try rig.publisher().publish(Array("{}".utf8), to: unusedBox, messageId: "before-given-out")
        #expect(try rig.publisher().storedCount(unusedBox) == 1)
        #expect(try keystore.claimUnused(expectedInboxId: unused.inboxId)?.inboxId == unused.inboxId)
        try waitUntil("a consumer once the slot is given out", timeout: 30) { try rig.publisher().consumerState(unusedBox) != nil }
        try waitUntil("the message published before it was given out reached its relayd", timeout: 30) {
            rig.relaydOutput.contains { $0.contains("of \(unusedBox) not stored") }
        }

        let doomed = try Mailbox(clientId: added.clientId)
        _ = try rig.publisher().publish(Array("{}".utf8), to: doomed, messageId: "left-behind")
        try waitUntil("the message held on the relay", timeout: 30) {
            rig.relaydOutput.contains { $0.contains("of \(doomed) not stored") }
        }
        #expect(try rig.publisher().storedCount(doomed) == 1)
        try keystore.delete(inboxId: added.inboxId)
        try waitUntil("the consumer deleted", timeout: 30) { try rig.publisher().consumerState(doomed) == nil }
        #expect(try rig.publisher().storedCount(doomed) == 0)
        // relayd logs after the relay answered; the line can reach the test a moment after.
        try waitUntil("relayd logged the retirement", timeout: 30) {
            rig.relaydOutput.contains { $0.contains("identity gone") && $0.contains(doomed.subject) }
        }
        // The others are untouched.
        #expect(try rig.publisher().consumerState(rig.mailbox) != nil)
        #expect(try rig.publisher().consumerState(try Mailbox(clientId: unused.clientId)) != nil)
    }
}

/// `sotto relayd` is sotto-relayd from the same directory, in the foreground: its exit status
/// and output are the receiver's.
@Suite("sotto relayd")
struct RelaydCommandTests {
    @Test("`sotto relayd` runs sotto-relayd with the same environment and arguments")
    func execs() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-relayd-cmd")
        defer { dir.remove() }
        let env = ["SOTTO_GROUP_DIR": dir.path + "/group", "SOTTO_RUNTIME_DIR": dir.path + "/run"]
        let bad = try ChildProcess.run(try builtExecutable("sotto"), ["relayd"],
                                       environment: env.merging(["SOTTO_RELAY": "nats://nowhere"]) { $1 })
        #expect(bad.status == 78, "\(bad.stderr)")
        #expect(bad.stderr.contains("sotto-relayd") && bad.stderr.contains("malformed relay URL"))
        let help = try ChildProcess.run(try builtExecutable("sotto"), ["relayd", "--help"], environment: env)
        #expect(help.status == 0)
        #expect(help.stdout.contains("usage: sotto-relayd"))
        #expect(try ChildProcess.run(try builtExecutable("sotto"), ["relayd", "--bogus"], environment: env).status == 64)
    }
}
