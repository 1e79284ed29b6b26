import CNats
import CNatsNUID
import Glibc
import Synchronization

/// One connection to a relay (a NATS server with JetStream) through the official C client,
/// which reconnects by itself, forever, after the first connection succeeded. Connection
/// events (lost, back) reach `onEvent` on the client's own thread.
///
/// ```swift
/// let relay = try RelayConnection.connect(config) { event in log(event) }   // no name, a random inbox prefix
/// try relay.ensureStream()
/// let ack = try relay.publish(payload, to: Mailbox(clientId: id), messageId: messageId)
/// relay.close()
/// ```
public final class RelayConnection: @unchecked Sendable {
    // @unchecked: the C client's natsConnection and jsCtx may be used from any thread (nats.c
    // locks internally); they are created in `connect` and destroyed once, by `close`, which
    // the `closed` flag guards.

    /// What the client reports about the connection.
    public enum Event: Sendable, Equatable {
        case disconnected
        case reconnected
    }

    /// Tuning, chiefly for tests (a short connect timeout finds a dead relay quickly).
    public struct Options: Sendable {
        /// The client name the relay shows in its monitoring. nil (Sotto's own connections)
        /// sends none: a name the same for two connections of one device links them
        /// (docs/adr/0044). Tests name theirs to tell them apart.
        public var name: String?
        public var connectTimeoutMs: Int64 = 2_000
        public var reconnectWaitMs: Int64 = 500
        /// Up to this much more before each reconnect, drawn at random per attempt and
        /// connection. One identity's connections (docs/adr/0044) spread over it after a
        /// relay restart instead of coming back together, within 100 ms (nats.c's default),
        /// which tied them to one device (issue #19 goal 4).
        public var reconnectJitterMs: Int64 = Self.identityReconnectJitterMs
        public static let identityReconnectJitterMs: Int64 = 5_000
        /// How long a JetStream API call (publish ack, consumer create, ack sync) may take.
        public var apiWaitMs: Int64 = 5_000
        /// A connection that holds one identity's mailbox (sotto-relayd keeps one per identity,
        /// docs/adr/0044): each write goes out at once, so the client starts no flusher thread;
        /// each request has an inbox of its own, so no reply-delivery thread; and its socket
        /// buffers are 8 KiB instead of 32 KiB (measured at 1,000 identities).
        public var lean = false
        public init() {}
    }

    let connection: OpaquePointer
    let jetStream: OpaquePointer
    let apiWaitMs: Int64
    private let events: EventBox
    /// The user this connection logs in as (and again at each reconnect) with a signing key.
    private let login: UserLogin?
    private let closed = Mutex(false)

    private init(connection: OpaquePointer, jetStream: OpaquePointer, apiWaitMs: Int64, events: EventBox, login: UserLogin?) {
        self.connection = connection
        self.jetStream = jetStream
        self.apiWaitMs = apiWaitMs
        self.events = events
        self.login = login
    }

    /// The public nkey of the user this connection logged in as (nil without a signing key).
    public var userPublicKey: String? { login?.user.publicKey }

    deinit { close() }

