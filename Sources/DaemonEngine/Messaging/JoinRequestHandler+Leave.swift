import DaemonLogging
import DaemonStore
import SharedStore

/// The creator's answer to a leave (docs/protocol/leave-remove.md): the worker already dropped
/// the leaver's member row; the creator's daemon sends every remaining member a
/// `sotto/roster_delta:1.0` removing it (or the full roster, `RosterAnnouncer`), in one transaction that re-checks it is still owed (so a repeat, a
/// second leave or a restart sends it once). Runs on the `membersChanged` the leave writes and
/// at launch (`announceAllAfterLeaves`), so a daemon that was down when the leave came still
/// answers it.
///
/// ```swift
/// await joinRequests.announceAfterLeave(conversationId: cid)   // on membersChanged
/// await joinRequests.announceAllAfterLeaves()                   // at launch
/// ```
extension JoinRequestHandler {
    public func announceAllAfterLeaves() async {
        let ids = (try? database.read { conn in try LeaveRepository.conversationsOwingMembership(on: conn) }) ?? []
        for id in ids { await announceAfterLeave(conversationId: id) }
    }

    func announceAfterLeave(conversationId: String) async {
        do {
            guard let conversation = try database.read({ conn in try ConversationRepository.find(id: conversationId, on: conn) }),
                  conversation.creatorInboxId == conversation.inboxId,
                  try database.read({ conn in try LeaveRepository.membershipOwed(conversationId: conversationId, on: conn) })
            else { return }
            let identity = try await identities.identity(of: conversation.inboxId)
            let sent = try await database.write { conn -> Bool in
                guard try LeaveRepository.membershipOwed(conversationId: conversationId, on: conn) else { return false }
                let leavers = try LeaveRepository.leaversOwed(conversationId: conversationId, on: conn)
                try RosterAnnouncer.queue(.departed(leavers), of: conversation, from: identity, on: conn)
                return true
            }
            if sent {
                DaemonLog.info("a member left; a roster delta removing it is sent to the others")
                await outbox.kick()
            }
        } catch {
            DaemonLog.warning("the membership after a leave is not sent yet: \(error)")
        }
    }
}
