// What one control-socket request and one reply cost to read and write, three ways, in the
// same process (docs/adr/0021):
//   - JSONSerialization with [String: Any] (the code before ControlProtocol's types),
//   - SharedStore's JSONParser/JSONWriter with the wire types (what both ends use now),
//   - Codable (JSONDecoder/JSONEncoder), the alternative the issue allows.
// Prints ns/op and each as a ratio of the JSONSerialization baseline.
//   Benchmarks/control-wire-bench.sh [iterations]
import ControlProtocol
import Foundation
import SottoWire

let iterations = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 20_000 : 20_000

@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

/// ns per call of `body`, best of five rounds (the others are noise from a shared machine).
func measure(_ count: Int, _ body: () throws -> Void) rethrows -> Double {
    for _ in 0..<max(1, count / 10) { try body() }
    var best = Double.infinity
    for _ in 0..<5 {
        let start = MonotonicClock.nowNs()
        for _ in 0..<count { try body() }
        best = min(best, Double(MonotonicClock.nowNs() - start) / Double(count))
    }
    return best
}

func report(_ title: String, _ rows: [(String, Double)]) {
    print(title)
    let baseline = rows[0].1
    for (name, ns) in rows {
        let label = name + String(repeating: " ", count: max(0, 44 - name.count))
        print("  \(label) \(String(format: "%9.0f", ns)) ns/op   \(String(format: "%5.2f", ns / baseline))x")
    }
}

// MARK: - Inputs

let requestLine = Array(JSONRPC.requestLine(id: 7, SendMessageParams(conversation: "3f2a9c1d", text: "see you at the station at 6", replyTo: "9f3c")).utf8.dropLast())
func sampleMessage(_ index: Int) -> MessageInfo {
    let sentAtMs: Int64 = 1_700_000_000_000 + Int64(index)
    let senderName: String? = index % 2 == 0 ? nil : "Ada"
    return MessageInfo(id: String(repeating: "ab", count: 16), conversationId: String(repeating: "cd", count: 16),
                       senderInboxId: String(repeating: "ef", count: 32), sentAtMs: sentAtMs, contentType: "text",
                       text: "message number \(index) with some ordinary text in it", outgoing: index % 2 == 0,
                       deliveryStatus: "sent", referenceId: nil, senderName: senderName)
}
let messages: [MessageInfo] = (0..<50).map(sampleMessage)
let replyLine = Array(JSONRPC.resultLine(id: .number(7), MessageList(messages: messages).json).utf8.dropLast())

// MARK: - JSONSerialization, as before

func legacyParseRequest(_ line: [UInt8]) throws -> (String, String, String?) {
    guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
          object["jsonrpc"] as? String == "2.0", let method = object["method"] as? String,
          let params = object["params"] as? [String: Any],
          let conversation = params["conversation"] as? String, let text = params["text"] as? String else { throw WireError("bad") }
    _ = method
    return (conversation, text, params["replyTo"] as? String)
}

func legacyParseReply(_ line: [UInt8]) throws -> Int {
    guard let object = try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any],
          let result = object["result"] as? [String: Any], let list = result["messages"] as? [[String: Any]] else { throw WireError("bad") }
    var total = 0
    for message in list {
        total += (message["text"] as? String)?.utf8.count ?? 0
        total += (message["sentAtMs"] as? NSNumber)?.int64Value == nil ? 0 : 1
        total += (message["outgoing"] as? Bool) == true ? 1 : 0
    }
    return total
}

let legacyMessages: [[String: Any]] = messages.map { message in
    var object: [String: Any] = ["id": message.id, "conversationId": message.conversationId, "senderInboxId": message.senderInboxId,
                                 "sentAtMs": message.sentAtMs, "contentType": message.contentType, "text": message.text,
                                 "outgoing": message.outgoing, "deliveryStatus": message.deliveryStatus]
    if let name = message.senderName { object["senderName"] = name }
    return object
}

func legacyWriteReply(_ legacyMessages: [[String: Any]]) throws -> Int {
    let object: [String: Any] = ["jsonrpc": "2.0", "id": 7, "result": ["messages": legacyMessages]]
    return try JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]).count
}

// MARK: - Codable

struct CodableRequest: Codable {
    struct Params: Codable { let conversation: String; let text: String; let replyTo: String? }
    let jsonrpc: String
    let id: Int
    let method: String
    let params: Params
}

struct CodableMessage: Codable {
    let id, conversationId, senderInboxId: String
    let sentAtMs: Int64
    let contentType, text: String
    let outgoing: Bool
    let deliveryStatus: String
    let referenceId, senderName: String?
}

struct CodableReply: Codable {
    struct Result: Codable { let messages: [CodableMessage] }
    let jsonrpc: String
    let id: Int
    let result: Result
}

let decoder = JSONDecoder()
let encoder = JSONEncoder()
let codableReply = CodableReply(jsonrpc: "2.0", id: 7, result: .init(messages: messages.map {
    CodableMessage(id: $0.id, conversationId: $0.conversationId, senderInboxId: $0.senderInboxId, sentAtMs: $0.sentAtMs,
                   contentType: $0.contentType, text: $0.text, outgoing: $0.outgoing, deliveryStatus: $0.deliveryStatus,
                   referenceId: $0.referenceId, senderName: $0.senderName)
}))

// MARK: - Runs

print("control wire, \(requestLine.count)-byte sendMessage request, \(replyLine.count)-byte readMessages reply (50 messages); best of 5 × \(iterations)")
report("read a request line (daemon):", [
    ("JSONSerialization + [String: Any]", try measure(iterations) { blackHole(try legacyParseRequest(requestLine)) }),
    ("JSONParser + SendMessageParams (now)", try measure(iterations) {
        guard case .request(let request) = JSONRPC.parse(requestLine) else { fatalError() }
        blackHole(try request.decodeParams(SendMessageParams.self))
    }),
    ("JSONDecoder + Codable", try measure(iterations) { blackHole(try decoder.decode(CodableRequest.self, from: Data(requestLine))) }),
])
let replyIterations = max(1, iterations / 20)
report("read a reply line (client):", [
    ("JSONSerialization + [String: Any]", try measure(replyIterations) { blackHole(try legacyParseReply(replyLine)) }),
    ("JSONParser + MessageList (now)", try measure(replyIterations) {
        guard case .response(_, .success(let json)) = try JSONRPC.ServerMessage(line: replyLine) else { fatalError() }
        blackHole(try MessageList(json: json))
    }),
    ("JSONDecoder + Codable", try measure(replyIterations) { blackHole(try decoder.decode(CodableReply.self, from: Data(replyLine))) }),
])
report("write a reply line (daemon):", [
    ("JSONSerialization + [String: Any]", try measure(replyIterations) { blackHole(try legacyWriteReply(legacyMessages)) }),
    ("MessageList + JSONWriter (now)", measure(replyIterations) {
        blackHole(JSONRPC.resultLine(id: .number(7), MessageList(messages: messages).json).utf8.count)
    }),
    ("JSONEncoder + Codable", try measure(replyIterations) { blackHole(try encoder.encode(codableReply).count) }),
])
