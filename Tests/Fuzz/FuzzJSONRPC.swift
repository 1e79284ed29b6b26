import SottoWire

// libFuzzer target for the control socket's wire (compiled together with the sources of
// Sources/ControlProtocol): any line gives the daemon a request or an error reply, any
// request's params decode as each method's params or fail with a named field, and any line
// gives a client a reply or a clear error.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzOne(_ data: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let line = UnsafeBufferPointer(start: data, count: count)
    switch JSONRPC.parse(line) {
    case .request(let request):
        for method in ControlMethods.all {
            do { _ = try request.decodeParams(method) } catch { precondition(error.code == .invalidParams) }
        }
    case .invalid(let reply): precondition(!reply.isEmpty)
    }
    switch try? JSONRPC.ServerMessage(line: line) {
    case .notification(_, let params)?: _ = try? ChangeNotification(json: params)
    case .response(_, .success(let result))?: for method in ControlMethods.all { _ = try? method.resultType.init(json: result) }
    default: break
    }
    return 0
}
