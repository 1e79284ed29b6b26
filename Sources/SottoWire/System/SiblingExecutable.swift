import Glibc

/// Sotto's executables installed side by side (`sotto`, `sotto-daemon`, `sotto-notify`,
/// `sotto-relayd`): where they are, and handing this process over to one of them.
///
/// ```swift
/// let daemon = SiblingExecutable.path("sotto-daemon")   // beside /proc/self/exe
/// SiblingExecutable.replaceProcess(with: daemon, arguments: ["daemon"])  // returns only on failure
/// ```
public enum SiblingExecutable {
    /// The directory of the running executable (`/proc/self/exe`, so that `sotto` found
    /// through `PATH` or a symlink works too).
    public static var directory: String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        let executable = count > 0
            ? String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            : CommandLine.arguments[0]
        guard let slash = executable.lastIndex(of: "/") else { return "." }
        return slash == executable.startIndex ? "/" : String(executable[..<slash])
    }

    /// `name` in ``directory``.
    public static func path(_ name: String) -> String { directory + "/" + name }

    /// `execv` with `arguments` after the path, the environment kept, and an empty signal
    /// mask: the mask survives `execv`, and a thread that blocks SIGTERM and SIGINT would
    /// leave the new program deaf to a stop or Ctrl-C. Returns the reason only when it failed.
    public static func replaceProcess(with path: String, arguments: [String]) -> String {
        guard access(path, X_OK) == 0 else { return "\(path) is missing; build or install it first" }
        let argv = ([path] + arguments).map { strdup($0) } + [nil]
        var unblocked = sigset_t()
        sigemptyset(&unblocked)
        pthread_sigmask(SIG_SETMASK, &unblocked, nil)
        execv(path, argv)
        return "cannot run \(path): \(String(cString: strerror(errno)))"
    }
}