    /// Connects once (a relay that is down throws `.call`; the caller retries with its own
    /// backoff). Credentials files are checked again here: they may have changed since start.
    /// With a signing key (docs/adr/0051) it logs in as `user`, an identity's own nkey, with a
    /// JWT minted for it now; without `user`, as a fresh nkey used by this connection only.
    public static func connect(_ config: RelayConfiguration, options: Options = Options(), user: Nkey? = nil,
                               onEvent: @escaping @Sendable (Event) -> Void = { _ in }) throws(RelayError) -> RelayConnection {
        guard inboxNamesArePrivate else {
            throw .call(operation: "connect", status: "this build's NATS client names inboxes with a prefix shared by "
                        + "all its connections (CNatsNUID is not in effect); refusing to link identities", code: 0)
        }
        var opts: OpaquePointer?
        try NatsCall.check(natsOptions_Create(&opts), "options")
        guard let opts else { throw .call(operation: "options", status: "no memory", code: 0) }
        defer { natsOptions_Destroy(opts) }

        // The C client calls the handlers on its own thread, also after `close()` returned (the
        // disconnect of a close is queued): so it holds a reference of its own, released by the
        // closed handler, the last one it calls. Held unretained, a test process crashed on it.
        let events = EventBox(onEvent)
        let closure = Unmanaged.passRetained(events).toOpaque()
        var clientHoldsEvents = false
        defer { if !clientHoldsEvents { Unmanaged<EventBox>.fromOpaque(closure).release() } }
        try NatsCall.check(natsOptions_SetURL(opts, config.url.clientURL), "relay URL")
        if let name = options.name { try NatsCall.check(natsOptions_SetName(opts, name), "client name") }
        // The client's default `_INBOX.` is the same for every connection; a random prefix
        // per connection says nothing the relay could compare (docs/adr/0044).
        var login: UserLogin?
        switch config.credentials {
        case .signingKey(let key):
            // Reply subjects under the user's own key: the only ones its permissions let it
            // subscribe to, and as private to one identity as the user itself.
            let user = user ?? Nkey.generate(.user)
            login = UserLogin(user: user, jwt: key.userJWT(for: user))
            try NatsCall.check(natsOptions_SetCustomInboxPrefix(opts, InboxPrefix.ofUser(user.publicKey)), "inbox prefix")
        case .credsFile(let path):
            // Read and checked again here (it may have changed since start), and signed by
            // `UserLogin` as a signing key's user is, not by the C client's own file handler.
            let (jwt, user) = try CredsFile.load(path: path)
            login = UserLogin(user: user, jwt: jwt)
            try NatsCall.check(natsOptions_SetCustomInboxPrefix(opts, InboxPrefix.random()), "inbox prefix")
        case .none, .userPassword:
            try NatsCall.check(natsOptions_SetCustomInboxPrefix(opts, InboxPrefix.random()), "inbox prefix")
        }
        if config.url.isTLS { try secure(opts, config) }
        if case .userPassword(let user, let password) = config.credentials {
            try NatsCall.check(natsOptions_SetUserInfo(opts, user, password), "user and password")
        }
        if let login {
            // The login outlives the options: the connection holds it (reconnects sign again).
            try NatsCall.check(natsOptions_SetUserCredentialsCallbacks(opts, { jwt, _, closure in
                guard let jwt, let closure else { return NATS_ERR }
                jwt.pointee = strdup(Unmanaged<UserLogin>.fromOpaque(closure).takeUnretainedValue().jwt)
                return NATS_OK
            }, Unmanaged.passUnretained(login).toOpaque(), { failure, signature, length, nonce, closure in
                guard let signature, let length, let nonce, let closure else { return NATS_ERR }
                let login = Unmanaged<UserLogin>.fromOpaque(closure).takeUnretainedValue()
                guard let signed = login.signature(of: nonce) else {
                    failure?.pointee = strdup(UserLogin.unsendableSignature)
                    return NATS_ERR
                }
                guard let buffer = malloc(signed.count)?.assumingMemoryBound(to: UInt8.self) else { return NATS_NO_MEMORY }
                buffer.initialize(from: signed, count: signed.count)
                signature.pointee = buffer
                length.pointee = Int32(signed.count)
                return NATS_OK
            }, Unmanaged.passUnretained(login).toOpaque()), "user credentials")
        }
        try NatsCall.check(natsOptions_SetTimeout(opts, options.connectTimeoutMs), "connect timeout")
        if options.lean {
            try NatsCall.check(natsOptions_SetSendAsap(opts, true), "send at once")
            try NatsCall.check(natsOptions_SetIOBufSize(opts, 8_192), "buffer size")
            // A request gets an inbox of its own instead of the shared reply subscription,
            // whose message delivery is one more thread per connection.
            try NatsCall.check(natsOptions_UseOldRequestStyle(opts, true), "request style")
        }
        // One shared delivery thread pool: by default every subscription with a callback (one
        // mailbox watch per identity) gets its own thread; 1,000 identities made 1,007 threads.
        try NatsCall.check(natsOptions_UseGlobalMessageDelivery(opts, true), "global message delivery")
        try NatsCall.check(natsOptions_SetMaxReconnect(opts, -1), "reconnect")  // forever, once connected
        try NatsCall.check(natsOptions_SetReconnectWait(opts, options.reconnectWaitMs), "reconnect wait")
        try NatsCall.check(natsOptions_SetReconnectJitter(opts, options.reconnectJitterMs, options.reconnectJitterMs), "reconnect jitter")
        try NatsCall.check(natsOptions_SetDisconnectedCB(opts, { _, closure in
            guard let closure else { return }
            Unmanaged<EventBox>.fromOpaque(closure).takeUnretainedValue().handler(.disconnected)
        }, closure), "disconnect handler")
        try NatsCall.check(natsOptions_SetReconnectedCB(opts, { _, closure in
            guard let closure else { return }
            Unmanaged<EventBox>.fromOpaque(closure).takeUnretainedValue().handler(.reconnected)
        }, closure), "reconnect handler")
        try NatsCall.check(natsOptions_SetClosedCB(opts, { _, closure in
            guard let closure else { return }
            Unmanaged<EventBox>.fromOpaque(closure).release()
        }, closure), "closed handler")

        var nc: OpaquePointer?
        var connected = natsConnection_Connect(&nc, opts)
        // A login refused before it was sent (`UserLogin.signature(of:)`) is tried again on a new
        // connection, whose nonce is new: each try fails with probability 1/256.
        var tries = 1
        while connected != NATS_OK, tries < UserLogin.connectTries, login?.takeUnsentSignature() == true {
            tries += 1
            connected = natsConnection_Connect(&nc, opts)
        }
        if connected == NATS_SSL_ERROR {
            throw NatsCall.error(connected, "TLS handshake with \(config.url) (its certificate is not trusted, or does not "
                                 + "name \(config.url.host); a private CA goes in \(RelayConfiguration.caVariable))")
        }
        try NatsCall.check(connected, "connect to \(config.url)")
        guard let nc else { throw .call(operation: "connect", status: "no connection", code: 0) }
        // Connected: from here on closing it (even the Destroy below) ends with the closed handler.
        // A connect that failed never calls a handler; the defer releases the reference.
        clientHoldsEvents = true
        var jsOpts = jsOptions()
        jsOptions_Init(&jsOpts)
        jsOpts.Wait = options.apiWaitMs
        var js: OpaquePointer?
        let status = natsConnection_JetStream(&js, nc, &jsOpts)
        guard status == NATS_OK, let js else {
            natsConnection_Destroy(nc)
            throw NatsCall.error(status, "JetStream context")
        }
        return RelayConnection(connection: nc, jetStream: js, apiWaitMs: options.apiWaitMs, events: events, login: login)
    }

