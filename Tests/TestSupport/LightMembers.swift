import Foundation
import SottoCrypto
import SottoWire

/// Many lightweight members of one conversation: each has a real identity, joins with a real
/// signed `sotto/join_request:1.0` sealed to the creator, and opens every push it gets with the
/// real crypto (PushOpener's steps, bodies by reference included), keeping its own roster by
/// docs/protocol/roster.md §5 (a second, in-memory implementation of the ordering rule) and
/// the texts it received. Every push is acked as a worker would.
///
/// Two transports: one in-process Unix socket for them all (`init(count:socketPath:)`, a
/// `unix:` endpoint), or none of their own (`init(count:endpoint:)`, e.g. a relay URL): then
/// whoever fetches their pushes (the relay tests' `LightMailboxes`) hands each to `deliver`.
///
/// ```swift
/// let light = try LightMembers(count: 997, socketPath: dir + "/light.sock")
/// let requests = try light.joinRequests(invite: InviteCode.parse(code))   // one payload each, for the creator
/// light.member(light.inboxIds[0]).version   // what it applied
/// light.stop()
/// let relayed = LightMembers(count: 997, endpoint: server.url)   // pushes come through deliver(_:body:)
/// ```
public final class LightMembers: @unchecked Sendable {
    /// What one member knows.
    public struct Member: Sendable {
        public var version: Int64 = 0
        public var roster: Set<String> = []
        public var departed: Set<String> = []
        public var pending: [Int64: RosterDelta] = [:]
        /// Message id → text, of every text stored (a repeat is acked as a duplicate, not stored).
        public var texts: [String: String] = [:]
        public var duplicates = 0
        /// Every message id this member opened.
        public var opened: Set<String> = []
    }

    /// The in-process push socket, nil when the pushes come through `deliver`.
    public let socketPath: String?
    /// What the members put in their join requests: where their pushes are sent.
    public let endpoint: String
    public let identities: [Identity]
    public var inboxIds: [String] { identities.map(\.inboxId) }
    private let byClientId: [String: Identity]
    private let state = NSLock()
    private var members: [String: Member] = [:]
    private var creatorInboxId: String?
    /// The conversation's topic, for pushes that leave it out (through a relay, PROTOCOL §2 1.1).
    private var topic: String?
    private var refusals: [String] = []
    private var busyNs: UInt64 = 0
    private var decoded: [String: MessageContent] = [:]
    private var served = 0
    /// The push socket's listening descriptor, -1 without one.
    private let listener: Int32
    private let stopped = NSLock()
    private var isStopped = false

