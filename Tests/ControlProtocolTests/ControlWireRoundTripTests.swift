import ControlProtocol
import Testing

/// Every control-socket type through both ends, with the functions each end really calls:
/// the client encodes a request (`JSONRPC.requestLine`), the daemon decodes it
/// (`JSONRPC.parse`, `decodeParams`), the daemon encodes the result, an error or a
/// notification (`resultLine`, `errorLine`, `notificationLine`), the client decodes it
/// (`ServerMessage`, the result type). And each encoding matches the published schema.
@Suite("Control wire: round trips")
struct ControlWireRoundTripTests {
    @Test("every method's params and result survive client → daemon → client, and match their schema")
    func methods() throws {
        var checked = Set<ControlMethodName>()
        try WireSamples.forEachMethod { params, result in
            try Self.roundTrip(params, result)
            checked.insert(type(of: params).method)
        }
        #expect(checked == Set(ControlMethodName.allCases))
    }

    private static func roundTrip<P: ControlRequest>(_ params: P, _ anyResult: any WireCodable) throws {
        let result = try #require(anyResult as? P.Result, "\(P.method): sample result of the wrong type")
        // Client encodes.
        let requestLine = Array(JSONRPC.requestLine(id: 41, params).utf8)
        #expect(requestLine.last == 0x0a && requestLine.dropLast().allSatisfy { $0 != 0x0a }, "one line")
        // Daemon decodes.
        guard case .request(let request) = JSONRPC.parse(requestLine.dropLast()) else {
            Issue.record("\(P.method): the daemon refused its own client's request")
            return
        }
        #expect(request.method == P.method.rawValue)
        #expect(request.id == .number(41))
        #expect(try request.decodeParams(P.self) == params)
        #expect(WireSchema.conformanceErrors(params.json, to: P.self) == [])
        // Daemon encodes; client decodes.
        let reply = Array(JSONRPC.resultLine(id: request.id, result.json).utf8)
        guard case .response(.number(41), .success(let json)) = try JSONRPC.ServerMessage(line: reply.dropLast()) else {
            Issue.record("\(P.method): the client could not read the daemon's reply")
            return
        }
        #expect(try P.Result(json: json) == result)
        #expect(WireSchema.conformanceErrors(result.json, to: P.Result.self) == [])
    }

    @Test("the change notification, with and without its message members, survives daemon → client")
    func changeNotification() throws {
        for change in [WireSamples.change, WireSamples.statusChange, WireSamples.bareChange] {
            let line = Array(JSONRPC.notificationLine(change).utf8)
            guard case .notification(let method, let params) = try JSONRPC.ServerMessage(line: line.dropLast()) else {
                Issue.record("not a notification")
                continue
            }
            #expect(method == "change")
            #expect(try ChangeNotification(json: params) == change)
            #expect(WireSchema.conformanceErrors(change.json, to: ChangeNotification.self) == [])
        }
    }

    @Test("the attachmentData notification carries any bytes, an empty piece and a full chunk, daemon → client")
    func attachmentDataNotification() throws {
        for bytes in [[], [0, 1, 0xfe, 0xff], [UInt8](repeating: 0xa5, count: 65_536)] as [[UInt8]] {
            let data = bytes.withUnsafeBytes { AttachmentData(offset: 65_536, size: 200_000, bytes: $0) }
            let line = Array(JSONRPC.notificationLine(data).utf8)
            #expect(line.last == 0x0a && line.dropLast().allSatisfy { $0 != 0x0a }, "one line")
            guard case .notification(let method, let params) = try JSONRPC.ServerMessage(line: line.dropLast()) else {
                Issue.record("not a notification")
                continue
            }
            #expect(method == "attachmentData")
            let decoded = try AttachmentData(json: params)
            #expect(decoded == data && decoded.bytes == bytes && decoded.offset == 65_536 && decoded.size == 200_000)
            #expect(WireSchema.conformanceErrors(data.json, to: AttachmentData.self) == [])
        }
        #expect(AttachmentData(offset: 0, size: 1, data: "a+b/").bytes == nil, "base64, not base64url")
    }

