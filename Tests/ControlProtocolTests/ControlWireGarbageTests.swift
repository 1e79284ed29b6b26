import ControlProtocol
import SottoWire
import Testing

/// Bad bytes and bad values into every decoder of the control wire: each gives a clear error
/// (a JSON-RPC error line, or a `WireError` that names the member), none traps.
@Suite("Control wire: garbage")
struct ControlWireGarbageTests {
    /// The error code the daemon answers `line` with, or nil when it takes it as a request.
    private static func refusal(_ line: String) throws -> Int? {
        guard case .invalid(let reply) = JSONRPC.parse(Array(line.utf8)) else { return nil }
        guard case .response(_, .failure(let error)) = try JSONRPC.ServerMessage(line: Array(reply.utf8.dropLast())) else {
            Issue.record("the refusal of \(line) is not an error response: \(reply)")
            return 0
        }
        return error.code.rawValue
    }

    @Test("request lines that are not requests: parse error or invalid request, as before")
    func requestLines() throws {
        for line in ["", " ", "this is not json", "[1,2,3]", "42", "\"status\"", "null", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":",
                     "\u{FF}\u{FE}", "{\"a\":1,\"a\":2}", String(repeating: "[", count: 40) + String(repeating: "]", count: 40),
                     "{\"jsonrpc\":\"2.0\",\"method\":\"status\",\"params\":" + String(repeating: "[", count: 20) + String(repeating: "]", count: 20) + "}"] {
            #expect(try Self.refusal(line) == -32700, "\(line.prefix(40))")
        }
        for line in [#"{"id":2,"method":"status"}"#, #"{"jsonrpc":"1.0","method":"status"}"#, #"{"jsonrpc":"2.0","id":{"a":1},"method":"status"}"#,
                     #"{"jsonrpc":"2.0","id":[1],"method":"status"}"#, #"{"jsonrpc":"2.0","id":true,"method":"status"}"#,
                     #"{"jsonrpc":"2.0","method":7}"#] {
            #expect(try Self.refusal(line) == -32600, "\(line)")
        }
        for line in [#"{"jsonrpc":"2.0","method":"status","params":[1]}"#, #"{"jsonrpc":"2.0","method":"status","params":"x"}"#] {
            #expect(try Self.refusal(line) == -32602, "\(line)")
        }
    }

