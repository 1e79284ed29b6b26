import ControlProtocol
import DaemonEngine

// `sotto status` as the control API's wire type: the engine's ``DaemonStatus`` with what only
// the daemon app knows (its version, where the master key lives), made where the engine meets
// the control socket (docs/adr/0075).

extension StatusResult {
    init(_ status: DaemonStatus, version: String, masterKey: String) {
        let inboxes = status.inboxes
        self.init(
            pid: status.pid, version: version, groupDirectory: status.group.path, runtimeDirectory: status.runtime.path,
            conversations: status.conversations, awakeCount: inboxes.awake.count, awake: inboxes.awake,
            protectedAwake: inboxes.protectedAwake, sleepingCount: inboxes.sleepingCount, capacity: inboxes.capacity,
            wakeReasons: Dictionary(uniqueKeysWithValues: inboxes.wakesByReason.map { ($0.key.rawValue, Int64($0.value)) }),
            unusedInboxReady: status.unusedInboxReady, unusedInboxHits: status.unusedInboxHits,
            unusedInboxMisses: status.unusedInboxMisses, lastSeq: status.lastSeq, walBytes: status.walBytes,
            checkpoints: CheckpointCounts(passive: status.checkpoints.passive, truncate: status.checkpoints.truncate,
                                          busy: status.checkpoints.busy),
            uptimeMs: status.uptimeMs,
            damagedIdentities: status.damagedIdentities.map { DamagedIdentity(clientId: $0.clientId, reason: $0.reason) },
            databaseDamaged: status.databaseDamaged, masterKey: masterKey, openInClient: status.openInClient,
            outlivingNotices: status.outlivingNotices.map { OutlivingNoticeFigures(waiting: $0.notices, members: $0.members) },
            sqliteHeap: SQLiteHeapFigures(usedBytes: status.sqliteHeapUsedBytes, highwaterBytes: status.sqliteHeapHighwaterBytes))
    }
}

extension NotificationPreviewResult {
    init(_ choice: NotificationPreviewChoice) {
        self.init(device: choice.device.rawValue, conversationId: choice.conversationId,
                  conversationPreview: choice.conversation?.rawValue, effective: choice.effective.rawValue)
    }
}
