import ControlProtocol
import Foundation
import SharedStore
import Testing
import TestSupport

extension DaemonProcessTests {
    /// Bad input on the control socket: each gets its JSON-RPC error, the daemon stays up.
    @Suite("Control socket")
    struct ControlSocket {
        static func errorCode(_ response: [String: Any]) -> Int? {
            (response["error"] as? [String: Any])?["code"] as? Int
        }

        @Test("garbage, non-objects, huge lines, unknown methods, wrong params, notifications")
        func badRequests() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let client = try daemon.connect()

            try client.sendRaw("this is not json\n")
            var response = try client.readResponse()
            #expect(Self.errorCode(response) == -32700)
            #expect(response["id"] is NSNull)

            for line in ["[1,2,3]", "42", "\"status\"", "null", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":", "\u{FF}\u{FE}"] {
                try client.sendRaw(line + "\n")
                #expect(Self.errorCode(try client.readResponse()) == -32700, "\(line)")
            }

            // Over the limit (512 KiB since docs/adr/0032), whatever it is.
            try client.sendRaw(Array(repeating: UInt8(ascii: "a"), count: JSONRPC.maxLineBytes + 44 * 1024) + [0x0a])
            response = try client.readResponse()
            #expect(Self.errorCode(response) == -32600)
            let tooLongMessage = (response["error"] as? [String: Any])?["message"] as? String
            #expect(tooLongMessage?.contains("longer than") == true)
            // A huge *valid* request is refused the same way and never executed.
            let padding = String(repeating: "x", count: JSONRPC.maxLineBytes + 44 * 1024)
            try client.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"newConversation\",\"params\":{\"name\":\"\(padding)\"}}\n")
            #expect(Self.errorCode(try client.readResponse()) == -32600)

            try client.sendRaw("{\"id\":2,\"method\":\"status\"}\n")  // no jsonrpc member
            response = try client.readResponse()
            #expect(Self.errorCode(response) == -32600)
            #expect(response["id"] as? Int == 2)
            try client.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":{\"a\":1},\"method\":\"status\"}\n")
            #expect(Self.errorCode(try client.readResponse()) == -32600)

            #expect(Self.errorCode(try client.call("noSuchMethod")) == -32601)
            #expect(Self.errorCode(try client.call("Status")) == -32601)

            let wrongParams: [(String, [String: Any])] = [
                ("readMessages", ["conversation": 5]),
                ("readMessages", [:]),
                ("readMessages", ["conversation": "ab", "limit": "ten"]),
                ("readMessages", ["conversation": "ab", "limit": true]),
                ("readMessages", ["conversation": "ab", "limit": 1.5]),
                ("sendMessage", ["conversation": "ab", "text": ["not", "text"]]),
                ("newConversation", ["name": 7]),
                ("subscribe", ["since": -1]),
                ("subscribe", ["since": "0"]),
            ]
            for (method, params) in wrongParams {
                #expect(Self.errorCode(try client.call(method, params)) == -32602, "\(method) \(params)")
            }
            try client.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"status\",\"params\":[1]}\n")
            #expect(Self.errorCode(try client.readResponse()) == -32602)

            // A notification (no id) gets no reply: the next line is the answer to id 77.
            try client.sendRaw("{\"jsonrpc\":\"2.0\",\"method\":\"newConversation\",\"params\":{\"name\":\"quiet\"}}\n")
            try client.sendRaw("{\"jsonrpc\":\"2.0\",\"method\":\"noSuchMethod\"}\n")
            try client.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":77,\"method\":\"status\"}\n")
            response = try client.readResponse()
            #expect(response["id"] as? Int == 77)
            // The notification still ran, exactly once.
            #expect(int64((response["result"] as? [String: Any])?["conversations"]) == 1)

            // Blank lines are ignored; the connection and the daemon still serve.
            try client.sendRaw("\n  \n")
            #expect(int64(try client.result("status")["pid"]) == Int64(daemon.pid))
            #expect(int64(try daemon.connect().result("status")["pid"]) == Int64(daemon.pid))
            #expect(daemon.process.isRunning)
        }

        @Test("a client that disconnects mid-line or mid-subscription does not disturb the daemon")
        func abruptClients() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            do {
                let half = try daemon.connect()
                try half.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":1,\"meth")
            }
            do {
                let subscriber = try daemon.connect()
                _ = try subscriber.result("subscribe", ["since": 0])
            }
            _ = try daemon.result("newConversation")
            #expect(int64(try daemon.result("status")["conversations"]) == 1)
        }

        @Test("a client of another uid is refused by SO_PEERCRED even when the socket's mode would let it in")
        func peerCredentials() throws {
            guard geteuid() == 0 else { return }  // needs root to run a client as another uid
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let sotto = try builtExecutable("sotto")
            let asNobody = ["--reuid", "65534", "--regid", "65534", "--clear-groups", sotto, "status",
                            "--runtime-dir", home.runtimePath]

            // As shipped (socket 0600 in a 0700 directory) the other user cannot even connect,
            // and is told so rather than that the daemon is not running.
            let blocked = try ChildProcess.run("/usr/bin/setpriv", asNobody)
            #expect(blocked.status == 65)
            #expect(blocked.stderr.contains("permission denied on"))

            // Open the file modes up, as a misconfiguration would: the uid check still refuses.
            #expect(chmod(home.tmp.path, 0o711) == 0)
            #expect(chmod(home.runtimePath, 0o711) == 0)
            #expect(chmod(home.controlSocketPath, 0o666) == 0)
            let refused = try ChildProcess.run("/usr/bin/setpriv", asNobody)
            #expect(refused.status == 65)
            #expect(refused.stderr.contains("permission denied: peer is another user"))
            #expect(refused.stdout.isEmpty)

            // The same client as this uid is served, and the daemon is unharmed.
            let allowed = try ChildProcess.run(sotto, ["status", "--runtime-dir", home.runtimePath])
            #expect(allowed.status == 0)
            #expect(daemon.process.isRunning)
        }
    }
}
