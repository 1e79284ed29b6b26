import SottoWire

// libFuzzer target: JSONParser.parse must throw a typed error or succeed on any input, never trap.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: count))
    if let value = try? JSONParser.parse(bytes, limits: .init(maxBytes: 65_536, maxDepth: 32)) { _ = try? JSONParser.parse(JSONWriter.bytes(value)) }
    // The protocol's mode: containers beyond depth 4 walked without recursion and dropped.
    _ = try? JSONParser.parse(bytes, limits: .init(maxBytes: 65_536, maxDepth: 4, beyondMaxDepth: .skip))
    return 0
}
