import ControlProtocol
import ControlServer
import DaemonEngine
import SottoWire

/// Answers `saveAttachment` (docs/adr/0077): finds the message's stored file
/// (`ConversationService.storedAttachment`), reads it through `AttachmentReader` and writes
/// the file's bytes to the client as `attachmentData` lines (`AttachmentDataLine`), at most `window` lines ahead of
/// what the socket took: a client that reads slowly makes the daemon wait, never hold the
/// file. The result (or the error) is the request's answer, written after the last line.
///
/// ```swift
/// case .saveAttachment:
///     return try await answer(request, as: SaveAttachmentParams.self) { params in
///         try await AttachmentSaveStream.save(params, service: service, connection: connection)
///     }
/// ```
enum AttachmentSaveStream {
    /// Lines written and not yet taken by the socket, at most (each ≤ 87,500 bytes: 64 KiB in
    /// base64url with its JSON): about 350 KB held per save, whatever the file's size.
    static let window = 4

    static func save(_ params: SaveAttachmentParams, service: ConversationService,
                     connection: ControlConnection) async throws -> SavedAttachment {
        let stored = try await service.storedAttachment(message: params.message)
        let size = Int64(stored.reference.size)
        var inFlight: [@Sendable () async -> Bool] = []
        let outcome: AttachmentReader.Outcome
        do {
            outcome = try await AttachmentReader.shared.read(
                path: stored.path, reference: stored.reference,
                prepare: { bytes, offset in AttachmentDataLine.encode(offset: Int64(offset), size: size, bytes: bytes) },
                consume: { line in
                    inFlight.append(connection.sendAwaitingWrite(bytes: line))
                    if inFlight.count >= window { return await inFlight.removeFirst()() }
                    return true
                })
        } catch .refused(let error) {
            throw JSONRPC.ErrorObject.refused(
                "the stored file of message \(stored.messageId) is damaged (\(error.description)): nothing of it is the file")
        } catch {
            throw JSONRPC.ErrorObject.unavailable(error.description)
        }
        guard outcome == .complete else { throw JSONRPC.ErrorObject.unavailable("the client went away") }
        // Every line is out before the answer is queued.
        for written in inFlight where !(await written()) { throw JSONRPC.ErrorObject.unavailable("the client went away") }
        return SavedAttachment(messageId: stored.messageId, name: stored.reference.name, size: size,
                               mediaType: stored.reference.mediaType)
    }
}
