import SottoCrypto

// libFuzzer target: Envelope.open must throw a typed error or succeed on any input, never trap.
let recipient = try! PrivateKey(bytes: SHA256.hash(Array("sotto-fuzz".utf8)))

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    _ = try? Envelope.open(bytes, recipientKey: recipient, clientId: "3f0c7a52-8d1e-4b7a-9a55-2f4f0c1d9e10",
                           topic: "/sotto/1/c/6808def4bd91c908e46f977561042b0e")
    return 0
}
