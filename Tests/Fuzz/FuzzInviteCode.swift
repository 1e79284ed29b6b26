import SottoCrypto

// libFuzzer target: InviteCode.parse must throw a typed error or succeed on any input, never trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    _ = try? InviteCode.parse(String(decoding: bytes, as: UTF8.self), nowMs: 0)
    return 0
}