    @Test("AttachmentDataLine: the daemon's fast line is the JSON notification, read back by the fast reader; any other spelling is left to JSON")
    func attachmentDataFastLine() throws {
        var generator = SystemRandomNumberGenerator()
        for count in [0, 1, 2, 3, 4, 5, 65_535, 65_536] {
            let bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let line = bytes.withUnsafeBytes { AttachmentDataLine.encode(offset: 131_072, size: 300_000, bytes: $0) }
            let expected = bytes.withUnsafeBytes { AttachmentData(offset: 131_072, size: 300_000, bytes: $0) }
            #expect(line.last == 0x0a && line.dropLast().allSatisfy { $0 != 0x0a })
            // What a generic client reads: the same notification.
            guard case .notification("attachmentData", let params) = try JSONRPC.ServerMessage(line: line.dropLast()) else {
                Issue.record("\(count): not an attachmentData notification")
                continue
            }
            #expect(try AttachmentData(json: params) == expected, "\(count)")
            #expect(Array(JSONRPC.notificationLine(expected).utf8).count == line.count)
            // What the fast reader reads.
            var out: [UInt8] = [0xee]
            let read = Array(line.dropLast()).withUnsafeBytes { AttachmentDataLine.decode($0, appendingTo: &out) }
            #expect(read?.offset == 131_072 && read?.size == 300_000 && out == [0xee] + bytes, "\(count)")
        }
        // Other spellings and garbage: not taken by the fast reader, `out` untouched.
        let others = [
            #"{"jsonrpc":"2.0","method":"attachmentData","params":{"size":1,"offset":0,"data":"AA"}}"#,
            #"{"jsonrpc":"2.0","method":"attachmentData","params":{"offset":0,"size":1,"data":"A+"}}"#,
            #"{"jsonrpc":"2.0","method":"attachmentData","params":{"offset":0,"size":1,"data":"AB"}}"#,  // trailing bits
            #"{"jsonrpc":"2.0","method":"attachmentData","params":{"offset":0,"size":1,"data":"A"}}"#,
            #"{"jsonrpc":"2.0","method":"attachmentData","params":{"offset":01,"size":1,"data":"AA"}}"#,
            #"{"jsonrpc":"2.0","method":"attachmentData","params":{"offset":0,"size":1,"data":"AA"}} "#,
            #"{"jsonrpc":"2.0","method":"attachmentData","params":{"offset":-1,"size":1,"data":"AA"}}"#,
            #"{"jsonrpc":"2.0","method":"attachmentData","params":{"offset":0,"size":1,"data":"AA\"}}"#,
            #"{"jsonrpc":"2.0","id":1,"result":{}}"#, "",
        ]
        for text in others {
            var out: [UInt8] = [1, 2]
            #expect(Array(text.utf8).withUnsafeBytes { AttachmentDataLine.decode($0, appendingTo: &out) } == nil, "\(text)")
            #expect(out == [1, 2], "\(text)")
        }
    }

    @Test("every error code keeps its number and message through daemon → client")
    func errors() throws {
        #expect(RPCErrorCode.all.map(\.code.rawValue) == [-32700, -32600, -32601, -32602, -32603, -32001, -32002, -32003])
        let errors: [JSONRPC.ErrorObject] = [
            .parseError, .invalidRequest, .lineTooLong, .methodNotFound("Status"), .invalidParams("'limit' must be an integer"),
            .internalError("x"), .notFound("no conversation matches 'ab'"), .refused("only the creator"), .unavailable("busy"),
        ]
        for (index, error) in errors.enumerated() {
            for id in [RequestID.number(Int64(index)), .string("s\(index)"), .fractional(1.5), .null] {
                let line = Array(JSONRPC.errorLine(id: id, error).utf8)
                #expect(try JSONRPC.ServerMessage(line: line.dropLast()) == .response(id: id, outcome: .failure(error)))
            }
        }
    }

    @Test("the daemon echoes any valid id, and answers a request without one with nothing to match")
    func requestIDs() throws {
        for (text, id) in [("7", RequestID.number(7)), ("\"a\"", .string("a")), ("null", .null), ("2.5", .fractional(2.5))] {
            guard case .request(let request) = JSONRPC.parse(Array(#"{"jsonrpc":"2.0","id":\#(text),"method":"status"}"#.utf8)) else {
                Issue.record("\(text) refused")
                continue
            }
            #expect(request.id == id && request.hasID)
        }
        guard case .request(let notification) = JSONRPC.parse(Array(#"{"jsonrpc":"2.0","method":"status"}"#.utf8)) else {
            Issue.record("notification refused")
            return
        }
        #expect(!notification.hasID)
    }
}
