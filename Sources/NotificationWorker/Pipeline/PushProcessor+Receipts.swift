import SharedStore
import SottoCrypto
import SottoWire

/// A push refused for good after its signer is known (docs/protocol/receipts.md §4): the
/// body never came (`body_missing`: a direct sender's stream ended, or relayd's relay no
/// longer has it and relayd hands the push on without one), or it does not match
/// (`body_mismatch`). The only thing written for such a push is the `receipt_due` row that
/// tells its sender, and only when the signer is a member with its key, the message id is
/// new here and the conversation's receipts are on (``FailedReceiptWriter``, SharedStore's
/// SQL). Best effort: the ack stays the refusal whatever happens here.
///
/// ```swift
/// recordFailedReceipt(payload, code: .bodyMissing)   // then ack body_missing
/// ```
extension PushProcessor {
    func recordFailedReceipt(_ payload: PushPayload, code: PushErrorCode) {
        guard payload.body != nil else { return }
        let signed: (message: SignedMessage, topic: String, identity: Identity)
        do {
            signed = try PushOpener.openSigned(payload, identityForClientId: { (clientId) throws(KeystoreError) in
                let identity = try self.openKeystore().identity(clientId: clientId)
                self.contentKeys.remember(identity)
                if self.isTombstoned(clientId) { throw .missing }
                return identity
            }, topicForClientId: { (clientId) throws(PushError) in try self.onlyTopic(clientId: clientId) })
        } catch {
            return
        }
        guard signed.message.contentType == ContentType.body, storageRefusal() == nil else { return }
        let message = signed.message
        do {
            let conn = try database()
            try conn.immediateTransaction { () throws(StoreError) in
                try FailedReceiptWriter.recordIfOwed(message, topic: signed.topic, recipientInboxId: signed.identity.inboxId,
                                                     code: code.rawValue, now: WallClock.nowMs(), on: conn)
            }
            WorkerLog.info("push \(code.rawValue): the sender is owed a failed receipt message=\(message.id)")
        } catch {
            WorkerLog.info("failed receipt not recorded: \(error)")
        }
    }
}