    /// TLS for a `tls://` relay: its certificate must chain to the system's CAs or to one in
    /// the configured CA file (added to them). The C client also checks that it names the URL's
    /// host (nats.c 3.4 does so by itself: "IP address mismatch" in the refusal).
    private static func secure(_ opts: OpaquePointer, _ config: RelayConfiguration) throws(RelayError) {
        try NatsCall.check(natsOptions_SetSecure(opts, true), "TLS")
        if let caFile = config.caFile {
            try CAFile.check(path: caFile)  // it may have changed since start
            let loaded = natsOptions_LoadCATrustedCertificates(opts, caFile)
            guard loaded == NATS_OK else {
                throw .malformedCA("\(caFile): OpenSSL cannot load it (\(NatsCall.error(loaded, "load").description))")
            }
        }
    }

    /// Whether the C client's inbox names come from CNatsNUID (each from getrandom, nothing
    /// shared by two connections of this process) rather than its own NUIDs, whose first 12
    /// characters are the same for every connection of a process (docs/adr/0044). Checked
    /// once; `connect` refuses to run without it.
    public static let inboxNamesArePrivate: Bool = sotto_nuid_is_private() != 0

    /// Whether the client is connected right now (false while it reconnects).
    public var isConnected: Bool { natsConnection_Status(connection) == NATS_CONN_STATUS_CONNECTED }

    /// Closes the connection and frees the client's objects; later calls do nothing.
    public func close() {
        let first = closed.withLock { wasClosed in
            defer { wasClosed = true }
            return !wasClosed
        }
        guard first else { return }
        jsCtx_Destroy(jetStream)
        natsConnection_Close(connection)
        natsConnection_Destroy(connection)
    }
}

/// One login for the C client's credential callbacks: the nkey that signs the server's nonce
/// and the user JWT (minted for an identity's nkey, or read from a `.creds` file).
///
/// nats.c 3.4.1 (Debian 12) sends no `sig` in its CONNECT when the signature's first byte is
/// 0, and nats-server refuses that login ("Signature missing": Authorization Violation).
/// Ed25519 signatures are deterministic, so such a nonce cannot be signed in a way the client
/// will send: `signature(of:)` refuses it, the connect fails before anything is sent, and
/// `RelayConnection.connect` tries again on a new connection with a new nonce (docs/adr/0063).
/// One login in 256 met it; every one of them was refused before this.
final class UserLogin: Sendable {
    static let unsendableSignature = "the nonce's signature starts with a zero byte, which this NATS client would not send"
    /// 8 tries: a login is refused for this reason with probability 256^-8.
    static let connectTries = 8

    let user: Nkey
    let jwt: String
    private let unsentSignatures = Mutex(0)

    init(user: Nkey, jwt: String) {
        self.user = user
        self.jwt = jwt
    }

    /// The nonce's signature, or nil when the C client would drop it (first byte 0).
    func signature(of nonce: UnsafePointer<CChar>) -> [UInt8]? {
        let signed = user.sign(Array(String(cString: nonce).utf8))
        guard signed.first != 0 else {
            unsentSignatures.withLock { $0 += 1 }
            return nil
        }
        return signed
    }

    /// Whether a signature was refused since the last call (so the failed connect may be retried).
    func takeUnsentSignature() -> Bool {
        unsentSignatures.withLock { count in
            defer { count = 0 }
            return count > 0
        }
    }
}

/// Holds the event handler for the C callbacks (the client holds one reference from a
/// successful connect until its closed callback).
final class EventBox: Sendable {
    let handler: @Sendable (RelayConnection.Event) -> Void
    init(_ handler: @escaping @Sendable (RelayConnection.Event) -> Void) { self.handler = handler }
}
