// A helper process for the keystore race test: one instance rewrites an identity, another
// reads it, both on the same file, to show rename-atomic writes never yield a torn read.
//
//   sotto-keystore-probe write <dir> <clientId> <count>
//       alternately saves two identities (same clientId, different keys) <count> times
//   sotto-keystore-probe read <dir> <clientId> <stopFile>
//       reads until <stopFile> exists; prints "ready" after the first good read, then at the
//       end "ok=<n> torn=<n> distinct=<n>" (torn = any read that was not a valid identity)
#if canImport(Glibc)
import Glibc
#endif
import SharedStore

func fail(_ message: String) -> Never {
    print("error: \(message)")
    exit(2)
}

let args = CommandLine.arguments
guard args.count == 5 else { fail("usage: sotto-keystore-probe write|read <dir> <clientId> <count|stopFile>") }
let keystore: Keystore
do {
    keystore = try Keystore(directory: args[2], environment: [:])
} catch {
    fail("\(error)")
}
let clientId = args[3]

switch args[1] {
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
