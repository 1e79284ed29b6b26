import Glibc

/// Removes one named fsync, in debug builds only, so a test can show that the check behind a
/// durability rule (docs/durability.md) fails without it: the mutation test of each rule.
/// `SOTTO_TEST_SKIP_SYNC=wal-commit` runs SQLite at `synchronous = OFF`;
/// `keystore-file` skips the fsync of a keystore file before it is named,
/// `keystore-directory` every fsync of the keystore directory after a change,
/// `keystore-wipe` the fsync of a wiped file's zeros before its unlink, and
/// `keystore-unlink-directory` only the directory fsync after a wipe's unlink;
/// `relay-key-file`, `relay-key-directory` and `relay-key-parent` the fsyncs of a relayd
/// identity key (the file, `relayd-users` after its link, the group directory after
/// `relayd-users` is made), `mailbox-record-file` and `mailbox-record-directory` those of
/// relayd's mailbox record, `damage-marker-directory` the directory fsync after the damage
/// marker is linked. Several are
/// separated by commas. The rules and the test of each: docs/adr/0058. In release builds
/// `skips` is always false and the variable is never read.
///
/// ```swift
/// if !SyncMutation.skips(.keystoreFile) { guard fsync(file) == 0 else { … } }
/// ```
public enum SyncMutation: String, Sendable, CaseIterable {
    case walCommit = "wal-commit"
    case keystoreFile = "keystore-file"
    case keystoreDirectory = "keystore-directory"
    case keystoreWipe = "keystore-wipe"
    case keystoreUnlinkDirectory = "keystore-unlink-directory"
    case relayKeyFile = "relay-key-file"
    case relayKeyDirectory = "relay-key-directory"
    case relayKeyParent = "relay-key-parent"
    case mailboxRecordFile = "mailbox-record-file"
    case mailboxRecordDirectory = "mailbox-record-directory"
    case damageMarkerDirectory = "damage-marker-directory"

    public static let variable = "SOTTO_TEST_SKIP_SYNC"

    #if DEBUG
    private static let skipped: Set<String> = getenv(variable).map { Set(String(cString: $0).split(separator: ",").map(String.init)) } ?? []

    public static func skips(_ sync: SyncMutation) -> Bool { !skipped.isEmpty && skipped.contains(sync.rawValue) }
    #else
    @inline(__always) public static func skips(_ sync: SyncMutation) -> Bool { false }
    #endif
}
