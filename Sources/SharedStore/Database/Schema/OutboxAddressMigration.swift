import SottoWire

/// Schema step v13 (issue #33, docs/adr/0075): the outbox row keeps its push's address, the
/// member's `clientId` (the relay mailbox `sotto.mb.<clientId>`) and the id of the body the push
/// references, so the outbox no longer decodes its own sealed push to find them. The step's SQL
/// (`Schema.v13`) adds the two columns; this fills them for every pending row in the migrator's one
/// transaction with the version bump, so a crash leaves the file at v12 or filled at v13.
///
/// The values come from the row's own payload, once, here: it is the address the push was
/// sealed to (the envelope names the same clientId, and the recipient's worker checks it), and
/// every pending row has one. The `member` table does not: a removed member's row goes in the
/// transaction that queues its removal notice, and a member who left is deleted while pushes
/// to it may still wait. A row that is no longer pending is never sent again and keeps NULL;
/// so does a pending row whose payload does not decode: the outbox fails it on a relay
/// ("the push names no mailbox", as before this step) and hands it as it is to a device.
///
/// ```swift
/// try Migrator.migrate(conn)   // v12 → v13: outbox.clientId and outbox.bodyId of pending pushes filled
/// ```
public enum OutboxAddressMigration {
    /// Its step in ``Schema``.
    public static let stepId = "v13-outbox-address"

    @Sendable
    public static func run(_ conn: SQLiteConnection) throws(StoreError) {
        let pending = try conn.query("SELECT messageId, memberInboxId, payload FROM outbox WHERE state = 'pending'")
        let fill = try conn.prepare("UPDATE outbox SET clientId = ?, bodyId = ? WHERE messageId = ? AND memberInboxId = ?")
        for row in pending {
            guard let push = try? PushPayload.decode(try row.blob(2)) else { continue }
            try fill.bind([.text(push.clientId), .optional(push.body?.id), .text(try row.string(0)), .text(try row.string(1))])
            while try fill.step() {}
        }
    }
}
