import Glibc

/// `sotto-notify`'s command line. Hand-parsed: ArgumentParser would load Foundation at
/// start-up (docs/adr/0001).
///
/// ```swift
/// let options = try WorkerOptions.parse(["sotto-notify", "--payload", "-"])
/// ```
struct WorkerOptions: Equatable {
    /// `--payload -`: read one payload from stdin, print the ack (manual mode).
    var payloadFromStdin = false
    /// `--idle-timeout SECONDS` (Accept=no): exit after this long without a connection.
    var idleTimeoutSeconds: Double = 10
    /// `--group-dir PATH`, else `SOTTO_GROUP_DIR`, `$XDG_DATA_HOME/sotto`, `~/.local/share/sotto`.
    var groupDirectory: String?
    var showHelp = false

    struct UsageError: Error, Equatable { let message: String }

    static let usage = """
        usage: sotto-notify [--group-dir PATH] [--idle-timeout SECONDS]
               sotto-notify --payload - [--group-dir PATH]

        Sotto's notification worker. Started by systemd for incoming pushes
        (sotto-push.socket): with Accept=yes it handles the one connection on fd 3 (or
        stdin), with Accept=no it accepts on the listening socket until idle. With
        --payload - it reads one push payload from stdin and prints the ack line.

        Environment: SOTTO_GROUP_DIR, SOTTO_RUNTIME_DIR, SOTTO_BUSY_TIMEOUT_MS.
        """

    static func parse(_ arguments: [String]) throws(UsageError) -> WorkerOptions {
        var options = WorkerOptions()
        var index = 1
        func value(for flag: String) throws(UsageError) -> String {
            index += 1
            guard index < arguments.count else { throw UsageError(message: "\(flag) needs a value") }
            return arguments[index]
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--payload":
                guard try value(for: argument) == "-" else {
                    throw UsageError(message: "--payload takes '-' (stdin)")
                }
                options.payloadFromStdin = true
            case "--idle-timeout":
                let text = try value(for: argument)
                guard let seconds = Double(text), seconds >= 0, seconds <= 3600 else {
                    throw UsageError(message: "--idle-timeout takes seconds between 0 and 3600")
                }
                options.idleTimeoutSeconds = seconds
            case "--group-dir":
                options.groupDirectory = try value(for: argument)
            case "-h", "--help":
                options.showHelp = true
            default:
                throw UsageError(message: "unknown argument '\(argument)'")
            }
            index += 1
        }
        return options
    }
}
