import SottoWire

// libFuzzer target: PushPayload.decode must throw a typed error or succeed on any input, never trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let payload = try? PushPayload.decode(bytes) { _ = try? PushPayload.decode(payload.encode()) }
    return 0
}
