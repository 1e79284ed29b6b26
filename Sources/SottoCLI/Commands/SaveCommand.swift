import ArgumentParser
import ControlProtocol
import Glibc
import SottoClient
import SottoWire

/// `sotto save MESSAGE [DEST]`: the daemon decrypts and verifies the message's stored file and
/// streams it (`saveAttachment`); this process writes it to a hidden temporary file beside
/// DEST and names it only when the daemon says it was the whole file (`AttachmentSaveFile`,
/// docs/adr/0077). Never overwrites; prints the path it saved to.
///
/// ```sh
/// sotto save 3fa2                 # ./photo.jpg (or ./photo (1).jpg when that exists)
/// sotto save 3fa2 ~/Downloads     # ~/Downloads/photo.jpg
/// sotto save 3fa2 ~/trip.jpg      # exactly that path; refused if it exists
/// ```
struct SaveCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: ControlMethodName.saveAttachment.rawValue,
        abstract: "Save the file a message carries: into a directory under its own name made safe, or to a new path.",
        discussion: """
            DEST is a directory (default: the current one), where the file is saved under the sender's name made \
            safe (no '/', no leading '.', no control characters), as 'NAME (1).EXT', 'NAME (2).EXT' … when that \
            exists; or a path that does not exist yet, in a directory that does. An existing file is never \
            overwritten. Nothing is left behind when the file does not verify or the daemon goes away.
            """,
        aliases: ["save"])

    @Argument(help: "The attachment message's id, or a unique prefix of it.")
    var message: String

    @Argument(help: "A directory, or a new file's path (default: the current directory).")
    var destination: String = "."

    @OptionGroup var client: ClientOptions

    func run() throws {
        let progress = SaveProgress(enabled: isatty(2) == 1)
        defer { SaveInterruption.disarm() }
        let saved: AttachmentSaving.Saved
        do {
            saved = try AttachmentSaving.save(message: message, to: destination, socketPath: client.controlSocketPath,
                                              started: SaveInterruption.arm, progress: progress.show)
        } catch {
            progress.clear()
            throw Self.failure(error)
        }
        progress.clear()
        let (path, attachment) = (saved.path, saved.attachment)
        if client.json {
            print(CLIOutput.json(["path": .string(path), "messageId": .string(attachment.messageId), "name": .string(attachment.name),
                                  "size": .int(attachment.size), "mediaType": .string(attachment.mediaType)]))
        } else {
            print("saved \(InertText.line(path)) (\(AttachmentLine.size(Int(attachment.size))))")
        }
    }

    /// Prints why and gives the exit code (the client library's for the daemon's errors).
    private static func failure(_ error: any Error) -> Error {
        switch error {
        case let failure as ControlClient.Failure:
            StandardError.line("sotto: \(InertText.line(failure.description)); nothing was saved")
            switch failure {
            case .daemonNotRunning: return ExitCode(69)
            case .rpc(let rpc) where [.invalidParams, .notFound, .refused].contains(rpc.code): return ExitCode(65)
            default: return ExitCode(70)
            }
        case let failure as AttachmentSaveFile.Failure:
            StandardError.line("sotto: \(InertText.line(failure.description)); nothing was saved")
            if case .destination = failure { return ExitCode(65) }
            return ExitCode(74)
        case let failure as WireError:
            StandardError.line("sotto: unexpected data from the daemon: \(InertText.line(failure.detail)); nothing was saved")
            return ExitCode(70)
        default:
            StandardError.line("sotto: \(error); nothing was saved")
            return ExitCode(70)
        }
    }
}

/// A one-line progress bar on standard error, only when it is a terminal.
///
/// ```swift
/// let progress = SaveProgress(enabled: isatty(2) == 1)
/// progress.show(done: 65_536, of: 300_000)   // ██████·········· 21% 64.0 KiB of 293.0 KiB
/// progress.clear()
/// ```
struct SaveProgress {
    let enabled: Bool

    init(enabled: Bool) { self.enabled = enabled }

    func show(done: Int64, of total: Int64) {
        guard enabled, total > 0 else { return }
        let width = 30
        let filled = Int(done * Int64(width) / total)
        let bar = String(repeating: "█", count: filled) + String(repeating: "·", count: width - filled)
        let text = "\r\(bar) \(done * 100 / total)% \(AttachmentLine.size(Int(done))) of \(AttachmentLine.size(Int(total)))"
        _ = text.withCString { Glibc.write(2, $0, strlen($0)) }
    }

    func clear() {
        guard enabled else { return }
        _ = "\r\u{1B}[K".withCString { Glibc.write(2, $0, strlen($0)) }
    }
}
