import Foundation
import SharedStore
import Testing
import TestSupport

extension DaemonProcessTests {
    /// Garbage at the control socket's framing boundary (issue #11, docs/adr/0025): each kind
    /// of bad byte stream gets a clear error line, and the daemon still answers `status`.
    @Suite("Control socket framing")
    struct ControlSocketFraming {
        static func errorCode(_ response: [String: Any]) -> Int? {
            (response["error"] as? [String: Any])?["code"] as? Int
        }

        static func errorMessage(_ response: [String: Any]) -> String {
            (response["error"] as? [String: Any])?["message"] as? String ?? ""
        }

        @Test("binary junk: every line of it gets a parse error, the connection and the daemon keep serving")
        func binaryJunk() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let client = try daemon.connect()

            var generator = SystemRandomNumberGenerator()
            var junk = (0..<64 * 1024).map { _ in UInt8.random(in: 0...255, using: &generator) }
            junk.removeAll { $0 == 0x0a }
            let lines = 16
            for index in 1...lines { junk[index * 4000] = 0x0a }  // 16 lines of binary, then an unfinished one
            junk.append(0x0a)
            try client.sendRaw(junk)
            for _ in 0...lines {
                let response = try client.readResponse()
                #expect(Self.errorCode(response) == -32700, "\(response)")
                #expect(response["id"] is NSNull)
            }
            #expect(int64(try client.result("status")["pid"]) == Int64(daemon.pid))
            #expect(int64(try daemon.result("status")["pid"]) == Int64(daemon.pid))
        }

        @Test("a 10 MB line without LF: one line-too-long error, the rest skipped up to its LF, then served")
        func tenMegabyteLine() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }
            let client = try daemon.connect()

            try client.sendRaw([UInt8](repeating: UInt8(ascii: "{"), count: 10 * 1024 * 1024))
            let response = try client.readResponse()
            #expect(Self.errorCode(response) == -32600)
            #expect(Self.errorMessage(response).contains("longer than"))
            // The daemon held none of it: a line's worth at most while it was arriving.
            let control = try daemon.result("status")["control"] as? [String: Any] ?? [:]
            #expect(int64(control["bufferedBytes"]).map { $0 < 512 * 1024 } == true, "\(control)")
            // Its end, then a request: answered on the same connection, nothing else in between.
            try client.sendRaw("}\n")
            #expect(int64(try client.result("status")["pid"]) == Int64(daemon.pid))
        }

        @Test("half-closed clients get every answer, an unterminated last line included, then EOF")
        func halfClosed() throws {
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }

            // Two requests, then shut down writing: both answered, in order, then closed.
            let both = try daemon.connect()
            try both.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"status\"}\n{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"status\"}\n")
            shutdown(both.fd, Int32(SHUT_WR))
            #expect(try both.readResponse()["id"] as? Int == 1)
            #expect(try both.readResponse()["id"] as? Int == 2)
            #expect(both.readUntilClosed())

            // A request without its LF, then EOF: it is the last line, and is answered.
            let unterminated = try daemon.connect()
            try unterminated.sendRaw("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"status\"}")
            shutdown(unterminated.fd, Int32(SHUT_WR))
            let answer = try unterminated.readResponse()
            #expect(answer["id"] as? Int == 3)
            #expect(answer["result"] != nil)
            #expect(unterminated.readUntilClosed())

            // Garbage without its LF, then EOF: a parse error, not silence.
            let garbage = try daemon.connect()
            try garbage.sendRaw([0x00, 0xff, 0x7b, 0x22])
            shutdown(garbage.fd, Int32(SHUT_WR))
            #expect(Self.errorCode(try garbage.readResponse()) == -32700)
            #expect(garbage.readUntilClosed())

            #expect(int64(try daemon.result("status")["pid"]) == Int64(daemon.pid))
        }

        @Test("1,000 clients each sending its request one byte at a time, interleaved: every one answered")
        func thousandSlowClients() throws {
            let clientCount = 1000
            try raiseOwnFileLimit(to: clientCount + 256)
            let home = try DaemonHome()
            let daemon = try DaemonProcess.start(home: home)
            defer { _ = try? daemon.stop() }

            let clients = try (0..<clientCount).map { _ in try daemon.connect() }
            let requests = (0..<clientCount).map { Array("{\"jsonrpc\":\"2.0\",\"id\":\($0),\"method\":\"status\"}\n".utf8) }
            for offset in 0..<requests.map(\.count).max()! {
                for (index, client) in clients.enumerated() where offset < requests[index].count {
                    try client.sendRaw([requests[index][offset]])
                }
            }
            var answered = 0
            for (index, client) in clients.enumerated() {
                let response = try client.readResponse()
                if response["id"] as? Int == index, response["result"] != nil { answered += 1 }
            }
            #expect(answered == clientCount)
            #expect(int64(try daemon.result("status")["pid"]) == Int64(daemon.pid))
        }

        private func raiseOwnFileLimit(to wanted: Int) throws {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            guard limit.rlim_max >= rlim_t(wanted) else {
                throw DaemonProcess.Failure(description: "this test needs \(wanted) open files; the hard limit is \(limit.rlim_max)")
            }
            if limit.rlim_cur < rlim_t(wanted) {
                limit.rlim_cur = rlim_t(wanted)
                setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            }
        }
    }
}
