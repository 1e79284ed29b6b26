import ControlProtocol
import ControlServer
import DaemonCore
import DaemonEngine
import DaemonLogging
import DaemonStore
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// The control socket's methods (ControlProtocol: `ControlMethodName`, each method's params
/// and result type), each a thin mapping onto the daemon's services. Errors become JSON-RPC
/// errors with their named codes; nothing here can stop the daemon. The contract itself is
/// published as docs/control-api.openrpc.json.
///
/// ```swift
/// let server = try ControlServer.bind(path: runtime.controlSocketPath, handler: RPCDispatcher(daemon: context.api))
/// ```
struct RPCDispatcher: ControlRequestHandler {
    /// What a request may reach of the daemon: its services and feed, not every part.
    let daemon: DaemonAPI
    var controlStats: ControlStats?

    // MARK: Requests

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
            case .notFound, .ambiguous, .missing: return JSONRPC.errorLine(id: request.id, .notFound(error.description))
            case .refused: return JSONRPC.errorLine(id: request.id, .refused(error.description))
            case .invalid: return JSONRPC.errorLine(id: request.id, .invalidParams(error.description))
            }
        } catch let error as ExplodeService.DeletionPending {
            DaemonLog.warning("\(request.method): \(error)")
            var advice = ""
            if let cause = error.cause as? StoreError, case .diskFull = cause { advice = freeSpaceAdvice }
            return JSONRPC.errorLine(id: request.id, .unavailable(error.description + advice))
        } catch let error as KeystoreError {
            return JSONRPC.errorLine(id: request.id, .unavailable("keystore: \(error)"))
        } catch InboxLRUError.activationFailed(let inboxId, let errorType) {
            return JSONRPC.errorLine(id: request.id, .unavailable(activationFailure(inboxId: inboxId, errorType: errorType)))
        } catch let error as StoreError {
            // Said plainly, with what to do: "disk full: …", "the database at … is damaged (…); stop sotto, …".
            DaemonLog.warning("\(request.method) failed: \(error)")
            switch error {
            case .corrupt(let code, let message, _):
                let cause = "\(SQLiteResultCode.name(code)): \(message)"
                return JSONRPC.errorLine(id: request.id, .unavailable(DatabaseDamage.message(group: daemon.group, cause: cause)))
            case .diskFull:
                return JSONRPC.errorLine(id: request.id, .unavailable("\(error)\(freeSpaceAdvice)"))
            default:
                return JSONRPC.errorLine(id: request.id, .unavailable("\(error)"))
            }
        } catch {
            let name = Self.caseName(error)
            DaemonLog.warning("\(request.method) failed: \(name)")
            return JSONRPC.errorLine(id: request.id, .internalError(name))
        }
    }

    /// An unexpected error's type and, for an enum, its case ("InboxWriteError.clientIdInUse"):
    /// enough to tell failures apart in a report, without associated values, which could hold
    /// user data.
    static func caseName(_ error: any Error) -> String {
        let type = String(describing: Swift.type(of: error))
        let mirror = Mirror(reflecting: error)
        guard mirror.displayStyle == .enum else { return type }
        return type + "." + (mirror.children.first?.label ?? String(describing: error))
    }

    /// What a full disk's error adds: where to free space.
    private var freeSpaceAdvice: String { "; free space on the file system holding \(daemon.group.path)" }

    func connectionClosed(_ connection: ControlConnection) {
        let feed = daemon.feed
        let open = daemon.openConversations
        let client = connection.serial
        Task { await feed.unsubscribe(connection: ObjectIdentifier(connection)) }
        Task { await open.close(client: client) }
    }

    /// Decodes the params as the method's type, runs it, encodes its result type: a method
    /// cannot answer with anything but what ControlProtocol says it returns.
    private func answer<P: ControlRequest>(_ request: JSONRPC.Request, as _: P.Type,
                                           _ body: (P) async throws -> P.Result) async throws -> JSONValue {
        try await body(try request.decodeParams(P.self)).json
    }

    private func call(_ request: JSONRPC.Request, connection: ControlConnection) async throws -> JSONValue {
        guard let method = ControlMethodName(rawValue: request.method) else {
            throw JSONRPC.ErrorObject.methodNotFound(request.method)
        }
        let service = daemon.service
        switch method {
        case .status:
            return try await answer(request, as: StatusParams.self) { _ in
                var status = StatusResult(
                    await daemon.status(), version: SottoVersion.string,
                    masterKey: MasterKeyStartup.statusText(daemon.masterKeySource, keystore: daemon.keystoreDirectory))
                status.control = controlStats.map { ControlFigures($0.current) }
                return status
            }
        case .listConversations:
            return try await answer(request, as: ListConversationsParams.self) { _ in
                ConversationList(conversations: try await service.listConversations().map(ConversationInfo.init),
                                 refusedJoins: try await service.refusedJoins().map(RefusedJoinInfo.init))
            }
        case .newConversation:
            return try await answer(request, as: NewConversationParams.self) { params in
                let conversation = try await service.newConversation(
                    name: params.name, profileName: params.profileName ?? ProcessInfo.processInfo.userName)
                return NewConversationResult(conversationId: conversation.id, inboxId: conversation.inboxId, topic: conversation.topic)
            }
        case .readMessages:
            return try await answer(request, as: ReadMessagesParams.self) { params in
                let page = try await service.readMessages(params.conversation, limit: params.limit, before: params.before)
                return MessageList(messages: page.messages.map {
                    MessageInfo($0, senderName: page.senderNames[$0.senderInboxId], deliveries: page.deliveries[$0.id])
                })
            }
        case .sendMessage:
            return try await answer(request, as: SendMessageParams.self) { params in
                let sent = try await service.send(to: params.conversation, text: params.text, replyTo: params.replyTo)
                return SentMessage(messageId: sent.messageId, recipients: sent.recipients)
            }
        case .sendAttachment:
            return try await answer(request, as: SendAttachmentParams.self) { params in
                let sent = try await service.sendAttachment(to: params.conversation, path: params.path, name: params.name,
                                                            caption: params.caption)
                return SentAttachment(messageId: sent.messageId, recipients: sent.recipients, name: sent.reference.name,
                                      size: Int64(sent.reference.size), storedLength: Int64(sent.reference.length),
                                      mediaType: sent.reference.mediaType)
            }
        case .saveAttachment:
            return try await answer(request, as: SaveAttachmentParams.self) { params in
                try await AttachmentSaveStream.save(params, service: service, connection: connection)
            }
        case .markRead:
            return try await answer(request, as: MarkReadParams.self) { params in
                try await service.markRead(params.conversation)
                return EmptyObject()
            }
        case .muteConversation:
            return try await answer(request, as: MuteConversationParams.self) { params in
                let conversationId = try await service.setMuted(params.conversation, params.muted)
                return MuteConversationResult(conversationId: conversationId, muted: params.muted)
            }
        case .receipts:
            return try await answer(request, as: ReceiptsParams.self) { params in
                let (conversationId, enabled) = try await service.receipts(params.conversation, set: params.enabled)
                return ReceiptsResult(conversationId: conversationId, enabled: enabled)
            }
        case .createInvite:
            return try await answer(request, as: CreateInviteParams.self) { params in
                let invite = try await daemon.invites.createInvite(for: params.conversation, expiresInMs: params.expiresInMs,
                                                                   singleUse: params.singleUse)
                return InviteResult(code: invite.code, inviteId: invite.inviteId, expiresAtMs: invite.expiresAtMs)
            }
        case .notificationPreview:
            return try await answer(request, as: NotificationPreviewParams.self) { params in
                NotificationPreviewResult(
                    try await service.notificationPreview(conversation: params.conversation,
                                                          set: params.preview.map { $0 == "default" ? nil : NotificationPreview(rawValue: $0) }))
            }
        case .revokeInvite:
            return try await answer(request, as: RevokeInviteParams.self) { params in
                let revoked = try await daemon.invites.revoke(in: params.conversation, invite: params.invite)
                return RevokedInvite(inviteId: revoked.inviteId, revokedNow: revoked.revokedNow)
            }
        case .joinConversation:
            return try await answer(request, as: JoinConversationParams.self) { params in
                let conversation = try await daemon.invites.join(
                    code: params.code, profileName: params.profileName ?? ProcessInfo.processInfo.userName)
                return JoinResult(conversationId: conversation.id, state: conversation.state.rawValue,
                                  inboxId: conversation.inboxId, name: conversation.name)
            }
        case .react:
            return try await answer(request, as: ReactParams.self) { params in
                let sent = try await service.react(in: params.conversation, to: params.message, emoji: params.emoji,
                                                   remove: params.remove)
                return SentMessage(messageId: sent.messageId, recipients: sent.recipients)
            }
        case .explode:
            return try await answer(request, as: ExplodeParams.self) { params in
                let result = try await daemon.explode.explode(params.conversation, at: params.atMs, cancel: params.cancel)
                return ExplodeResult(conversationId: result.conversationId, expiresAtMs: result.expiresAtMs,
                                     sequence: result.sequence, deleted: result.deleted, delivered: result.delivered, undelivered: result.undelivered)
            }
        case .leave:
            return try await answer(request, as: LeaveParams.self) { params in
                let result = try await daemon.leave.leave(params.conversation)
                return LeaveResult(conversationId: result.conversationId, members: result.members)
            }
        case .dismissRefusal:
            return try await answer(request, as: DismissRefusalParams.self) { params in
                DismissRefusalResult(conversationId: try await service.dismissRefusal(params.conversation))
            }
        case .removeMember:
            return try await answer(request, as: RemoveMemberParams.self) { params in
                let result = try await daemon.removals.remove(params.member, from: params.conversation)
                return RemovedMember(conversationId: result.conversationId, inboxId: result.inboxId, members: result.members)
            }
        case .rename:
            return try await answer(request, as: RenameParams.self) { params in
                let result = try await daemon.rosterRequests.rename(in: params.conversation, to: params.name)
                return RenameResult(conversationId: result.conversationId, profileName: result.profileName, members: result.members)
            }
        case .subscribe:
            return try await answer(request, as: SubscribeParams.self) { params in
                var conversation: DBConversation?
                if let reference = params.conversation {
                    conversation = try await daemon.service.conversation(reference)
                }
                let conversationId = conversation?.id
                let (lastSeq, gap, changes) = await daemon.feed.subscribe(key: ObjectIdentifier(connection), since: params.since,
                                                                          conversationId: conversationId)
                SubscriptionLines.follow(changes) { line in connection.send(line) }
                // One conversation open in this client keeps its inbox awake until the client
                // subscribes anew or goes; a client that went while this ran is closed here.
                await daemon.openConversations.open(conversation?.inboxId, client: connection.serial)
                if connection.isClosed { await daemon.openConversations.close(client: connection.serial) }
                return SubscribeResult(lastSeq: lastSeq, gap: gap.map(ChangeGap.init), conversationId: conversationId)
            }
        }
    }

    // MARK: Error messages

    /// Which identity could not be opened, by clientId, and what to do; else the plain fact.
    private func activationFailure(inboxId: String, errorType: String) -> String {
        if let clientId = daemon.service.clientId(ofInbox: inboxId), let damaged = daemon.damagedIdentities.first(where: { $0.clientId == clientId }) {
            return "the identity of this conversation (clientId \(clientId)) cannot be opened (\(damaged.reason)); restore "
                + "\(daemon.keystoreDirectory)/\(clientId).identity from a backup and restart sotto"
        }
        return "inbox \(inboxId) could not be opened (\(errorType)); see the daemon's log"
    }
}
