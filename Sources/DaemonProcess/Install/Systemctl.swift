import Foundation
import SottoClient
import SottoDaemon

/// `systemctl --user …` with its output kept, so the installer can show what went wrong
/// instead of an exit status alone.
///
/// ```swift
/// let reload = Systemctl.run(["daemon-reload"])
/// if !reload.succeeded { print(reload.stderr) }
/// ```
enum Systemctl {
    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        var succeeded: Bool { status == 0 }
        /// stderr, else stdout, else the status: one thing worth printing.
        var message: String {
            let text = stderr.isEmpty ? stdout : stderr
            return text.isEmpty ? "exit status \(status)" : text.trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }

    static let path = "/usr/bin/systemctl"

    /// Runs `systemctl --user ARGUMENTS`; status -1 when systemctl cannot be started.
    static func run(_ arguments: [String]) -> Result {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["--user"] + arguments
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch {
            return Result(status: -1, stdout: "", stderr: "cannot run \(path): \(error)")
        }
        // stderr is read on another thread so that neither pipe can fill up and stall it.
        let errorData = ErrorCollector(errors.fileHandleForReading)
        let out = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Result(status: process.terminationStatus, stdout: String(decoding: out, as: UTF8.self),
                      stderr: String(decoding: errorData.wait(), as: UTF8.self))
    }

    private final class ErrorCollector: @unchecked Sendable {
        private let done = DispatchSemaphore(value: 0)
        private var data = Data()

        init(_ handle: FileHandle) {
            Thread.detachNewThread { [self] in
                data = handle.readDataToEndOfFile()
                done.signal()
            }
        }

        func wait() -> Data {
            done.wait()
            return data
        }
    }
}
