import Foundation

/// Starts a program with its three standard streams on pipes, by `posix_spawn`: the one way
/// the harness starts children (`ChildProcess`, `LoggedProcess`). Every pipe is made
/// close-on-exec by `pipe2` itself, so no child another thread spawns at the same moment can
/// inherit an end of them (one that did kept a test waiting for end of file from a CLI that
/// had exited). The child gets its own ends on 0, 1 and 2 (dup2 clears the flag), an empty
/// signal mask and default dispositions for the signals the tests send.
///
/// ```swift
/// let child = try Spawn.start("/usr/bin/env", ["true"], environment: ["PATH": "/usr/bin"])
/// close(child.stdin); … read(child.stdout, …) …; waitpid(child.pid, &status, 0)
/// ```
public enum Spawn {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// The child's pid and the parent's ends of its pipes.
    public struct Child: Sendable {
        public let pid: pid_t
        public let stdin: Int32
        public let stdout: Int32
        public let stderr: Int32
    }

    /// `environment` is the child's whole environment; `directory` its working directory.
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String],
                             directory: String? = nil) throws -> Child {
        var input: [Int32] = [-1, -1], output: [Int32] = [-1, -1], errors: [Int32] = [-1, -1]
        guard pipe2(&input, O_CLOEXEC) == 0, pipe2(&output, O_CLOEXEC) == 0, pipe2(&errors, O_CLOEXEC) == 0 else {
            let reason = errno
            for fd in input + output + errors where fd >= 0 { close(fd) }
            throw Failure(description: "pipe2: errno \(reason)")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, input[0], 0)
        posix_spawn_file_actions_adddup2(&actions, output[1], 1)
        posix_spawn_file_actions_adddup2(&actions, errors[1], 2)
        if let directory { _ = addChdir(&actions, directory) }
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGTERM, SIGINT, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        close(input[0]); close(output[1]); close(errors[1])
        guard rc == 0 else {
            close(input[1]); close(output[0]); close(errors[0])
            throw Failure(description: "posix_spawn \(executable): \(String(cString: strerror(rc)))")
        }
        return Child(pid: pid, stdin: input[1], stdout: output[0], stderr: errors[0])
    }

    /// Starts a program whose standard streams are files: stdin `/dev/null`, stdout and stderr
    /// appended to `log` (created 0600 if missing). Nothing of the parent's is inherited but the
    /// environment given.
    public static func start(_ executable: String, _ arguments: [String], environment: [String: String],
                             appendingOutputTo log: String) throws -> pid_t {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        for number in [SIGPIPE, SIGTERM, SIGINT, SIGCHLD] { sigaddset(&defaults, number) }
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let rc = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard rc == 0 else { throw Failure(description: "posix_spawn \(executable): \(String(cString: strerror(rc)))") }
        return pid
    }

    // MARK: - glibc functions Swift's Glibc module leaves out (they need _GNU_SOURCE)

    private typealias Pipe2 = @convention(c) (UnsafeMutablePointer<Int32>, Int32) -> Int32
    private typealias AddChdir = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, UnsafePointer<CChar>) -> Int32

    /// RTLD_DEFAULT: the symbol as the process's own libraries define it.
    private static func glibc<T>(_ name: String, as type: T.Type) -> T {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), name) else { fatalError("glibc has no \(name)") }
        return unsafeBitCast(symbol, to: type)
    }

    private static let pipe2Function = glibc("pipe2", as: Pipe2.self)
    private static let addChdirFunction = glibc("posix_spawn_file_actions_addchdir_np", as: AddChdir.self)

    private static func pipe2(_ fds: UnsafeMutablePointer<Int32>, _ flags: Int32) -> Int32 { pipe2Function(fds, flags) }

    private static func addChdir(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ path: String) -> Int32 {
        addChdirFunction(actions, path)
    }
}
