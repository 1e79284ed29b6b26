import SottoCrypto

// libFuzzer target: SignedMessage.parse must throw a typed error or succeed on any input, never trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let message = try? SignedMessage.parse(bytes) { _ = try? message.verify(); _ = try? SignedMessage.parse(message.encode()) }
    return 0
}
