import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport

// body-bench (issue #17): what bodies by reference cost, each figure against a baseline
// measured in the same run (docs/protocol/bodies.md, docs/adr/0032).
//  1. sotto-notify spawn → durable ack, Accept=yes through systemd-socket-activate: a push
//     that carries its text inline vs the same text by reference (the body read after the
//     push and checked is the only new cost), and a 64 KiB text by reference.
//  2. Peak RSS of one worker with a 64 KiB text and with the largest body (budget 24 MB).
//  3. Bytes a relay (nats-server -js) stores for one 64 KiB message to N members: the body
//     once plus N pushes, against 64 KiB + N × one push, and against N inline copies.
// Run through Benchmarks/body-bench.sh (release build).
//
//   body-bench <sotto-notify> [pushes] [members]

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: body-bench SOTTO_NOTIFY [PUSHES] [MEMBERS]\n".utf8))
    exit(64)
}
let worker = arguments[1]
let pushCount = arguments.count > 2 ? Int(arguments[2]) ?? 200 : 200
let memberCount = arguments.count > 3 ? Int(arguments[3]) ?? 1_000 : 1_000

guard let vectors = try Vectors.load() else { fatalError("vectors not found; set SOTTO_VECTORS") }
let fixture = try WorkerFixture(vectors: vectors)
signal(SIGPIPE, SIG_IGN)

// The daemon keeps a connection open on the database in the real system (see WorkerBench).
let holder = try ChildProcess.launch("/usr/bin/sqlite3", [fixture.group.databasePath])
holder.write("SELECT count(*) FROM sqlite_master;\nSELECT 'held';\n")
guard holder.waitForLine(containing: "held") != nil else { fatalError("sqlite3 holder failed") }
defer { holder.terminate() }

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

struct Push { let payload: [UInt8]; let body: [UInt8]? }

/// A text of `bytes` bytes, different each time.
func text(_ bytes: Int, _ tag: Int) -> String {
    let head = "\(tag) "
    return head + String(repeating: "x", count: max(0, bytes - head.utf8.count))
}

func inline(_ bytes: Int, _ tag: Int) throws -> Push {
    Push(payload: try fixture.sealText(text(bytes, tag)).payload, body: nil)
}

func byReference(_ bytes: Int, _ tag: Int) -> Push {
    let push = fixture.byReference(contentType: ContentType.text, content: Array(text(bytes, tag).utf8))
    return Push(payload: push.payload, body: push.body)
}

/// Sequential pushes, each to a fresh worker (Accept=yes); ms from connect to ack.
func latencies(_ pushes: [Push]) throws -> [Double] {
    try SequentialAcks.latencies(pushes.map { ($0.payload, $0.body) }, worker: worker,
                                 socketPath: fixture.tmp.path + "/bench.sock", environment: fixture.environment)
}

func row(_ name: String, _ ms: [Double]) -> String {
    String(format: "%-28@ p50 %6.2f ms  p99 %6.2f ms", name as NSString, percentile(ms, 0.5), percentile(ms, 0.99))
}

// MARK: - 1. Spawn → ack

let sameLength = 1_500  // the longest text that still fits inline with room to spare
print("body-bench: \(pushCount) sequential pushes each, Accept=yes via systemd-socket-activate")
_ = try latencies(try (0..<10).map { try inline(100, -$0 - 1) })  // page cache, WAL
// Interleaved rounds so machine noise hits both sides alike.
var inlineMs: [Double] = [], referenceMs: [Double] = [], largeMs: [Double] = []
for round in 0..<4 {
    let n = pushCount / 4
    inlineMs += try latencies(try (0..<n).map { try inline(sameLength, round * 10_000 + $0) })
    referenceMs += try latencies((0..<n).map { byReference(sameLength, round * 10_000 + 1_000 + $0) })
    largeMs += try latencies((0..<n).map { byReference(ContentLimits.maxTextBytes, round * 10_000 + 2_000 + $0) })
}
print(row("inline, \(sameLength) B text", inlineMs))
print(row("by reference, \(sameLength) B", referenceMs))
print(row("by reference, 64 KiB", largeMs))
print(String(format: "ratio by reference / inline (same text): p50 %.2f  p99 %.2f",
             percentile(referenceMs, 0.5) / percentile(inlineMs, 0.5), percentile(referenceMs, 0.99) / percentile(inlineMs, 0.99)))
