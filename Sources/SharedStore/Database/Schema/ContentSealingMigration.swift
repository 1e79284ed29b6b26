import SottoWire

/// Schema step v10 (docs/adr/0052): seals the plaintext content cells a v9 file holds, for
/// every conversation whose key the connection's `contentKeys` can give. It runs inside the
/// migrator's one transaction with the version bump, so a crash anywhere leaves the old
/// plaintext file at v9 or the sealed one at v10, never a mix. A conversation whose identity
/// does not open keeps its cells as they were; they read as unreadable, as they would anyway.
/// Crash points: `migrate.sealing.conversationSealed` (after each conversation),
/// `migrate.sealing.allSealed` (before the commit).
///
/// ```swift
/// conn.contentKeys = keyring          // the daemon's, able to read its keystore
/// try Migrator.migrate(conn)          // v9 → v10 seals what it can
/// ```
public enum ContentSealingMigration {
    /// Its step in ``Schema``, and the version a file has once the step ran.
    public static let stepId = "v10-content-sealed"
    public static let version = Int64((Schema.migrations.firstIndex { $0.id == stepId } ?? Schema.migrations.count) + 1)

    @Sendable
    public static func run(_ conn: SQLiteConnection) throws(StoreError) {
        guard let keys = conn.contentKeys else { return }
        let conversations = try conn.query("SELECT id, inboxId FROM conversation ORDER BY id")
        for row in conversations {
            let conversationId = try row.string(0)
            guard keys.key(conversationId: conversationId, inboxId: try row.string(1)) != nil else { continue }
            for column in SealedColumn.allCases {
                try seal(column, conversationId: conversationId, on: conn)
            }
            CrashPoint.reach("migrate.sealing.conversationSealed")
        }
        CrashPoint.reach("migrate.sealing.allSealed")
    }

    private static func seal(_ column: SealedColumn, conversationId: String, on conn: SQLiteConnection) throws(StoreError) {
        let rows = try conn.query("""
            SELECT \(column.rowIdColumn), \(column.column) FROM \(column.table)
            WHERE \(column.conversationIdColumn) = ? AND \(column.column) IS NOT NULL
            """, [.text(conversationId)])
        for row in rows {
            let rowId = try row.string(0)
            let plain: [UInt8]
            switch row.values[1] {
            case .text(let text): plain = Array(text.utf8)
            case .blob(let bytes): plain = bytes
            default: continue
            }
            let sealed = try conn.sealedCell(plain, column, conversationId: conversationId, rowId: rowId)
            try conn.run("""
                UPDATE \(column.table) SET \(column.column) = ?
                WHERE \(column.conversationIdColumn) = ? AND \(column.rowIdColumn) = ?
                """, [sealed, .text(conversationId), .text(rowId)])
        }
    }
}
