import SottoWire

// libFuzzer target: AttachmentReference.decode must throw malformed_message or succeed on any
// input, never trap; what decodes survives a re-encode, and its name made safe is a safe name.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let reference = try? AttachmentReference.decode(bytes) {
        precondition((try? AttachmentReference.decode(reference.encode())) == reference, "re-encode changed the reference")
        let safe = AttachmentFileName.safe(reference.name)
        precondition(!safe.isEmpty && safe.utf8.count <= 255 && !safe.hasPrefix(".") && !safe.contains("/"), "unsafe name")
    }
    _ = AttachmentFileName.safe(String(decoding: bytes, as: UTF8.self))
    return 0
}
