import ControlProtocol
import Dispatch

/// The intents that make, share, join, change or end a conversation, as a UI asks for them:
/// create, invite, join, send or save a file, mute, leave, remove a member, explode. Each runs on the actions' own
/// queue (the caller never waits for the daemon) and reports its outcome to `then`, on that
/// queue. None is retried: a second `leave` or `explode` after a lost reply would act twice,
/// and a second `createInvite` would make another invite. What a call changes reaches a
/// `LiveConversationList` through the change feed, like a change made by `sotto` commands.
///
/// Confirming a destructive intent (leave, remove, explode) is the UI's job, before it calls
/// one: the library acts when asked. Each intent is its `ClientRequests` call, which the
/// `sotto` commands make too, blocking on a `RequestChannel` (docs/adr/0071).
///
/// ```swift
/// let actions = ConversationActions(socketPath: runtime.controlSocketPath)
/// actions.create(name: "Trip") { result in
///     if case .success(let made) = result { print(made.conversationId) }
/// }
/// actions.invite(conversation: "3fa2") { result in print((try? result.get())?.code ?? "no invite") }
/// ```
public final class ConversationActions: Sendable {
    public typealias Outcome<Value> = Result<Value, ControlClient.Failure>

    private let channel: RequestChannel
    private let queue = DispatchQueue(label: "sotto.conversation-actions")
    private let socketPath: String
    /// Saves stream whole files: a connection each, off `queue`.
    private let saves = DispatchQueue(label: "sotto.attachment-saves")

    public init(socketPath: String) {
        self.socketPath = socketPath
        channel = RequestChannel(socketPath: socketPath)
    }

    /// Closes the connection once the calls already asked for are done.
    public func stop() { queue.async { [channel] in channel.close() } }

    // MARK: Making and sharing

    /// A new conversation with a fresh identity of its own (`sotto new`).
    public func create(name: String?, profileName: String? = nil,
                       then: @escaping @Sendable (Outcome<NewConversationResult>) -> Void) {
        perform(ClientRequests.create(name: name, profileName: profileName), then: then)
    }

    /// An invite code for a conversation this device created (`sotto invite`).
    public func invite(conversation: String, expiresInMs: Int64? = nil, singleUse: Bool = false,
                       then: @escaping @Sendable (Outcome<InviteResult>) -> Void) {
        perform(ClientRequests.invite(conversation: conversation, expiresInMs: expiresInMs, singleUse: singleUse), then: then)
    }

    /// Asks to join with an invite code (`sotto join`): pending until the creator accepts.
    public func join(code: String, profileName: String? = nil, then: @escaping @Sendable (Outcome<JoinResult>) -> Void) {
        perform(ClientRequests.join(code: code, profileName: profileName), then: then)
    }

    /// A file the daemon reads at `path` (absolute), stores encrypted and sends (`/file` in
    /// `sotto chat`, docs/adr/0074).
    public func sendAttachment(conversation: String, path: String,
                               then: @escaping @Sendable (Outcome<SentAttachment>) -> Void) {
        perform(ClientRequests.sendAttachment(conversation: conversation, path: path), then: then)
    }

    /// Saves the file a message carries into `destination` (absolute: a directory, or a new
    /// file's path), as `sotto save` does (`AttachmentSaving`, docs/adr/0077), waiting for the
    /// daemon to fetch it first when it is not here yet. On a queue of its own, so a long save
    /// never holds up the other intents; `progress` gets (bytes written, size) as they come.
    public func save(message: String, to destination: String,
                     progress: @escaping @Sendable (_ done: Int64, _ size: Int64) -> Void = { _, _ in },
                     then: @escaping @Sendable (Result<AttachmentSaving.Saved, any Error>) -> Void) {
        saves.async { [socketPath] in
            then(Result { try AttachmentSaving.save(message: message, to: destination, socketPath: socketPath, progress: progress) })
        }
    }

    /// Mutes (or unmutes) a conversation on this device: no desktop notifications for it.
    public func setMuted(_ muted: Bool, conversation: String,
                         then: @escaping @Sendable (Outcome<MuteConversationResult>) -> Void) {
        perform(ClientRequests.setMuted(muted, conversation: conversation), then: then)
    }

    // MARK: Ending (destructive: confirm first)

    /// Leaves a conversation someone else created: every member is told, then it is deleted here.
    public func leave(conversation: String, then: @escaping @Sendable (Outcome<LeaveResult>) -> Void) {
        perform(ClientRequests.leave(conversation: conversation), then: then)
    }

    /// Removes a member (its profile name, or its inbox id or a unique prefix) from a
    /// conversation this device created: that member's device deletes it.
    public func remove(member: String, conversation: String, then: @escaping @Sendable (Outcome<RemovedMember>) -> Void) {
        perform(ClientRequests.remove(member: member, conversation: conversation), then: then)
    }

    /// Explodes a conversation this device created: now (`atMs` nil), at `atMs`, or calls a
    /// scheduled explosion off (`cancel`).
    public func explode(conversation: String, atMs: Int64? = nil, cancel: Bool = false,
                        then: @escaping @Sendable (Outcome<ExplodeResult>) -> Void) {
        perform(ClientRequests.explode(conversation: conversation, atMs: atMs, cancel: cancel), then: then)
    }

    // MARK: Calling

    /// Makes any request of `ClientRequests` on the actions' queue (the named intents above
    /// are this with their request) and reports its outcome to `then`, on that queue.
    public func perform<P>(_ request: ClientRequest<P>, then: @escaping @Sendable (Outcome<P.Result>) -> Void) {
        queue.async { [channel] in
            let outcome: Outcome<P.Result>
            do throws(ControlClient.Failure) {
                outcome = .success(try channel.call(request))
            } catch let failure {
                outcome = .failure(failure)
            }
            then(outcome)
        }
    }
}