    /// Members reached at `unix:<socketPath>`, served by a listener of their own.
    public convenience init(count: Int, socketPath: String) throws {
        unlink(socketPath)
        let listener = UnixSocket.bind(socketPath, type: Int32(SOCK_STREAM.rawValue))
        guard listener >= 0, listen(listener, 512) == 0 else {
            throw PushClient.Failure(message: "light members cannot listen on \(socketPath): errno \(errno)")
        }
        self.init(count: count, endpoint: "unix:" + socketPath, socketPath: socketPath, listener: listener)
        let thread = Thread { [self] in acceptLoop() }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Members reached at `endpoint` by a transport outside this class, which calls `deliver`.
    public convenience init(count: Int, endpoint: String) {
        self.init(count: count, endpoint: endpoint, socketPath: nil, listener: -1)
    }

    private init(count: Int, endpoint: String, socketPath: String?, listener: Int32) {
        self.endpoint = endpoint
        self.socketPath = socketPath
        self.listener = listener
        identities = (0..<count).map { _ in Identity.generate() }
        byClientId = Dictionary(uniqueKeysWithValues: identities.map { ($0.clientId, $0) })
        for identity in identities { members[identity.inboxId] = Member() }
    }

    deinit { stop() }

    public func stop() {
        stopped.lock()
        defer { stopped.unlock() }
        guard !isStopped, let socketPath else { return }
        isStopped = true
        shutdown(listener, Int32(SHUT_RDWR))
        close(listener)
        unlink(socketPath)
    }

    /// A signed join request from each member, sealed to the invite's creator (PROTOCOL §5, §6).
    /// `topicInClear` false: the push leaves the topic out, as a sender does through a relay.
    public func joinRequests(invite: InviteCode, profileName: (Int) -> String = { "Light \($0)" },
                             topicInClear: Bool = true) throws -> [[UInt8]] {
        let creatorKey = try PublicKey(hex: invite.creatorPublicKey)
        state.lock()
        creatorInboxId = invite.creatorInboxId
        topic = invite.topic
        state.unlock()
        return identities.enumerated().map { index, identity in
            let content = JSONWriter.bytes([
                "inviteId": .string(invite.inviteId), "secret": .string(invite.secret),
                "profileName": .string(profileName(index)), "endpoint": .string(endpoint),
                "clientId": .string(identity.clientId),
            ])
            let signed = SignedMessage.sign(id: Hex.encode(SecureRandom.bytes(16)), conversationId: invite.conversationId,
                                            sentAtMs: WallClock.nowMs(), contentType: ContentType.joinRequest,
                                            content: content, fallback: nil, signer: identity.privateKey)
            let envelope = Envelope.seal(signed.encode(), recipient: creatorKey, clientId: invite.creatorClientId,
                                         topic: invite.topic)
            return PushPayload(clientId: invite.creatorClientId, topic: topicInClear ? invite.topic : nil,
                               envelope: envelope).encode()
        }
    }

    public func member(_ inboxId: String) -> Member {
        state.lock()
        defer { state.unlock() }
        return members[inboxId] ?? Member()
    }

    public func all() -> [String: Member] {
        state.lock()
        defer { state.unlock() }
        return members
    }

    /// Pushes served and the time spent opening them, for a failing test's message.
    public var load: String {
        state.lock()
        defer { state.unlock() }
        return "\(served) pushes opened in \(busyNs / 1_000_000) ms"
    }

    /// What was refused, for a failing test's message.
    public var refused: [String] {
        state.lock()
        defer { state.unlock() }
        return refusals
    }

    // MARK: - Receiving

    private func acceptLoop() {
        while true {
            let fd = UnixSocket.accept(listener, nonBlocking: false)
            if fd < 0 {
                if errno == EINTR || errno == ECONNABORTED { continue }
                return
            }
            DispatchQueue.global().async { [self] in
                serve(fd)
                close(fd)
            }
        }
    }

    private func serve(_ fd: Int32) {
        guard let (line, rest) = readLine(fd), let payload = try? PushPayload.decode(line) else {
            _ = UnixSocket.sendAll(fd, PushAck.error(PushError(.malformedPayload, "not a push")).encodeLine())
            return
        }
        var body: [UInt8]?
        if let hint = payload.body, rest.count <= Int(hint.length) {
            body = readExactly(fd, Int(hint.length) - rest.count).map { rest + $0 }
        }
        _ = UnixSocket.sendAll(fd, deliver(payload, body: body).encodeLine())
    }

    /// One push (PROTOCOL §2, the bytes before its LF) and the body it names, if any, as a
    /// transport received them: opened, applied to its member, and acked as a worker would.
    public func deliver(_ push: [UInt8], body: [UInt8]?) -> PushAck {
        do throws(PushError) {
            return deliver(try PushPayload.decode(push), body: body)
        } catch {
            return refuse(error)
        }
    }

    private func deliver(_ payload: PushPayload, body: [UInt8]?) -> PushAck {
        let t0 = MonotonicClock.nowNs()
        defer {
            state.lock()
            busyNs += MonotonicClock.nowNs() - t0
            served += 1
            state.unlock()
        }
        do throws(PushError) {
            let (recipient, message, content) = try open(payload, body: body)
            return .ok(messageId: message.id, duplicate: receive(message, content, recipient: recipient))
        } catch {
            return refuse(error)
        }
    }

    private func refuse(_ error: PushError) -> PushAck {
        state.lock()
        refusals.append("\(error.code.rawValue): \(error.detail)")
        state.unlock()
        return .error(error)
    }

    /// PushOpener's steps with the real crypto for every push (envelope, signature, body
    /// hash and AEAD), except that the content's decoding (the same roster body reaches 997
    /// members) is done once per distinct content: a debug build spends ~0.2 s on one
    /// 1,000-member roster, which the daemon delivers to the members one after another.
    private func open(_ payload: PushPayload, body: [UInt8]?) throws(PushError) -> (String, SignedMessage, MessageContent) {
        guard let identity = byClientId[payload.clientId] else { throw PushError(.unknownClient, "no identity for this clientId") }
        state.lock()
        let conversationTopic = topic
        state.unlock()
        guard let topic = payload.topic ?? conversationTopic else { throw PushError(.unknownConversation, "no topic") }
        let plaintext = try Envelope.open(payload.envelope, recipientKey: identity.privateKey, clientId: payload.clientId,
                                          topic: topic)
        let message = try SignedMessage.parse(plaintext)
        try message.verify()
        guard message.conversationId == ProtocolIds.conversationId(fromTopic: topic) else {
            throw PushError(.unknownConversation, "message conversation does not match the topic")
        }
        guard (message.contentType == ContentType.body) == (payload.body != nil) else {
            throw PushError(.bodyMismatch, "the push and its message disagree on a body")
        }
        var contentType = message.contentType, bytes = message.contentBytes, fallback = message.fallback
        if let hint = payload.body {
            guard let body else { throw PushError(.bodyMissing, "the push names a body and none came") }
            let reference = try BodyReference.decode(message.contentBytes)
            (contentType, bytes, fallback) = (reference.contentType, try reference.open(body, hint: hint), reference.fallback)
        }
        let key = Hex.encode(SHA256.hash(Array(contentType.utf8) + [0] + bytes))
        state.lock()
        let known = decoded[key]
        state.unlock()
        if let known { return (identity.inboxId, message, known) }
        let content = try MessageContent.decode(contentType: contentType, content: bytes, fallback: fallback)
        state.lock()
        decoded[key] = content
        state.unlock()
        return (identity.inboxId, message, content)
    }

    /// Applies one opened push to its member; returns true when it was a duplicate.
    private func receive(_ message: SignedMessage, _ content: MessageContent, recipient inboxId: String) -> Bool {
        state.lock()
        defer { state.unlock() }
        var member = members[inboxId] ?? Member()
        defer { members[inboxId] = member }
        guard member.opened.insert(message.id).inserted else {
            member.duplicates += 1
            return true
        }
        let fromCreator = message.senderInboxId == creatorInboxId
        switch content {
        case .text(let text):
            member.texts[message.id] = text
        case .membership(_, let list, let version) where fromCreator:
            if let version, version <= member.version { break }
            member.roster = Set(list.map(\.inboxId)).subtracting(member.departed)
            if let version {
                member.version = version
                member.pending = member.pending.filter { $0.key >= version }
                Self.drain(&member)
            }
        case .rosterDelta(let delta) where fromCreator:
            if delta.base == member.version {
                Self.apply(delta, to: &member)
                Self.drain(&member)
            } else if delta.base > member.version, member.pending[delta.base] == nil {
                member.pending[delta.base] = delta
            }
        case .leave:
            member.roster.remove(message.senderInboxId)
            member.departed.insert(message.senderInboxId)
        case .remove(let removed) where fromCreator:
            member.roster.remove(removed)
            member.departed.insert(removed)
        default:
            break
        }
        return false
    }

    private static func apply(_ delta: RosterDelta, to member: inout Member) {
        for inboxId in delta.removed {
            member.roster.remove(inboxId)
            member.departed.insert(inboxId)
        }
        member.roster.formUnion(delta.added.map(\.inboxId).filter { !member.departed.contains($0) })
        member.version = delta.version
    }

    private static func drain(_ member: inout Member) {
        while let next = member.pending.removeValue(forKey: member.version) {
            apply(next, to: &member)
        }
        member.pending = member.pending.filter { $0.key >= member.version }
    }

    /// The payload up to its LF, and whatever of the body came with it.
    private func readLine(_ fd: Int32) -> ([UInt8], [UInt8])? {
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65_536)
        while out.count <= PushPayload.maxBytes + 1 {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            out += chunk[0..<n]
            if let lf = out.firstIndex(of: 0x0a) { return (Array(out[..<lf]), Array(out[(lf + 1)...])) }
        }
        return nil
    }

    private func readExactly(_ fd: Int32, _ count: Int) -> [UInt8]? {
        var out = [UInt8](repeating: 0, count: count)
        var got = 0
        while got < count {
            let n = out.withUnsafeMutableBytes { read(fd, $0.baseAddress! + got, count - got) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return nil }
            got += n
        }
        return out
    }
}
