import SottoCrypto
import SottoWire

// libFuzzer target: a stored attachment of any bytes, fed to the decryptor in pieces whose
// sizes the input's first byte chooses, against a fixed reference of 4,097 bytes (its padding
// starts in chunk 0): a named refusal, never a trap, never a whole file.
let reference = AttachmentReference(id: [UInt8](repeating: 1, count: 16), size: 4097, sha256: [UInt8](repeating: 2, count: 32),
                                    key: [UInt8](repeating: 3, count: 32), name: "f", mediaType: "a/b")

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    guard count > 0 else { return 0 }
    let piece = Int(data[0]) + 1
    let bytes = AttachmentLayout.header + Array(UnsafeBufferPointer(start: data + 1, count: count - 1))
    var decryptor = AttachmentDecryptor(reference)
    var offset = 0
    do {
        while offset < bytes.count {
            let end = min(offset + piece, bytes.count)
            try decryptor.consume(Array(bytes[offset..<end])) { _ in }
            offset = end
        }
        try decryptor.finish()
        preconditionFailure("random bytes opened")
    } catch {
        precondition([.badChunk, .truncated, .tooLong].contains(error.code), "unexpected \(error)")
    }
    return 0
}
