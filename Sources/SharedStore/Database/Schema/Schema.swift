/// The database schema as plain SQL migration steps. Step `i` (0-based) brings the file to
/// version `i + 1`, which ``Migrator`` records in `PRAGMA user_version` in the same transaction.
///
/// ```swift
/// Schema.currentVersion          // 13
/// Schema.migrations[0].id        // "v1-initial"
/// ```
public enum Schema {
    /// One step: its SQL, then (for a step that rewrites values, which SQL alone cannot) Swift
    /// run on the same connection in the same transaction.
    public struct Step: Sendable {
        public let id: String
        public let sql: String
        public let rewrite: (@Sendable (SQLiteConnection) throws(StoreError) -> Void)?

        init(id: String, sql: String, rewrite: (@Sendable (SQLiteConnection) throws(StoreError) -> Void)? = nil) {
            self.id = id
            self.sql = sql
            self.rewrite = rewrite
        }
    }

    public static let migrations: [Step] = [
        Step(id: "v1-initial", sql: v1),
        Step(id: "v2-inbox-tombstone", sql: v2),
        Step(id: "v3-outbox-relayed", sql: v3),
        Step(id: "v4-invite-limits-notification-preview", sql: v4),
        Step(id: "v5-outbox-body", sql: v5),
        Step(id: "v6-outliving-notice", sql: v6),
        Step(id: "v7-delivery-receipts", sql: v7),
        Step(id: "v8-roster-version", sql: v8),
        Step(id: "v9-roster-requests", sql: v9),
        // docs/adr/0052: content sealed per conversation; no table changes, only values.
        Step(id: ContentSealingMigration.stepId, sql: "", rewrite: ContentSealingMigration.run),
        Step(id: "v11-join-refusal", sql: v11),
        Step(id: "v12-attachment-transfer", sql: v12),
        // Issue #33: the outbox row keeps its push's clientId and body id, filled from the
        // pending pushes themselves (OutboxAddressMigration).
        Step(id: OutboxAddressMigration.stepId, sql: v13, rewrite: OutboxAddressMigration.run),
    ]

    /// The version this build reads and writes.
    public static var currentVersion: Int64 { Int64(migrations.count) }

    // MARK: v1

    // Times are Unix milliseconds. Booleans are 0/1. Ids are lowercase hex (PROTOCOL §1).
    static let v1 = """
        CREATE TABLE inbox (
            inboxId TEXT PRIMARY KEY NOT NULL,
            clientId TEXT NOT NULL UNIQUE,
            createdAt INTEGER NOT NULL,
            lastActivityAt INTEGER            -- NULL: never active
        );
        -- "Inbox Lifecycle Management" LRU ranking: ORDER BY lastActivityAt DESC, inboxId DESC walks this index.
        CREATE INDEX inbox_by_activity ON inbox(lastActivityAt, inboxId);

        CREATE TABLE conversation (
            id TEXT PRIMARY KEY NOT NULL,
            inboxId TEXT NOT NULL REFERENCES inbox(inboxId) ON DELETE CASCADE,
            clientId TEXT NOT NULL,
            topic TEXT NOT NULL UNIQUE,
            name TEXT,
            creatorInboxId TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            expiresAt INTEGER,
            state TEXT NOT NULL CHECK (state IN ('pendingJoin', 'active'))
        );
        CREATE INDEX conversation_by_inbox ON conversation(inboxId);

        CREATE TABLE member (
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            inboxId TEXT NOT NULL,
            publicKey TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            clientId TEXT NOT NULL,
            role TEXT NOT NULL CHECK (role IN ('creator', 'member')),
            PRIMARY KEY (conversationId, inboxId)
        ) WITHOUT ROWID;

        CREATE TABLE member_profile (
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            inboxId TEXT NOT NULL,
            name TEXT,
            PRIMARY KEY (conversationId, inboxId)
        ) WITHOUT ROWID;

        CREATE TABLE invite (
            id TEXT PRIMARY KEY NOT NULL,
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            secret TEXT NOT NULL,
            createdAt INTEGER NOT NULL,
            expiresAt INTEGER
        );
        CREATE INDEX invite_by_conversation ON invite(conversationId);

        CREATE TABLE join_request (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            inviteId TEXT NOT NULL,
            secret TEXT NOT NULL,
            requesterInboxId TEXT NOT NULL,
            requesterPublicKey TEXT NOT NULL,
            profileName TEXT,
            endpoint TEXT NOT NULL,
            clientId TEXT NOT NULL,
            messageId TEXT NOT NULL UNIQUE,
            receivedAt INTEGER NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'accepted', 'rejected'))
        );
        CREATE INDEX join_request_by_conversation ON join_request(conversationId, state);

        CREATE TABLE message (
            id TEXT PRIMARY KEY NOT NULL,
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            senderInboxId TEXT NOT NULL,
            sentAt INTEGER NOT NULL,
            receivedAt INTEGER NOT NULL,
            contentType TEXT NOT NULL,
            content BLOB NOT NULL,
            fallback TEXT,
            referenceId TEXT,
            isOutgoing INTEGER NOT NULL DEFAULT 0 CHECK (isOutgoing IN (0, 1)),
            deliveryStatus TEXT CHECK (deliveryStatus IS NULL OR deliveryStatus IN ('pending', 'sent', 'failed'))
        );
        -- The timeline's sort key: (sentAt, id), the same whichever process wrote first.
        CREATE INDEX message_timeline ON message(conversationId, sentAt, id);

        CREATE TABLE conversation_local_state (
            conversationId TEXT PRIMARY KEY NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            unreadCount INTEGER NOT NULL DEFAULT 0,
            lastReadAt INTEGER,
            muted INTEGER NOT NULL DEFAULT 0 CHECK (muted IN (0, 1)),
            isOpen INTEGER NOT NULL DEFAULT 0 CHECK (isOpen IN (0, 1))
        );

        CREATE TABLE outbox (
            messageId TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
            memberInboxId TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            payload BLOB NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            nextAttemptAt INTEGER NOT NULL,
            lastError TEXT,
            PRIMARY KEY (messageId, memberInboxId)
        ) WITHOUT ROWID;
        CREATE INDEX outbox_due ON outbox(state, nextAttemptAt);

        CREATE TABLE change_log (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            kind TEXT NOT NULL,
            conversationId TEXT,
            entityId TEXT,
            writerPid INTEGER NOT NULL,
            createdAt INTEGER NOT NULL
        );
        CREATE INDEX change_log_by_conversation ON change_log(conversationId);
        """

