import Foundation
import SharedStore
import Testing
import TestSupport

extension DaemonProcessTests {
    /// The `sotto` subcommands against a real daemon: output, `--json`, exit codes.
    @Suite("CLI")
    struct CLI {
        @Test("status, new, ls, send, read: exit 0, human and --json output")
        func happyPath() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }

            let status = try runCLI(["status"], home: home)
            #expect(status.status == 0)
            #expect(status.stdout.contains("daemon pid \(daemon.pid)"))
            let statusJSON = try jsonObject(try runCLI(["status", "--json"], home: home).stdout)
            #expect(int64(statusJSON["pid"]) == Int64(daemon.pid))

            let created = try runCLI(["new", "--name", "Trip", "--json"], home: home)
            #expect(created.status == 0)
            let conversationId = try #require(try jsonObject(created.stdout)["conversationId"] as? String)
            #expect(try runCLI(["new", "--name", "Other"], home: home).stdout.hasPrefix("created conversation "))

            let list = try jsonObject(try runCLI(["ls", "--json"], home: home).stdout)
            let conversations = try #require(list["conversations"] as? [[String: Any]])
            #expect(conversations.count == 2)
            #expect(conversations.contains { $0["id"] as? String == conversationId && $0["name"] as? String == "Trip" })
            #expect(try runCLI(["ls"], home: home).stdout.contains("Trip"))

            let prefix = String(conversationId.prefix(10))
            let sent = try runCLI(["send", prefix, "hello there", "--json"], home: home)
            #expect(sent.status == 0)
            let messageId = try #require(try jsonObject(sent.stdout)["messageId"] as? String)

            let read = try jsonObject(try runCLI(["read", prefix, "--json"], home: home).stdout)
            let messages = try #require(read["messages"] as? [[String: Any]])
            #expect(messages.map { $0["id"] as? String } == [messageId])
            #expect(messages.first?["text"] as? String == "hello there")
            #expect(messages.first?["outgoing"] as? Bool == true)
            #expect(try runCLI(["read", prefix], home: home).stdout.contains("me: hello there"))
        }

        @Test("usage errors exit 64, refused requests 65, each with a message on stderr")
        func exitCodes() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }

            let missing = try runCLI(["send"], home: home)
            #expect(missing.status == 64)
            #expect(try runCLI(["frobnicate"], home: home).status == 64)
            #expect(try runCLI(["daemon", "--capacity", "0"], home: home).status == 64)

            let unknown = try runCLI(["read", "deadbeef"], home: home)
            #expect(unknown.status == 65)
            #expect(unknown.stderr.contains("no conversation matches 'deadbeef'"))
            let badLimit = try runCLI(["read", "deadbeef", "--limit", "0"], home: home)
            #expect(badLimit.status == 65)
            #expect(badLimit.stderr.contains("limit"))
            let tooLong = try runCLI(["new", "--name", String(repeating: "n", count: 300)], home: home)
            #expect(tooLong.status == 65)
            // Nothing was created by the refused requests.
            #expect(int64(try daemon.result("status")["conversations"]) == 0)
        }

        @Test("without a daemon every client subcommand says so and exits 69")
        func daemonNotRunning() throws {
            let home = try DaemonHome()
            for arguments in [["status"], ["ls", "--json"], ["new"], ["read", "ab"], ["send", "ab", "hi"], ["watch"]] {
                let result = try runCLI(arguments, home: home)
                #expect(result.status == 69, "\(arguments)")
                #expect(result.stderr.contains("the Sotto daemon is not running"), "\(arguments)")
                #expect(result.stdout.isEmpty)
            }
        }

        @Test("watch --since 0 --json replays the feed; when the daemon stops it says so on stderr and waits for it, until interrupted")
        func watch() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            let conversationId = try #require(try daemon.result("newConversation")["conversationId"] as? String)
            let watch = try ChildProcess.launch(try builtExecutable("sotto"), ["watch", "--since", "0", "--json"],
                                                environment: home.environment)
            var seqs: [Int64] = []
            var sawCreation = false
            while !sawCreation, let line = watch.readStdoutLine() {
                let event = try jsonObject(line)
                seqs.append(try #require(int64(event["seq"])))
                sawCreation = event["kind"] as? String == "conversationCreated" && event["conversationId"] as? String == conversationId
            }
            #expect(sawCreation)
            #expect(seqs == Array(1...Int64(seqs.count)))
            #expect(try daemon.stop() == 0)
            // It reconnects (docs/adr/0071): a note on stderr, nothing on stdout, still running.
            let note = watch.readStderrLine() ?? "(stderr ended: watch exited)"
            #expect(note.hasPrefix("sotto: the daemon went away") && note.contains("reconnecting"), "\(note)")
            #expect(watch.isRunning)
            watch.kill(SIGTERM)
            let ended = watch.finish()
            #expect(ended.status == SIGTERM && ended.stdout.isEmpty, "\(ended)")
        }

        @Test("watch --conversation prints only that conversation's changes; an unknown one exits 65 with the daemon's reason")
        func watchOneConversation() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let watched = try #require(try daemon.result("newConversation", ["name": "Watched"])["conversationId"] as? String)
            let other = try #require(try daemon.result("newConversation", ["name": "Other"])["conversationId"] as? String)
            let watch = try ChildProcess.launch(try builtExecutable("sotto"),
                                                ["watch", "--since", "0", "--json", "--conversation", String(watched.prefix(8))],
                                                environment: home.environment)
            _ = try daemon.result("sendMessage", ["conversation": other, "text": "not this one"])
            _ = try daemon.result("sendMessage", ["conversation": watched, "text": "this one"])
            var conversations: Set<String> = []
            var sawText = false
            while !sawText, let line = watch.readStdoutLine() {
                let event = try jsonObject(line)
                conversations.insert(event["conversationId"] as? String ?? "none")
                sawText = event["text"] as? String == "this one"
            }
            #expect(sawText)
            #expect(conversations == [watched])
            #expect(try daemon.stop() == 0)
            #expect(watch.readStderrLine()?.hasPrefix("sotto: the daemon went away") == true)
            watch.kill(SIGTERM)
            #expect(watch.finish().status == SIGTERM)

            let restarted = try DaemonProcess.start(home: home)
            defer { _ = try? restarted.stop() }
            let unknown = try runCLI(["watch", "--conversation", "ffffffff"], home: home)
            #expect(unknown.status == 65 && unknown.stderr.contains("ffffffff"), "\(unknown)")
        }
    }
}
