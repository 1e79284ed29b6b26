import FoundationEssentials
import Glibc

/// Ctrl-O: the composer's text edited in the person's own editor. `$EDITOR`, else `$VISUAL`,
/// else `vi`, run through `sh -c` (so `EDITOR="code --wait"` works) on a private file: made
/// by `mkstemps` (0600) in `$XDG_RUNTIME_DIR` when set (a tmpfs only this user reads), else
/// in `/tmp`, and deleted when the editor returns. The caller gives the terminal to the
/// editor (`TerminalSession.suspend`) and takes it back after.
///
/// ```swift
/// terminal.suspend()
/// let edited = ExternalEditor.edit(state.composer)
/// terminal.resume()
/// if case .success(let text) = edited { state.composer = text }
/// ```
enum ExternalEditor {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    // MARK: Which editor, which file

    static func command(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        for name in ["EDITOR", "VISUAL"] {
            if let value = environment[name], !value.trimmingWhitespace().isEmpty { return value }
        }
        return "vi"
    }

    static func directory(_ environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty { return runtime }
        return "/tmp"
    }

    // MARK: Editing

    /// Runs the editor on `text` and returns what the file holds after, without the final
    /// line break(s) an editor adds. The file is gone when this returns, whatever happened.
    static func edit(_ text: String, environment: [String: String] = ProcessInfo.processInfo.environment) -> Result<String, Failure> {
        var template = Array((directory(environment) + "/sotto-compose-XXXXXX.txt").utf8CString)
        let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 4) }
        guard fd >= 0 else { return .failure(Failure(description: "cannot make a file for the editor: errno \(errno)")) }
        let path = String(decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        defer { unlink(path) }
        _ = fchmod(fd, 0o600)
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
        guard written == bytes.count else { return .failure(Failure(description: "cannot write the file for the editor")) }

        let status = run(command(environment), path: path)
        guard status == 0 else { return .failure(Failure(description: "the editor exited with \(status): the composer is unchanged")) }
        guard let data = FileManager.default.contents(atPath: path) else {
            return .failure(Failure(description: "the editor's file is gone: the composer is unchanged"))
        }
        var edited = String(decoding: data, as: UTF8.self)
        while edited.hasSuffix("\n") || edited.hasSuffix("\r") { edited.removeLast() }
        return .success(edited)
    }

    /// `sh -c 'EDITOR "$1"' sh PATH` in the foreground; its exit status (-1 when it could not start).
    private static func run(_ editor: String, path: String) -> Int32 {
        let arguments = ["/bin/sh", "-c", editor + " \"$1\"", "sh", path]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        guard posix_spawn(&pid, "/bin/sh", nil, nil, &argv, environ) == 0 else { return -1 }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 {
            if errno != EINTR { return -1 }
        }
        // WIFEXITED / WEXITSTATUS (macros Swift does not import).
        return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    }
}
