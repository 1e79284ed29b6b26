import SottoCrypto
import SottoWire

/// The clientIds of the identities in a keystore directory, read without its master key:
/// `<clientId>.identity` names. The unused slot (`unused.identity`) is not one of them: its
/// mailbox appears on the relay only once the daemon gives the identity out (a new
/// conversation, a join), when the slot becomes `<clientId>.identity` (issue #19, goal 5).
/// Nothing is lost meanwhile: the mailbox stream keeps what is published for a subject before
/// its consumer exists, and the consumer delivers from the first (docs/adr/0044).
/// sotto-relayd never opens an identity: it needs no key.
///
/// ```swift
/// switch KeystoreScan.clientIds(in: group.keystorePath) {
/// case .found(let ids): …
/// case .unreadable(let why): …     // keep the last known set
/// }
/// ```
enum KeystoreScan {
    enum Result: Equatable {
        case found(Set<String>)
        case unreadable(String)
    }

    static func clientIds(in directory: String) -> Result {
        let names: [String]
        do throws(DirectoryError) { names = try DirectoryNames.read(directory) } catch { return .unreadable(error.description) }
        var ids = Set<String>()
        for name in names where name.hasSuffix(".identity") {
            let clientId = String(name.dropLast(".identity".count))
            if ProtocolIds.isClientId(clientId) { ids.insert(clientId) }
        }
        return .found(ids)
    }
}
