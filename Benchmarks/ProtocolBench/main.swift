// Per-operation cost of the protocol's hot paths, in ns/op and ops/s:
//   swift build -c release --product ProtocolBench && .build/release/ProtocolBench [iterations]
#if canImport(Glibc)
import Glibc
#endif
import SharedStore

let iterations = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 2000 : 2000

func measure(_ name: String, _ count: Int, _ body: (Int) throws -> Void) rethrows {
    // One untimed warm-up run (lazy contexts, page cache).
    try body(0)
    let start = WallClock.monotonicNs()
    for index in 0..<count { try body(index) }
    let elapsed = Double(WallClock.monotonicNs() - start)
    let nsPerOp = elapsed / Double(count)
    let label = name.padding(24)
    print("\(label) \(String(Int(nsPerOp.rounded())).leftPadding(10)) ns/op \(String(Int((1e9 / nsPerOp).rounded())).leftPadding(10)) ops/s")
}

extension String {
    func padding(_ width: Int) -> String { self + String(repeating: " ", count: max(0, width - count)) }
    func leftPadding(_ width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}

let recipient = Identity.generate()
let sender = PrivateKey.generate()
let conversationId = Hex.encode(SecureRandom.bytes(16))
let topic = ProtocolIds.topic(conversationId: conversationId)
let message = SignedMessage.sign(
    id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversationId, sentAtMs: WallClock.nowMs(),
    contentType: ContentType.text, content: Array("hello from the benchmark".utf8), fallback: nil, signer: sender)
let plaintext = message.encode()
let envelope = Envelope.seal(plaintext, recipient: recipient.publicKey, clientId: recipient.clientId, topic: topic)
let payload = PushPayload(clientId: recipient.clientId, topic: topic, envelope: envelope).encode()

var directory = Array("/tmp/sotto-bench-XXXXXX".utf8CString)
guard mkdtemp(&directory) != nil else { fatalError("mkdtemp") }
let path = directory.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
let keystore = try Keystore(directory: path + "/keystore", environment: [:], createIfMissing: true)
try keystore.save(recipient)

print("ProtocolBench: \(iterations) iterations, plaintext \(plaintext.count) B, payload \(payload.count) B")
var sink = 0
measure("key generation", iterations) { _ in sink &+= Int(PrivateKey.generate().publicKey.bytes[1]) }
measure("sign message", iterations) { index in
    sink &+= SignedMessage.sign(id: message.id, conversationId: conversationId, sentAtMs: Int64(index),
                                contentType: ContentType.text, content: message.contentBytes, fallback: nil,
                                signer: sender).signature.utf8.count
}
measure("seal", iterations) { _ in
    sink &+= Envelope.seal(plaintext, recipient: recipient.publicKey, clientId: recipient.clientId, topic: topic).count
}
try measure("open+verify", iterations) { _ in
    let opened = try Envelope.open(envelope, recipientKey: recipient.privateKey, clientId: recipient.clientId, topic: topic)
    let parsed = try SignedMessage.parse(opened)
    try parsed.verify()
    sink &+= parsed.contentBytes.count
}
try measure("keystore lookup clientId", iterations) { _ in
    sink &+= Int(try keystore.identity(clientId: recipient.clientId).createdAtMs & 1)
}
try measure("PushOpener.open (full)", iterations) { _ in
    let opened = try PushOpener.open(payload) { (clientId) throws(KeystoreError) in try keystore.identity(clientId: clientId) }
    sink &+= opened.message.contentBytes.count
}
// Damage checks the worker adds to every push (docs/adr/0018, 0019): two lstat calls.
let group = GroupDirectory(path: path)
let marker = DamageMarker(databasePath: group.databasePath)
measure("damage marker lstat", iterations * 10) { _ in sink &+= marker.isPresent ? 1 : 0 }
measure("group directory verify", iterations * 10) { _ in sink &+= (try? group.verify()) == nil ? 1 : 0 }
try keystore.delete(inboxId: recipient.inboxId)
_ = unlink(path + "/keystore/master.key")
_ = rmdir(path + "/keystore")
_ = rmdir(path)
if sink == 42 { print("") }   // keep results observable
try QuickCheckBench.run()
