import Foundation

// libFuzzer target for the daemon's control-socket line parser (compiled together with
// Sources/ControlProtocol/JSONRPC.swift): any line gives a request or an error reply.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    switch JSONRPC.parse(Data(bytes: data, count: count)) {
    case .request(let request): _ = request.method
    case .invalid(let line): precondition(!line.isEmpty)
    }
    return 0
}
