import SottoCrypto
import SottoWire

/// Which identities' inboxes the daemon keeps awake: the names in `<group>/awake-mailboxes`
/// (an empty file per clientId, `AwakeMailboxMarks` in the daemon). relayd holds a relay
/// connection for those only; every other mailbox is drained by a short connection of its
/// own at random moments (`SleepingDrains`, docs/adr/0056). Without the directory (no daemon
/// has marked anything: a group used only by workers, or a daemon older than the marks) every
/// identity counts as awake, as before.
///
/// ```swift
/// switch AwakeMailboxes.read(group.awakeMailboxesPath) {
/// case .everyIdentity: …           // every mailbox keeps its connection
/// case .only(let clientIds): …     // these do; the others are drained on schedule
/// }
/// ```
enum AwakeMailboxes: Equatable {
    case everyIdentity
    case only(Set<String>)

    func contains(_ clientId: String) -> Bool {
        switch self {
        case .everyIdentity: return true
        case .only(let ids): return ids.contains(clientId)
        }
    }

    /// What the directory says now. One that cannot be read (other than missing) counts as
    /// every identity awake: a wrong "asleep" would delay pushes, a wrong "awake" only costs
    /// a connection.
    static func read(_ directory: String) -> AwakeMailboxes {
        guard let names = try? DirectoryNames.read(directory) else { return .everyIdentity }
        return .only(Set(names.filter(ProtocolIds.isClientId)))
    }
}
