import ControlProtocol
import Foundation
import SharedStore

/// The control socket's methods (JSON-RPC 2.0, camelCase), each a thin mapping onto the
/// daemon's services. Errors become JSON-RPC errors; nothing here can stop the daemon.
///
/// | method | params | result |
/// |---|---|---|
/// | `status` | – | daemon summary |
/// | `listConversations` | – | `{conversations: [...]}` |
/// | `newConversation` | `name?`, `profileName?` | `{conversationId, inboxId, topic}` |
/// | `readMessages` | `conversation`, `limit?` | `{messages: [...]}` |
/// | `sendMessage` | `conversation`, `text`, `replyTo?` | `{messageId, recipients}` |
/// | `markRead` | `conversation` | `{}` |
/// | `createInvite` | `conversation`, `expiresInMs?` | `{code, inviteId, expiresAtMs?}` |
/// | `joinConversation` | `code`, `profileName?` | `{conversationId, state, name?}` |
/// | `react` | `conversation`, `message`, `emoji`, `remove?` | `{messageId, recipients}` |
/// | `explode` | `conversation`, `atMs?` | `{conversationId, expiresAtMs, deleted, delivered, undelivered}` |
/// | `subscribe` | `since?`, `conversation?` | `{lastSeq, gap?, conversationId?}`, then `change` notifications (`gap`: changes the replay could not read; with `conversation`, only its changes) |
///
/// Every request first catches the change feed up (one indexed change_log read when nothing
/// is new), so a client that got a worker's ack, or a notification, and then reads sees that
/// write; and catches up again before answering, so what the request committed is in the
/// conversation stores and told to subscribers when the client gets the result
/// (docs/adr/0022).
struct RPCDispatcher: ControlRequestHandler {
    let daemon: DaemonContext
    var controlStats: ControlStats?

    func handle(_ request: JSONRPC.Request, on connection: ControlConnection) async -> String {
        do {
            await daemon.feed.catchUp()
            let result = try await call(request, connection: connection)
            await daemon.feed.catchUp()
            return JSONRPC.resultLine(id: request.id, result)
        } catch let error as JSONRPC.ErrorObject {
            return JSONRPC.errorLine(id: request.id, error)
        } catch let error as ConversationService.Failure {
            switch error {
            case .notFound, .ambiguous: return JSONRPC.errorLine(id: request.id, .notFound(error.description))
            case .refused: return JSONRPC.errorLine(id: request.id, .refused(error.description))
            case .invalid: return JSONRPC.errorLine(id: request.id, .invalidParams(error.description))
            }
        } catch let error as KeystoreError {
            return JSONRPC.errorLine(id: request.id, .unavailable("keystore: \(error)"))
        } catch InboxLifecycleError.activationFailed(let inboxId, let errorType) {
            return JSONRPC.errorLine(id: request.id, .unavailable(activationFailure(inboxId: inboxId, errorType: errorType)))
        } catch let error as StoreError {
            // Said plainly, with what to do: "disk full: …", "the database at … is damaged (…); stop sotto, …".
            DaemonLog.warning("\(request.method) failed: \(error)")
            switch error {
            case .corrupt(let code, let message):
                let cause = "\(SQLiteResultCode.name(code)): \(message)"
                return JSONRPC.errorLine(id: request.id, .unavailable(DatabaseDamage.message(group: daemon.group, cause: cause)))
            case .diskFull:
                return JSONRPC.errorLine(id: request.id, .unavailable("\(error); free space on the file system holding \(daemon.group.path)"))
            default:
                return JSONRPC.errorLine(id: request.id, .unavailable("\(error)"))
            }
        } catch {
            DaemonLog.warning("\(request.method) failed: \(type(of: error))")
            return JSONRPC.errorLine(id: request.id, .internalError(String(describing: type(of: error))))
        }
    }

    /// Which identity could not be opened, by clientId, and what to do; else the plain fact.
    private func activationFailure(inboxId: String, errorType: String) -> String {
        let clientId = try? daemon.database.read { conn in try InboxRepository.find(inboxId: inboxId, on: conn)?.clientId }
        if let clientId = clientId ?? nil, let damaged = daemon.damagedIdentities.first(where: { $0.clientId == clientId }) {
            return "the identity of this conversation (clientId \(clientId)) cannot be opened (\(damaged.reason)); restore "
                + "\(daemon.keystore.directory)/\(clientId).identity from a backup and restart sotto"
        }
        return "inbox \(inboxId) could not be opened (\(errorType)); see the daemon's log"
    }

