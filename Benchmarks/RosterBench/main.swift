import Foundation
import SottoCrypto
import SottoWire
import TestSupport

// roster-bench (issue #17 item 3): joining as the 1,000th member, i.e. the real worker
// (spawned per push by systemd-socket-activate, Accept=yes) opening the creator's full roster
// of 1,000 members by reference (the body read after the push and checked), and replacing the
// member rows with it, until its durable ack. Baseline in the same run: joining as the 2nd
// member (a roster of 2, inline). Rounds interleave so machine noise hits both alike. Each push
// carries a higher roster version, so every one is applied, never skipped as stale
// (docs/protocol/roster.md §5). Run through Benchmarks/roster-bench.sh (release build).
//
//   roster-bench <sotto-notify> [pushes]

let arguments = CommandLine.arguments
guard arguments.count >= 2 else {
    FileHandle.standardError.write(Data("usage: roster-bench SOTTO_NOTIFY [PUSHES]\n".utf8))
    exit(64)
}
let worker = arguments[1]
let pushCount = max(4, arguments.count > 2 ? Int(arguments[2]) ?? 100 : 100)

guard let vectors = try Vectors.load() else { fatalError("vectors not found; set SOTTO_VECTORS") }
let fixture = try WorkerFixture(vectors: vectors, holdsCreatorKey: true)
guard let creatorKey = fixture.creatorKey else { fatalError("no creator key") }
signal(SIGPIPE, SIG_IGN)

// The daemon keeps a connection open on the database in the real system (see WorkerBench).
let holder = try ChildProcess.launch("/usr/bin/sqlite3", [fixture.group.databasePath])
holder.write("SELECT count(*) FROM sqlite_master;\nSELECT 'held';\n")
guard holder.waitForLine(containing: "held") != nil else { fatalError("sqlite3 holder failed") }
defer { holder.terminate() }

func member(_ key: PublicKey, _ name: String, clientId: String = SecureRandom.uuidV4()) -> Member {
    Member(inboxId: key.inboxId, publicKey: key.hex, endpoint: "unix:/run/user/1000/sotto/push.sock",
           clientId: clientId, profileName: name)
}
let me = member(try PrivateKey(bytes: fixture.recipient.privateKey).publicKey, "Me", clientId: fixture.recipient.clientId)
let creator = member(creatorKey.publicKey, fixture.creatorProfileName)
let others = (0..<998).map { member(PrivateKey.generate().publicKey, "Member \($0)") }

struct Push { let payload: [UInt8]; let body: [UInt8]? }
var version: Int64 = 0

/// The creator's full roster of `count` members (creator, this device, others), with the next version.
@MainActor func roster(_ count: Int) throws -> Push {
    version += 1
    let members = [creator, me] + others.prefix(count - 2)
    let content = JSONWriter.bytes(.object(["name": "Trip", "members": .array(members.map(RosterDelta.memberJSON)),
                                            "version": .int(version)]))
    let inline = try fixture.seal(contentType: ContentType.membership, content: content, signer: creatorKey)
    if inline.payload.count <= PushPayload.maxBytes { return Push(payload: inline.payload, body: nil) }
    let reference = fixture.byReference(contentType: ContentType.membership, content: content, signer: creatorKey)
    return Push(payload: reference.payload, body: reference.body)
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * p))]
}

/// Sequential pushes, each to a fresh worker; ms from connect to ack.
func latencies(_ pushes: [Push]) throws -> [Double] {
    try SequentialAcks.latencies(pushes.map { ($0.payload, $0.body) }, worker: worker,
                                 socketPath: fixture.tmp.path + "/bench.sock", environment: fixture.environment)
}

func members() throws -> Int64 {
    try fixture.open().queryOne("SELECT count(*) FROM member")?.int64(0) ?? -1
}

let largest = try roster(1_000)
print("roster-bench: \(pushCount) sequential pushes each; a 1,000-member roster is \(largest.body?.count ?? 0) B by reference")
_ = try latencies([try roster(2), largest, try roster(2)])  // page cache, WAL
var secondMs: [Double] = [], thousandthMs: [Double] = []
for _ in 0..<4 {
    let n = pushCount / 4
    secondMs += try latencies(try (0..<n).map { _ in try roster(2) })
    guard try members() == 2 else { fatalError("the 2-member roster was not applied") }
    thousandthMs += try latencies(try (0..<n).map { _ in try roster(1_000) })
    guard try members() == 1_000 else { fatalError("the 1,000-member roster was not applied") }
}
func row(_ name: String, _ ms: [Double]) -> String {
    String(format: "%-36@ p50 %7.2f ms  p99 %7.2f ms", name as NSString, percentile(ms, 0.5), percentile(ms, 0.99))
}
print(row("join as the 2nd member (inline)", secondMs))
print(row("join as the 1,000th (by reference)", thousandthMs))
print(String(format: "ratio 1,000th / 2nd: p50 %.2f  p99 %.2f",
             percentile(thousandthMs, 0.5) / percentile(secondMs, 0.5), percentile(thousandthMs, 0.99) / percentile(secondMs, 0.99)))
