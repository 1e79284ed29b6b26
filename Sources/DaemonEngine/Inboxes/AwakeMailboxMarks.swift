import DaemonLogging
import Glibc
import SottoCrypto
import SottoWire

/// Tells sotto-relayd which inboxes are awake: an empty file `<group>/awake-mailboxes/<clientId>`
/// per awake inbox, made when it wakes and removed when it sleeps or is deleted. relayd keeps a
/// relay connection only for these; every other mailbox is drained by a short connection of
/// its own at random moments (docs/adr/0056). The marks are a hint, not state: none is
/// fsynced (after a power cut relayd drains a lost one on schedule, and the next wake marks
/// it again), and a failure to write one is logged and changes nothing else.
///
/// ```swift
/// let marks = AwakeMailboxMarks(group: group)
/// marks.mark(identity.clientId)       // the inbox woke
/// marks.unmark(identity.clientId)     // it sleeps, or was deleted
/// marks.keepOnly(awakeClientIds)      // after the launch: what a previous run left
/// ```
struct AwakeMailboxMarks: Sendable {
    let directory: String

    init(group: GroupDirectory) {
        directory = group.awakeMailboxesPath
    }

    // MARK: - Marks

    func mark(_ clientId: String) {
        guard ProtocolIds.isClientId(clientId) else { return }
        if mkdir(directory, 0o700) != 0, errno != EEXIST {
            return warn("cannot create \(directory)")
        }
        let fd = open(path(clientId), O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return warn("cannot mark an awake inbox in \(directory)") }
        close(fd)
    }

    func unmark(_ clientId: String) {
        guard ProtocolIds.isClientId(clientId) else { return }
        if unlink(path(clientId)) != 0, errno != ENOENT { warn("cannot unmark a sleeping inbox in \(directory)") }
    }

    /// Removes every mark but `clientIds`' (a previous run's, or a file that is no clientId),
    /// and creates the directory, so relayd knows the daemon speaks for this group.
    func keepOnly(_ clientIds: Set<String>) {
        if mkdir(directory, 0o700) != 0, errno != EEXIST { return warn("cannot create \(directory)") }
        guard let names = try? DirectoryNames.read(directory) else { return warn("cannot read \(directory)") }
        for name in names where !clientIds.contains(name) { _ = unlink(directory + "/" + name) }
        for clientId in clientIds { mark(clientId) }
    }

    // MARK: - Helpers

    private func path(_ clientId: String) -> String { directory + "/" + clientId }

    private func warn(_ what: String) {
        DaemonLog.warning("\(what): \(String(cString: strerror(errno))); sotto-relayd drains those mailboxes on its schedule")
    }
}
