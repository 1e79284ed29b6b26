import Foundation
import SottoWire

/// A real terminal for the chat app's tests: a private tmux server (its own socket, no
/// config) with one detached session of a given size running `sh`. Tests type into it with
/// `send-keys`, read the screen with `capture-pane`, and ask tmux what the terminal state is
/// (`#{alternate_on}`, `#{pane_title}`).
///
/// ```swift
/// let terminal = try ChatTerminal.start(environment: alice.environment)
/// defer { terminal.stop() }
/// try terminal.typeLine("sotto chat \(id)")
/// let screen = try terminal.waitForScreen("the list") { $0.contains("Trip") }
/// terminal.keys("C-c")
/// ```
public final class ChatTerminal: @unchecked Sendable {
    public static let tmux = "/usr/bin/tmux"
    public static var isAvailable: Bool { FileManager.default.isExecutableFile(atPath: tmux) }

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let socketName: String
    private let environment: [String: String]
    public let target = "chat"

    private init(socketName: String, environment: [String: String]) {
        self.socketName = socketName
        self.environment = environment
    }

    /// A detached `columns`×`rows` session running `sh` (prompt `$ `) with `environment` added.
    public static func start(columns: Int = 80, rows: Int = 24, environment: [String: String]) throws -> ChatTerminal {
        let name = "sotto-chat-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        var env = environment
        env["PS1"] = "$ "
        env["ENV"] = nil
        let terminal = ChatTerminal(socketName: name, environment: env)
        var arguments = ["new-session", "-d", "-x", "\(columns)", "-y", "\(rows)", "-s", terminal.target]
        for (key, value) in env.sorted(by: { $0.key < $1.key }) { arguments += ["-e", "\(key)=\(value)"] }
        arguments += ["/bin/sh"]
        _ = try terminal.tmux(arguments)
        _ = try terminal.tmux(["set-option", "-g", "status", "off"])
        return terminal
    }

    /// Runs `tmux -L <this server> ARGS`; throws when tmux exits non-zero.
    @discardableResult
    public func tmux(_ arguments: [String]) throws -> String {
        let result = try ChildProcess.run(Self.tmux, ["-L", socketName, "-f", "/dev/null"] + arguments, environment: environment)
        guard result.status == 0 else {
            throw Failure(description: "tmux \(arguments.prefix(3).joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
        return result.stdout
    }

    /// Types `text` literally (no key names), then Enter.
    public func typeLine(_ text: String) throws {
        try type(text)
        try keys("Enter")
    }

    /// Types `text` literally.
    public func type(_ text: String) throws { try tmux(["send-keys", "-t", target, "-l", text]) }

    /// Presses keys by tmux's names: `Enter`, `C-c`, `Up`, `Down`, `Tab`, `PPage`, `NPage`.
    public func keys(_ names: String...) throws { try tmux(["send-keys", "-t", target] + names) }

    /// Pastes `text` as a terminal does (`paste-buffer -p`): between ESC[200~ and ESC[201~ when
    /// the program asked for bracketed paste (ESC[?2004h), bare otherwise; tmux sends each line
    /// feed as CR, as a terminal does.
    public func paste(_ text: String) throws {
        try tmux(["set-buffer", "-b", "sotto-test", "--", text])
        try tmux(["paste-buffer", "-p", "-d", "-b", "sotto-test", "-t", target])
    }

    /// The screen as text, one line per row (trailing spaces trimmed by tmux).
    public func screen() throws -> String { try tmux(["capture-pane", "-p", "-t", target]) }

    /// A tmux format evaluated for the pane: `#{alternate_on}`, `#{pane_title}`, `#{pane_pid}`.
    public func value(_ format: String) throws -> String {
        try tmux(["display-message", "-p", "-t", target, format]).trimmingCharacters(in: .newlines)
    }

    public func resize(columns: Int, rows: Int) throws {
        try tmux(["resize-window", "-t", target, "-x", "\(columns)", "-y", "\(rows)"])
    }

    /// Polls the screen until `condition` holds; throws with the last screen after `timeoutMs`.
    @discardableResult
    public func waitForScreen(_ what: String, timeoutMs: Int64 = 30_000, _ condition: (String) throws -> Bool) throws -> String {
        let deadline = WallClock.nowMs() + timeoutMs
        var last = ""
        while true {
            last = try screen()
            if try condition(last) { return last }
            if WallClock.nowMs() > deadline { throw Failure(description: "timed out waiting for \(what); the screen:\n\(last)") }
            usleep(50_000)
        }
    }

    /// Polls a format until it equals `expected`.
    public func waitForValue(_ format: String, _ expected: String, timeoutMs: Int64 = 30_000) throws {
        let deadline = WallClock.nowMs() + timeoutMs
        while true {
            let current = try value(format)
            if current == expected { return }
            if WallClock.nowMs() > deadline { throw Failure(description: "\(format) is '\(current)', not '\(expected)'; screen:\n\(try screen())") }
            usleep(50_000)
        }
    }

    /// The pids of the pane's shell's children (the chat while it runs).
    public func paneChildren() throws -> [Int32] {
        let shell = try value("#{pane_pid}")
        let children = (try? String(contentsOfFile: "/proc/\(shell)/task/\(shell)/children", encoding: .utf8)) ?? ""
        return children.split(separator: " ").compactMap { Int32($0) }
    }

    public func stop() { _ = try? tmux(["kill-server"]) }

    deinit { stop() }
}
