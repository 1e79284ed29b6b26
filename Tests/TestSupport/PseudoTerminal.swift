import Foundation

/// A program run on a real pseudo-terminal (posix_openpt): its stdin, stdout and stderr are
/// the terminal's slave side, so `isatty` is true for it, and every byte it writes is read
/// from the master side exactly as a terminal emulator would receive it. Output
/// post-processing is off (no `OPOST`), so a line feed is not turned into CR LF: a CR in
/// `bytes` is one the program wrote. A background thread drains the master; waits block on
/// a condition, never sleep.
///
/// ```swift
/// let shown = try PseudoTerminal.run(try builtExecutable("sotto"), ["read", id], environment: env)
/// #expect(!shown.bytes.contains(0x1B))   // no ESC reached the terminal
/// ```
public final class PseudoTerminal: @unchecked Sendable {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    public let pid: pid_t
    private let master: Int32
    private let condition = NSCondition()
    private var received: [UInt8] = []
    private var ended = false
    private var exitStatus: Int32?

    private init(pid: pid_t, master: Int32) {
        self.pid = pid
        self.master = master
    }

    deinit {
        if exitStatus == nil { Glibc.kill(pid, SIGKILL); _ = waitForExit() }
        close(master)
    }

    // MARK: Starting

    /// Starts `executable` on a new terminal; `environment` is added to this process's.
    public static func launch(_ executable: String, _ arguments: [String],
                              environment: [String: String]) throws -> PseudoTerminal {
        let master = openpt(O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard master >= 0, grantpt(master) == 0, unlockpt(master) == 0 else {
            throw Failure(description: "posix_openpt: errno \(errno)")
        }
        var name = [CChar](repeating: 0, count: 128)
        guard ptsname(master, &name, name.count) == 0 else { close(master); throw Failure(description: "ptsname: errno \(errno)") }
        let slave = open(String(cString: name), O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard slave >= 0 else { close(master); throw Failure(description: "open slave: errno \(errno)") }
        defer { close(slave) }
        var settings = termios()
        tcgetattr(slave, &settings)
        settings.c_oflag &= ~tcflag_t(OPOST)
        settings.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(slave, TCSANOW, &settings)

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_adddup2(&actions, slave, fd) }
        let merged = ProcessInfo.processInfo.environment.merging(environment) { $1 }.merging(["TERM": "xterm-256color"]) { $1 }
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, nil, argv, envp)
        guard rc == 0 else { close(master); throw Failure(description: "posix_spawn \(executable): \(String(cString: strerror(rc)))") }
        let terminal = PseudoTerminal(pid: pid, master: master)
        terminal.drain()
        return terminal
    }

    /// Runs to the end and returns its exit status and every byte it wrote to the terminal.
    public static func run(_ executable: String, _ arguments: [String],
                           environment: [String: String]) throws -> (status: Int32, bytes: [UInt8]) {
        let terminal = try launch(executable, arguments, environment: environment)
        let status = terminal.waitForExit()
        return (status, terminal.bytes)
    }

    // MARK: Reading

    /// Everything written to the terminal so far.
    public var bytes: [UInt8] {
        condition.lock()
        defer { condition.unlock() }
        return received
    }

    /// Blocks until `satisfied` holds for the bytes received; throws when `timeoutMs` passes
    /// first or the program closed the terminal without it.
    public func waitForOutput(timeoutMs: Int64 = 20_000, _ satisfied: ([UInt8]) -> Bool) throws {
        let deadline = Date(timeIntervalSinceNow: Double(timeoutMs) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while !satisfied(received) {
            if ended { throw Failure(description: "the terminal closed; it showed: \(String(decoding: received, as: UTF8.self))") }
            if !condition.wait(until: deadline) {
                throw Failure(description: "timed out; the terminal showed: \(String(decoding: received, as: UTF8.self))")
            }
        }
    }

    /// How many bytes were written to the terminal so far (an offset to wait past).
    public var byteCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return received.count
    }

    /// Types `bytes` into the terminal, as keys pressed (or a paste).
    public func type(_ bytes: [UInt8]) {
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return }
            offset += n
        }
    }

    /// Blocks until the program wrote nothing for `quietMs` (or `timeoutMs` passed): pacing,
    /// as a person pauses between keys, not a wait for a condition.
    public func waitForQuiet(quietMs: Int, timeoutMs: Int64 = 20_000) {
        let deadline = Date(timeIntervalSinceNow: Double(timeoutMs) / 1000)
        condition.lock()
        defer { condition.unlock() }
        while Date() < deadline {
            let before = received.count
            _ = condition.wait(until: Date(timeIntervalSinceNow: Double(quietMs) / 1000))
            if received.count == before || ended { return }
        }
    }

    /// Sends `signal` to the program.
    public func signal(_ signal: Int32) {
        _ = Glibc.kill(pid, signal)
    }

    /// Waits for the program to exit and for the last of its output; its exit status (128 +
    /// the signal when one ended it).
    @discardableResult
    public func waitForExit() -> Int32 {
        if let exitStatus { return exitStatus }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        condition.lock()
        while !ended { condition.wait() }
        exitStatus = code
        condition.unlock()
        return code
    }

    private func drain() {
        let thread = Thread { [self] in
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let n = buffer.withUnsafeMutableBytes { read(master, $0.baseAddress, $0.count) }
                if n < 0, errno == EINTR { continue }
                condition.lock()
                if n > 0 { received += buffer[0..<n] } else { ended = true }   // EIO: every slave end closed
                condition.broadcast()
                condition.unlock()
                if n <= 0 { return }
            }
        }
        thread.start()
    }

    // MARK: glibc's pty calls (Swift's Glibc module leaves them out: they need _XOPEN_SOURCE)

    private typealias IntOfInt = @convention(c) (Int32) -> Int32
    private typealias PtsnameR = @convention(c) (Int32, UnsafeMutablePointer<CChar>, Int) -> Int32

    private static func glibc<T>(_ name: String, as type: T.Type) -> T {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { fatalError("glibc has no \(name)") }
        return unsafeBitCast(symbol, to: type)
    }

    private static func openpt(_ flags: Int32) -> Int32 { glibc("posix_openpt", as: IntOfInt.self)(flags) }
    private static func grantpt(_ fd: Int32) -> Int32 { glibc("grantpt", as: IntOfInt.self)(fd) }
    private static func unlockpt(_ fd: Int32) -> Int32 { glibc("unlockpt", as: IntOfInt.self)(fd) }
    private static func ptsname(_ fd: Int32, _ name: UnsafeMutablePointer<CChar>, _ count: Int) -> Int32 {
        glibc("ptsname_r", as: PtsnameR.self)(fd, name, count)
    }
}