    func connectionClosed(_ connection: ControlConnection) {
        let feed = daemon.feed
        Task { await feed.unsubscribe(connection: ObjectIdentifier(connection)) }
    }

    private func call(_ request: JSONRPC.Request, connection: ControlConnection) async throws -> Any {
        let service = daemon.service
        switch request.method {
        case "status":
            var status = await daemon.status()
            if let controlStats { status["control"] = controlStats.snapshot() }
            return status
        case "listConversations":
            return ["conversations": try await service.listConversations().map(\.rpcObject)]
        case "newConversation":
            let conversation = try await service.newConversation(
                name: try request.optionalString("name"),
                profileName: try request.optionalString("profileName") ?? ProcessInfo.processInfo.userName)
            return ["conversationId": conversation.id, "inboxId": conversation.inboxId, "topic": conversation.topic]
        case "readMessages":
            let limit = Int(try request.optionalInt("limit") ?? 50)
            guard (1...10_000).contains(limit) else { throw JSONRPC.ErrorObject.invalidParams("'limit' must be 1…10000") }
            let messages = try await service.readMessages(try request.string("conversation"), limit: limit)
            let names = try messages.first.map { first in
                try daemon.database.read { conn in try MemberRepository.profileNames(of: first.conversationId, on: conn) }
            } ?? [:]
            return ["messages": messages.map { $0.rpcObject(senderName: names[$0.senderInboxId]) }]
        case "sendMessage":
            let sent = try await service.send(to: try request.string("conversation"), text: try request.string("text"),
                                              replyTo: try request.optionalString("replyTo"))
            return ["messageId": sent.messageId, "recipients": sent.recipients]
        case "markRead":
            try await service.markRead(try request.string("conversation"))
            return [String: Any]()
        case "createInvite":
            let invite = try await daemon.invites.createInvite(for: try request.string("conversation"),
                                                               expiresInMs: try request.optionalInt("expiresInMs"))
            var object: [String: Any] = ["code": invite.code, "inviteId": invite.inviteId]
            if let expiresAtMs = invite.expiresAtMs { object["expiresAtMs"] = expiresAtMs }
            return object
        case "joinConversation":
            let profileName = try request.optionalString("profileName") ?? ProcessInfo.processInfo.userName
            let conversation = try await daemon.invites.join(code: try request.string("code"), profileName: profileName)
            var object: [String: Any] = ["conversationId": conversation.id, "state": conversation.state.rawValue,
                                         "inboxId": conversation.inboxId]
            if let name = conversation.name { object["name"] = name }
            return object
        case "react":
            let sent = try await service.react(in: try request.string("conversation"), to: try request.string("message"),
                                               emoji: try request.string("emoji"),
                                               remove: try request.optionalBool("remove") ?? false)
            return ["messageId": sent.messageId, "recipients": sent.recipients]
        case "explode":
            let result = try await daemon.explode.explode(try request.string("conversation"), at: try request.optionalInt("atMs"))
            return ["conversationId": result.conversationId, "expiresAtMs": result.expiresAtMs, "deleted": result.deleted,
                    "delivered": result.delivered, "undelivered": result.undelivered]
        case "subscribe":
            let since = try request.optionalInt("since")
            if let since, since < 0 { throw JSONRPC.ErrorObject.invalidParams("'since' must be ≥ 0") }
            var conversationId: String?
            if let reference = try request.optionalString("conversation") {
                conversationId = try await service.conversation(reference).id
            }
            let (lastSeq, gap) = await daemon.feed.subscribe(key: ObjectIdentifier(connection), since: since,
                                                             conversationId: conversationId) { line in connection.send(line) }
            var result: [String: Any] = ["lastSeq": lastSeq]
            if let conversationId { result["conversationId"] = conversationId }
            if let gap {
                var object = gap.rpcObject
                object["remedy"] = DatabaseDamage.remedy(group: daemon.group)
                result["gap"] = object
            }
            return result
        default:
            throw JSONRPC.ErrorObject.methodNotFound(request.method)
        }
    }
}