    @Test("params of the wrong type or range: invalidParams naming the member")
    func params() throws {
        let cases: [(any ControlRequest.Type, JSONValue, String)] = [
            (ReadMessagesParams.self, ["conversation": 5], "'conversation' must be a non-empty string"),
            (ReadMessagesParams.self, [:], "'conversation' must be a non-empty string"),
            (ReadMessagesParams.self, ["conversation": ""], "'conversation' must be a non-empty string"),
            (ReadMessagesParams.self, ["conversation": "ab", "limit": "ten"], "'limit' must be an integer"),
            (ReadMessagesParams.self, ["conversation": "ab", "limit": true], "'limit' must be an integer"),
            (ReadMessagesParams.self, ["conversation": "ab", "limit": 1.5], "'limit' must be an integer"),
            (ReadMessagesParams.self, ["conversation": "ab", "limit": 0], "'limit' must be 1…10000"),
            (ReadMessagesParams.self, ["conversation": "ab", "limit": 10_001], "'limit' must be 1…10000"),
            (ReadMessagesParams.self, ["conversation": "ab", "limit": 1e300], "'limit' must be an integer"),
            (SendMessageParams.self, ["conversation": "ab", "text": ["not", "text"]], "'text' must be a non-empty string"),
            (NewConversationParams.self, ["name": 7], "'name' must be a string"),
            (SubscribeParams.self, ["since": -1], "'since' must be ≥ 0"),
            (SubscribeParams.self, ["since": "0"], "'since' must be an integer"),
            (ReactParams.self, ["conversation": "ab", "message": "m", "emoji": "x", "remove": 1], "'remove' must be a boolean"),
            (ExplodeParams.self, ["conversation": "ab", "atMs": 9_100_000_000_000_000], "'atMs' must be an integer"),
            (ExplodeParams.self, ["conversation": "ab", "cancel": "yes"], "'cancel' must be a boolean"),
            (ExplodeParams.self, ["conversation": "ab", "cancel": 1], "'cancel' must be a boolean"),
            (ExplodeParams.self, ["conversation": "ab", "cancel": true, "atMs": 1_900_000_000_000], "give 'atMs' or 'cancel', not both"),
            (MuteConversationParams.self, ["conversation": "ab"], "'muted' must be a boolean"),
            (MuteConversationParams.self, ["conversation": "ab", "muted": "yes"], "'muted' must be a boolean"),
            (MuteConversationParams.self, ["conversation": "ab", "muted": 1], "'muted' must be a boolean"),
            (MuteConversationParams.self, ["muted": true], "'conversation' must be a non-empty string"),
            (LeaveParams.self, [:], "'conversation' must be a non-empty string"),
            (RemoveMemberParams.self, ["conversation": "ab"], "'member' must be a non-empty string"),
            (RemoveMemberParams.self, ["conversation": "ab", "member": 3], "'member' must be a non-empty string"),
            (RemoveMemberParams.self, ["member": "bob"], "'conversation' must be a non-empty string"),
            (LeaveParams.self, ["conversation": 7], "'conversation' must be a non-empty string"),
            (RenameParams.self, ["conversation": "ab"], "'name' must be a non-empty string"),
            (RenameParams.self, ["conversation": "ab", "name": ""], "'name' must be a non-empty string"),
            (RenameParams.self, ["conversation": "ab", "name": ["Bea"]], "'name' must be a non-empty string"),
            (RenameParams.self, ["conversation": "ab", "name": 7], "'name' must be a non-empty string"),
            (RenameParams.self, ["name": "Bea"], "'conversation' must be a non-empty string"),
        ]
        for (method, params, message) in cases {
            let request = JSONRPC.Request(id: .number(1), method: method.method.rawValue, params: params)
            #expect(throws: JSONRPC.ErrorObject.invalidParams(message), "\(method.method) \(params)") {
                _ = try request.decodeParams(method)
            }
        }
        // A whole number written as a double is an integer (a client with only doubles writes 5.0).
        let five = JSONRPC.Request(id: nil, method: "readMessages", params: ["conversation": "ab", "limit": 5.0])
        #expect(try five.decodeParams(ReadMessagesParams.self).limit == 5)
    }

    @Test("reply lines that are neither a response nor a notification: the client says what is wrong")
    func replyLines() {
        for line in ["", "garbage", "[]", "7", #"{"id":1,"result":{}}"#, #"{"jsonrpc":"2.0"}"#, #"{"jsonrpc":"2.0","id":1}"#,
                     #"{"jsonrpc":"2.0","id":{},"result":1}"#, #"{"jsonrpc":"2.0","id":1,"error":"bad"}"#,
                     #"{"jsonrpc":"2.0","id":1,"error":{"code":"x","message":"m"}}"#, String(repeating: "[", count: 100)] {
            do {
                let message = try JSONRPC.ServerMessage(line: Array(line.utf8))
                Issue.record("\(line) read as \(message)")
            } catch {
                #expect(!error.detail.isEmpty)
            }
        }
    }

    @Test("a change whose message is not a Message is refused, naming what is wrong, never half read")
    func changeWithABadMessage() throws {
        var bad: [JSONValue] = []
        for (key, value) in [("message", JSONValue.string("hi")), ("message", .int(1)), ("message", [:] as JSONValue)] {
            guard case .object(var object) = WireSamples.statusChange.json else { Issue.record("not an object"); return }
            object.set(key, value)
            bad.append(.object(object))
        }
        guard case .object(var object) = WireSamples.statusChange.json, case .object(var message)? = object["message"] else {
            Issue.record("no message sample")
            return
        }
        message.set("sentAtMs", .string("yesterday"))
        object.set("message", .object(message))
        bad.append(.object(object))
        for json in bad {
            do {
                let change = try ChangeNotification(json: json)
                Issue.record("decoded \(change)")
            } catch {
                #expect(!error.detail.isEmpty)
            }
        }
    }

    @Test("random values and mutated samples into every decoder: a value or a WireError, and what decodes re-encodes to its schema")
    func randomValues() throws {
        var generator = WireValueGenerator(seed: 0x5077_0021)
        var samples: [JSONValue] = []
        WireSamples.forEachMethod { params, result in samples += [params.json, result.json] }
        samples += [WireSamples.change.json, WireSamples.statusChange.json]
        var inputs: [JSONValue] = (0..<1_500).map { _ in generator.value(depth: 0) }
        for sample in samples { for _ in 0..<20 { inputs.append(generator.mutate(sample)) } }
        let types: [any WireCodable.Type] = ControlMethods.all.flatMap { [$0 as any WireCodable.Type, $0.resultType] }
            + [ChangeNotification.self, ChangeGap.self, ConversationInfo.self, MessageInfo.self, EmptyObject.self]
        var decoded = 0
        for input in inputs {
            for type in types {
                guard let value = try? type.init(json: input) else { continue }
                decoded += 1
                #expect(WireSchema.conformanceErrors(value.json, to: type) == [], "\(type.schemaName) from \(input)")
            }
        }
        #expect(decoded > 100, "the mutations should leave many values decodable")
    }
}

/// A small deterministic generator of JSON values and of mutations of a value.
private struct WireValueGenerator {
    var state: UInt64

    init(seed: UInt64) { state = seed }

    mutating func next() -> UInt64 {
        state &+= 0x9e37_79b9_7f4a_7c15
        var z = state
        z = (z ^ (z >> 30)) &* 0xbf58_476d_1ce4_e5b9
        z = (z ^ (z >> 27)) &* 0x94d0_49bb_1331_11eb
        return z ^ (z >> 31)
    }

    mutating func below(_ n: Int) -> Int { Int(next() % UInt64(n)) }

    static let keys = ["conversation", "text", "limit", "since", "seq", "kind", "id", "messages", "lastSeq", "gap", "name", "x"]

    mutating func value(depth: Int) -> JSONValue {
        switch below(depth > 2 ? 6 : 8) {
        case 0: return .null
        case 1: return .bool(below(2) == 0)
        case 2: return .int(Int64(bitPattern: next()) >> Int64(below(64)))
        case 3: return .double(Double(below(1000)) / 7)
        case 4, 5: return .string(["", "a", "ab12", "sotto1:", "\u{0}", "👍"][below(6)])
        case 6: return .array((0..<below(4)).map { _ in value(depth: depth + 1) })
        default:
            return .object(JSONObject((0..<below(5)).map { _ in (Self.keys[below(Self.keys.count)], value(depth: depth + 1)) }))
        }
    }

    /// The value with one member dropped, replaced by a random value, or added.
    mutating func mutate(_ value: JSONValue) -> JSONValue {
        guard case .object(let object) = value, object.count > 0 else { return self.value(depth: 0) }
        var members = object.members.map { ($0.key, $0.value) }
        let index = below(members.count)
        switch below(3) {
        case 0: members.remove(at: index)
        case 1: members[index].1 = below(2) == 0 ? self.value(depth: 1) : mutate(members[index].1)
        default: members.append((Self.keys[below(Self.keys.count)] + "_new", self.value(depth: 1)))
        }
        return .object(JSONObject(members))
    }
}
