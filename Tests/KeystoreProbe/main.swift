// A helper process for the keystore race test: one instance rewrites an identity, another
// reads it, both on the same file, to show rename-atomic writes never yield a torn read.
//
//   sotto-keystore-probe write <dir> <clientId> <count>
//       alternately saves two identities (same clientId, different keys) <count> times
//   sotto-keystore-probe read <dir> <clientId> <stopFile>
//       reads until <stopFile> exists; prints "ready" after the first good read, then at the
//       end "ok=<n> torn=<n> distinct=<n>" (torn = any read that was not a valid identity)
//   sotto-keystore-probe churn <dir> <count> <live>
//       saves stress identity i = 0..<count (see `StressIdentity`) and deletes identity
//       i - live after each save, so about <live> exist at any time; prints "churned=<n>"
//   sotto-keystore-probe lookup <dir> <count> <stopFile>
//       looks stress identities up by clientId until <stopFile> exists; prints
//       "found=<n> missing=<n> wrong=<n> torn=<n>" (wrong: another identity came back;
//       torn: any error other than .missing, with the first one on a "first-torn:" line)
#if canImport(Glibc)
import Glibc
#endif
import TestSupport
import SottoCrypto

func fail(_ message: String) -> Never {
    print("error: \(message)")
    exit(2)
}

/// The clientIds of `<clientId>.identity` files in `directory` right now.
func identityFiles(in directory: String) -> [String] {
    guard let dir = opendir(directory) else { return [] }
    defer { closedir(dir) }
    var names: [String] = []
    while let entry = readdir(dir) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        if name.hasSuffix(".identity"), name.utf8.count == 36 + 9 { names.append(String(name.utf8.prefix(36))!) }
    }
    return names
}

let args = CommandLine.arguments
guard args.count == 5 else { fail("usage: sotto-keystore-probe write|read|churn|lookup <dir> <clientId|count> <count|stopFile|live>") }
let keystore: Keystore
do {
    keystore = try Keystore(directory: args[2], environment: [:])
} catch {
    fail("\(error)")
}
let clientId = args[3]

switch args[1] {
case "churn":
    guard let count = Int(args[3]), let live = Int(args[4]), live > 0 else { fail("count, live") }
    for index in 0..<count {
        do {
            try keystore.save(StressIdentity.make(index), overwrite: true)
            if index >= live { try keystore.delete(inboxId: StressIdentity.make(index - live).inboxId) }
        } catch {
            fail("churn \(index): \(error)")
        }
    }
    print("churned=\(count)")
case "lookup":
    guard let count = Int(args[3]), count > 0 else { fail("count") }
    let stopFile = args[4]
    var expected: [String: String] = [:]   // clientId → inboxId
    var clientIds: [String] = []
    for index in 0..<count {
        let identity = StressIdentity.make(index)
        expected[identity.clientId] = identity.inboxId
        clientIds.append(identity.clientId)
    }
    var found = 0, missing = 0, wrong = 0, torn = 0
    var firstTorn: String?
    var generator = SystemRandomNumberGenerator()
    var live: [String] = []
    var round = 0
    while access(stopFile, F_OK) != 0 {
        // Mostly the identities that exist right now (the ones being deleted under us).
        if round % 8 == 0 { live = identityFiles(in: args[2]).filter { expected[$0] != nil } }
        round += 1
        let clientId = live.isEmpty || round % 4 == 0
            ? clientIds[Int(generator.next(upperBound: UInt(count)))]
            : live[Int(generator.next(upperBound: UInt(live.count)))]
        do {
            let identity = try keystore.identity(clientId: clientId)
            if identity.inboxId == expected[clientId] && identity.clientId == clientId { found += 1 } else { wrong += 1 }
        } catch .missing {
            missing += 1
        } catch {
            torn += 1
            if firstTorn == nil { firstTorn = "\(error)" }
        }
    }
    if let firstTorn { print("first-torn: \(firstTorn)") }
    print("found=\(found) missing=\(missing) wrong=\(wrong) torn=\(torn)")
case "write":
    guard let count = Int(args[4]) else { fail("count") }
    let first: Identity
    do { first = try keystore.identity(clientId: clientId) } catch { fail("\(error)") }
    var other = SecureRandom.bytes(32)
    let second = Identity(clientId: clientId, privateKey: .generate(),
                          databaseKey: SecretBytes(consuming: &other), createdAtMs: first.createdAtMs + 1)
    for index in 0..<count {
        do {
            try keystore.save(index % 2 == 0 ? second : first, overwrite: true)
        } catch {
            fail("write \(index): \(error)")
        }
    }
    print("wrote=\(count)")
case "read":
    let stopFile = args[4]
    var ok = 0, torn = 0
    var seen: Set<String> = []
    var announced = false
    while true {
        do {
            let identity = try keystore.identity(clientId: clientId)
            ok += 1
            seen.insert(identity.inboxId)
            if !announced {
                print("ready")
                fflush(nil)
                announced = true
            }
        } catch {
            torn += 1
        }
        if access(stopFile, F_OK) == 0 { break }
    }
    print("ok=\(ok) torn=\(torn) distinct=\(seen.count)")
default:
    fail("mode must be write or read")
}