print(String(format: "ratio 64 KiB by reference / inline:      p50 %.2f  p99 %.2f",
             percentile(largeMs, 0.5) / percentile(inlineMs, 0.5), percentile(largeMs, 0.99) / percentile(inlineMs, 0.99)))

// MARK: - 2. Peak RSS

func peakRSS(_ push: Push) throws -> Int {
    let result = try ChildProcess.run("/usr/bin/time", ["-f", "RSS %M", worker, "--payload", "-"],
                                      environment: fixture.environment,
                                      stdinBytes: push.payload + [0x0a] + (push.body ?? []))
    guard result.stdout.contains("\"ok\":true"),
          let line = result.stderr.split(separator: "\n").last(where: { $0.hasPrefix("RSS ") }),
          let kib = Int(line.dropFirst(4)) else { throw PushClient.Failure(message: "\(result.stdout) \(result.stderr)") }
    return kib
}
let largest: Push = {
    let reply = JSONWriter.bytes(["reference": .string(Hex.encode(SecureRandom.bytes(16))),
                                  "text": .string(text(ContentLimits.maxTextBytes, 7)),
                                  "pad": .string(String(repeating: "p", count: BodySize.maxContentBytes - ContentLimits.maxTextBytes - 120))])
    let push = fixture.byReference(contentType: ContentType.reply, content: reply)
    return Push(payload: push.payload, body: push.body)
}()
print("peak RSS: inline \(try peakRSS(try inline(sameLength, 99_001))) KiB, 64 KiB text \(try peakRSS(byReference(ContentLimits.maxTextBytes, 99_002))) KiB, "
      + "largest body (\(largest.body!.count) B) \(try peakRSS(largest)) KiB (budget 24576)")

// MARK: - 3. What the relay stores

guard NatsServer.isInstalled else { print("relay storage: skipped (nats-server not installed)"); exit(0) }
let server = try NatsServer.start(storeDirectory: fixture.tmp.path + "/jetstream")
defer { server.stop() }
var options = RelayConnection.Options()
options.name = "body-bench"
let relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)), options: options)
defer { relay.close() }
try relay.ensureStream()
try relay.ensureBodyStream()

// What the daemon's composer does for one message to N members on a relay: one body, then a
// reference sealed to each member (its own key, clientId, topic omitted), published to its mailbox.
let conversationId = Hex.encode(SecureRandom.bytes(16))
let topic = ProtocolIds.topic(conversationId: conversationId)
let sender = PrivateKey.generate()
let content = Array(text(ContentLimits.maxTextBytes, 1).utf8)
let body = SealedBody.seal(content)
let reference = BodyReference(body, contentType: ContentType.text, fallback: nil)
let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: conversationId,
                                sentAtMs: WallClock.nowMs(), contentType: ContentType.body, content: reference.encode(),
                                fallback: BodyReference.outerFallback, signer: sender).encode()
let t0 = MonotonicClock.nowNs()
try relay.publishBody(body.sealed, id: reference.id)
var pushBytes = 0
for _ in 0..<memberCount {
    let clientId = SecureRandom.uuidV4()
    let envelope = Envelope.seal(signed, recipient: PrivateKey.generate().publicKey, clientId: clientId, topic: topic)
    let payload = PushPayload(clientId: clientId, topic: nil, envelope: envelope, body: reference.hint).encode()
    pushBytes += payload.count
    _ = try relay.publish(payload, to: try Mailbox(clientId: clientId), messageId: Hex.encode(SHA256.hash(payload)))
}
let publishSeconds = Double(MonotonicClock.nowNs() - t0) / 1e9
let streamBytes = try relay.streamUsage(Mailbox.streamName).bytes + relay.streamUsage(BodyStream.streamName).bytes
let onePush = Double(pushBytes) / Double(memberCount)
let goal = 65_536 + Double(memberCount) * onePush
print(String(format: "relay storage, one 64 KiB text to %d members: %.0f KB stored (body %d B once, pushes %.0f B each); "
             + "ratio to 64 KiB + N x one push: %.2f (goal <= 1.50); ratio to N inline copies of 64 KiB: %.3f; publish %.2f s",
             memberCount, Double(streamBytes) / 1000, body.sealed.count, onePush, Double(streamBytes) / goal,
             Double(streamBytes) / (Double(memberCount) * 65_536), publishSeconds))