    // MARK: v2

    // ADR 0016: an identity whose rows are deleted but whose keystore files may still exist.
    // Written in the transaction that deletes the inbox's rows; removed once the files are
    // gone. The worker refuses a push to a clientId listed here as `unknown_client`.
    static let v2 = """
        CREATE TABLE inbox_tombstone (
            clientId TEXT PRIMARY KEY NOT NULL,
            inboxId TEXT NOT NULL,
            deletedAt INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    // MARK: v3

    // docs/adr/0028: a push the relay stored (its JetStream publish ack) is `relayed`, beside
    // `sent` (acked by the member's device itself). SQLite cannot change a CHECK constraint in
    // place, so the table is rebuilt: outbox only references message (nothing references
    // outbox), so dropping the old table deletes nothing elsewhere; the rows are copied first.
    static let v3 = """
        CREATE TABLE outbox_v3 (
            messageId TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
            memberInboxId TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            payload BLOB NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'relayed', 'sent', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            nextAttemptAt INTEGER NOT NULL,
            lastError TEXT,
            PRIMARY KEY (messageId, memberInboxId)
        ) WITHOUT ROWID;
        INSERT INTO outbox_v3(messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt, lastError)
            SELECT messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt, lastError FROM outbox;
        DROP TABLE outbox;
        ALTER TABLE outbox_v3 RENAME TO outbox;
        CREATE INDEX outbox_due ON outbox(state, nextAttemptAt);
        """

    // MARK: v4

    // Issue #17: an invite can be limited to one join (`singleUse`) and revoked (`revokedAt`);
    // a join request decided after either is refused. Existing invites stay as they were.
    // Issue #22: what a notification shows (`NotificationPreview`), per conversation (NULL:
    // the device's setting) and for the device (`device_setting`, key `notificationPreview`).
    static let v4 = """
        ALTER TABLE invite ADD COLUMN singleUse INTEGER NOT NULL DEFAULT 0 CHECK (singleUse IN (0, 1));
        ALTER TABLE invite ADD COLUMN revokedAt INTEGER;
        ALTER TABLE conversation_local_state ADD COLUMN notificationPreview TEXT
            CHECK (notificationPreview IS NULL OR notificationPreview IN ('full', 'name', 'none'));
        CREATE TABLE device_setting (
            key TEXT PRIMARY KEY NOT NULL,
            value TEXT NOT NULL,
            CHECK (key <> 'notificationPreview' OR value IN ('full', 'name', 'none'))
        ) WITHOUT ROWID;
        """

    // MARK: v5

    // docs/adr/0032: the sealed body of an outgoing message that goes by reference
    // (docs/protocol/bodies.md), stored once for all its members in the transaction that
    // stores the message and its outbox rows; deleted once none of those rows is pending.
    // A rowid table: the blob is up to 1 MiB, too large for a WITHOUT ROWID row.
    static let v5 = """
        CREATE TABLE outbox_body (
            messageId TEXT PRIMARY KEY NOT NULL REFERENCES message(id) ON DELETE CASCADE,
            bodyId TEXT NOT NULL,
            sealed BLOB NOT NULL
        );
        """

    // MARK: v6

    // docs/adr/0034: a notice that must outlive its conversation (an explode, a leave) waits here
    // after the conversation's rows and keys are gone. It holds only what delivery needs: the
    // sealed push exactly as the outbox held it, the member's endpoint and clientId (which the
    // push names in clear anyway), the retry state, and when it was queued (the 30-day bound).
    // No conversation id, inbox id, plaintext or key. A push that references a body
    // (docs/protocol/bodies.md) names its sealed body, kept once in `outliving_notice_body`
    // however many members wait for it, and deleted with the last notice that names it.
    static let v6 = """
        CREATE TABLE outliving_notice_body (
            bodyId TEXT PRIMARY KEY NOT NULL,
            sealed BLOB NOT NULL
        );
        CREATE TABLE outliving_notice (
            id INTEGER PRIMARY KEY AUTOINCREMENT,
            clientId TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            payload BLOB NOT NULL,
            bodyId TEXT REFERENCES outliving_notice_body(bodyId),
            attempts INTEGER NOT NULL DEFAULT 0,
            nextAttemptAt INTEGER NOT NULL,
            lastError TEXT,
            queuedAt INTEGER NOT NULL
        );
        CREATE INDEX outliving_notice_due ON outliving_notice(nextAttemptAt);
        """

    // MARK: v7

    // docs/protocol/receipts.md, docs/adr/0039: end-to-end delivery receipts.
    // - `outbox.state` gains `delivered` (the member's device said it stored the message);
    //   a `failed` row's `lastError` then holds the code the member's device sent back. The
    //   table is rebuilt as v3 did (SQLite cannot change a CHECK in place).
    // - `receipt_due`: a message this device stored (or refused for good after verifying its
    //   signer) whose sender is owed a receipt; the worker writes it in its commit, the
    //   daemon seals receipts from it in batches and deletes the rows in the same transaction.
    // - `conversation_local_state.receipts`: whether this device sends receipts for the
    //   conversation (on by default).
    static let v7 = """
        CREATE TABLE outbox_v7 (
            messageId TEXT NOT NULL REFERENCES message(id) ON DELETE CASCADE,
            memberInboxId TEXT NOT NULL,
            endpoint TEXT NOT NULL,
            payload BLOB NOT NULL,
            state TEXT NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'relayed', 'sent', 'delivered', 'failed')),
            attempts INTEGER NOT NULL DEFAULT 0,
            nextAttemptAt INTEGER NOT NULL,
            lastError TEXT,
            PRIMARY KEY (messageId, memberInboxId)
        ) WITHOUT ROWID;
        INSERT INTO outbox_v7(messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt, lastError)
            SELECT messageId, memberInboxId, endpoint, payload, state, attempts, nextAttemptAt, lastError FROM outbox;
        DROP TABLE outbox;
        ALTER TABLE outbox_v7 RENAME TO outbox;
        CREATE INDEX outbox_due ON outbox(state, nextAttemptAt);
        CREATE TABLE receipt_due (
            messageId TEXT PRIMARY KEY NOT NULL,
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            senderInboxId TEXT NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('delivered', 'failed')),
            error TEXT CHECK ((status = 'failed') = (error IS NOT NULL)),
            createdAt INTEGER NOT NULL
        ) WITHOUT ROWID;
        CREATE INDEX receipt_due_by_sender ON receipt_due(conversationId, senderInboxId);
        ALTER TABLE conversation_local_state ADD COLUMN receipts INTEGER NOT NULL DEFAULT 1 CHECK (receipts IN (0, 1));
        """

    // MARK: v8

    /// Versioned rosters (docs/protocol/roster.md, docs/adr/0042): the roster version a
    /// conversation's member rows are at, the deltas that came before their predecessor, and
    /// the members who left or were removed (a departure is final).
    static let v8 = """
        ALTER TABLE conversation ADD COLUMN rosterVersion INTEGER NOT NULL DEFAULT 0;
        CREATE TABLE roster_pending (
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            base INTEGER NOT NULL,
            messageId TEXT NOT NULL,
            content BLOB NOT NULL,
            receivedAt INTEGER NOT NULL,
            PRIMARY KEY (conversationId, base)
        );
        CREATE TABLE roster_departed (
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            inboxId TEXT NOT NULL,
            PRIMARY KEY (conversationId, inboxId)
        );
        """

    // MARK: v9

    /// A member that sees a gap in its roster asks the creator for the full roster
    /// (docs/protocol/roster.md §9, docs/adr/0049):
    /// - `roster_request`, on the creator's device: the latest request of each member (the
    ///   worker rewrites the one row, so a flood grows nothing); `owed` until the daemon
    ///   answers it, `answeredAt` when it last sent that member the full roster (the rate limit).
    /// - `roster_asked`, on a member's device: when it last asked, per conversation (its rate limit).
    /// - `roster_rename`, on the creator's device: each member's latest `sotto/rename:1.0`
    ///   (roster.md §10), `owed` until re-issued as a delta, `appliedAt` for its rate limit.
    static let v9 = """
        CREATE TABLE roster_request (
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            inboxId TEXT NOT NULL,
            version INTEGER NOT NULL,
            receivedAt INTEGER NOT NULL,
            owed INTEGER NOT NULL DEFAULT 1 CHECK (owed IN (0, 1)),
            answeredAt INTEGER,
            PRIMARY KEY (conversationId, inboxId)
        ) WITHOUT ROWID;
        CREATE TABLE roster_rename (
            conversationId TEXT NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            inboxId TEXT NOT NULL,
            profileName TEXT NOT NULL,
            receivedAt INTEGER NOT NULL,
            owed INTEGER NOT NULL DEFAULT 1 CHECK (owed IN (0, 1)),
            appliedAt INTEGER,
            PRIMARY KEY (conversationId, inboxId)
        ) WITHOUT ROWID;
        CREATE TABLE roster_asked (
            conversationId TEXT PRIMARY KEY NOT NULL REFERENCES conversation(id) ON DELETE CASCADE,
            version INTEGER NOT NULL,
            askedAt INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    // MARK: v11

    /// A join the creator refused (docs/protocol/join-refusal.md, docs/adr/0061), on the
    /// joiner's device: one row per refused join request, written by the worker with the refusal. No
    /// foreign key: it outlives the pending conversation and identity it answers (both deleted
    /// as an abandoned join is), so `sotto ls` can say `refused: <reason>` until the user
    /// dismisses it. It holds ids, times and a reason from a closed set: no name, no content.
    static let v11 = """
        CREATE TABLE join_refusal (
            joinRequestId TEXT PRIMARY KEY NOT NULL,
            conversationId TEXT NOT NULL,
            reason TEXT NOT NULL,
            askedAt INTEGER NOT NULL,
            refusedAt INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    // MARK: v12

    /// Where the fetch of an incoming message's attachment stands on this device
    /// (docs/protocol/attachments.md §9, docs/adr/0078): written by the daemon's fetcher only,
    /// deleted with its message (explode, leave). No row: the reference is here and nothing
    /// was fetched (`waiting`). It holds an id, a state, a count and a reason in Sotto's own
    /// words: no name, no content.
    static let v12 = """
        CREATE TABLE attachment_transfer (
            messageId TEXT PRIMARY KEY NOT NULL REFERENCES message(id) ON DELETE CASCADE,
            state TEXT NOT NULL CHECK (state IN ('fetching', 'available', 'failed')),
            bytesDone INTEGER NOT NULL DEFAULT 0,
            failure TEXT,
            updatedAt INTEGER NOT NULL
        ) WITHOUT ROWID;
        """

    // MARK: v13

    /// Issue #33 (docs/adr/0075): the address of each push beside it, written by the outbox's
    /// writers from what the push was composed with: the member's `clientId` (its relay mailbox
    /// `sotto.mb.<clientId>`) and the id of the body it references (docs/protocol/bodies.md),
    /// NULL for an inline push. ``OutboxAddressMigration`` fills them for the pending rows of
    /// an older file in the same transaction; a row that is no longer pending keeps NULL.
    static let v13 = """
        ALTER TABLE outbox ADD COLUMN clientId TEXT;
        ALTER TABLE outbox ADD COLUMN bodyId TEXT;
        """
}
