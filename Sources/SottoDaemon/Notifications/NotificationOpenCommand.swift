import DaemonLogging
import Foundation

/// What clicking a desktop notification runs, with the conversation's id as its last
/// argument. `SOTTO_OPEN_COMMAND` chooses it (words split at spaces, no shell: a UI names its
/// own launcher, e.g. `my-sotto-ui --open`); without it, a terminal with
/// `sotto watch --conversation ID` where Debian's `x-terminal-emulator` exists, else nothing
/// (and the daemon says so once).
///
/// ```swift
/// let command = NotificationOpenCommand(environment: ["SOTTO_OPEN_COMMAND": "/usr/bin/my-ui --open"])
/// command.arguments(for: "6808def4bd91c908e46f977561042b0e")   // ["/usr/bin/my-ui", "--open", "6808…"]
/// ```
struct NotificationOpenCommand: Sendable {
    static let variable = "SOTTO_OPEN_COMMAND"
    static let terminal = "/usr/bin/x-terminal-emulator"

    /// The words before the id; nil: nothing to run.
    let words: [String]?

    init(environment: [String: String], sottoPath: String = NotificationOpenCommand.ownExecutable()) {
        if let text = environment[Self.variable] {
            let split = text.split(separator: " ").map(String.init)
            words = split.isEmpty ? nil : split
        } else if FileManager.default.isExecutableFile(atPath: Self.terminal) {
            words = [Self.terminal, "-e", sottoPath, "watch", "--conversation"]
        } else {
            words = nil
        }
    }

    func arguments(for conversationId: String) -> [String]? {
        words.map { $0 + [conversationId] }
    }

    /// Starts the command with `posix_spawn` and does not wait for it: a thread of its own
    /// reaps the child when it exits. (Foundation's `Process` ran it before; its launch
    /// machinery is more than a notification click on the bus thread needs.)
    func open(_ conversationId: String) {
        guard let arguments = arguments(for: conversationId) else {
            DaemonLog.info("desktop notifications: a notification was opened; set \(Self.variable) to choose what opens a conversation")
            return
        }
        var argv: [UnsafeMutablePointer<CChar>?] = (["/usr/bin/env", "--"] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, "/usr/bin/env", nil, nil, &argv, environ)
        guard spawned == 0 else {
            DaemonLog.error("desktop notifications: cannot start \(arguments[0]): \(String(cString: strerror(spawned)))")
            return
        }
        DaemonLog.info("desktop notifications: a click opens conversation \(conversationId.prefix(8)) with \(arguments[0]) (pid \(pid))")
        let child = pid
        let reaper = Thread {
            var status: Int32 = 0
            while waitpid(child, &status, 0) < 0 && errno == EINTR {}
        }
        reaper.start()
    }

    static func ownExecutable() -> String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "sotto"
    }
}
