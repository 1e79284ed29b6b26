import SottoCrypto
import SottoWire

/// The words Sotto uses when its database is damaged: what happened, where, and what the
/// user does about it. The daemon logs and answers with them, the worker logs them; both
/// name the file, so the message stands on its own in a journal.
///
/// ```swift
/// DaemonLog.error(DatabaseDamage.message(group: group, cause: "SQLITE_CORRUPT in table message"))
/// // "the database at /home/me/.local/share/sotto/shared.sqlite is damaged (…); stop sotto, …"
/// ```
public enum DatabaseDamage {
    public static func message(group: GroupDirectory, cause: String) -> String {
        "the database at \(group.databasePath) is damaged (\(cause)); " + remedy(group: group)
    }

    /// What to do: stop, back up, rebuild (or restore), start again.
    public static func remedy(group: GroupDirectory) -> String {
        let dir = group.path
        return "stop sotto (systemctl --user stop sotto.service sotto-push.socket), back up the group directory "
            + "(cp -a \(dir) \(dir).bak), run `sotto repair --group-dir \(dir)` (it rebuilds the database from every row "
            + "that can still be read and keeps the damaged file), or restore shared.sqlite from a backup, then start "
            + "sotto again. Until then pushes are refused with a retryable error, so their senders keep them"
    }
}
