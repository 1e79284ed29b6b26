import ControlProtocol
import SottoWire

/// `sotto save` as one call any client makes (the CLI; later a UI): resolve DEST and make the
/// temporary file (`AttachmentSaveFile`), ask the daemon for the message's file
/// (`saveAttachment`), write each piece in order, and name the file only when the daemon
/// answered with a result and every byte came; on any failure the temporary file is removed
/// and the error thrown (an `AttachmentSaveFile.Failure` or a `ControlClient.Failure`).
/// Blocking: call it off a UI's main thread (docs/adr/0077).
///
/// ```swift
/// let saved = try AttachmentSaving.save(message: "3fa2", to: "/home/ann/Downloads", socketPath: runtime.controlSocketPath,
///                                       started: { temporary in … }, progress: { done, size in … })
/// print(saved.path)   // "/home/ann/Downloads/photo.jpg"
/// ```
public enum AttachmentSaving {
    /// Where the file was saved, and what the daemon said of it.
    public struct Saved: Sendable, Equatable {
        public let path: String
        public let attachment: SavedAttachment
    }

    /// `started` gets the temporary file's path before anything is asked of the daemon (to
    /// remove it if the process is interrupted); `progress` the bytes written and the size.
    public static func save(message: String, to destination: String, socketPath: String,
                            started: (String) -> Void = { _ in },
                            progress: (_ done: Int64, _ size: Int64) -> Void = { _, _ in }) throws -> Saved {
        var file = try AttachmentSaveFile(destination: destination)
        started(file.temporaryPath)
        let saved: SavedAttachment
        do {
            let connection = try ControlClient.connect(path: socketPath)
            saved = try connection.saveAttachment(SaveAttachmentParams(message: message)) { offset, size, bytes in
                guard offset == file.written else {
                    throw ControlClient.Failure.protocolError("attachmentData at \(offset), expected \(file.written)")
                }
                try file.write(bytes)
                progress(file.written, size)
            }
            guard saved.size == file.written else {
                throw ControlClient.Failure.protocolError("the daemon sent \(file.written) bytes of a \(saved.size)-byte file")
            }
        } catch {
            file.discard()
            throw error
        }
        return Saved(path: try file.commit(name: saved.name), attachment: saved)
    }
}
