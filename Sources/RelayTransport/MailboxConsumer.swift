import CNats

/// One identity's durable pull consumer on the mailbox stream, bound for fetching: explicit
/// acks, every message of `sotto.mb.<clientId>` from the first. Created if missing; binding
/// to it again (after a restart) resumes where the last ack left off. Used from one thread.
///
/// ```swift
/// let consumer = try MailboxConsumer(relay: relay, mailbox: box, ackWaitMs: 40_000)
/// for message in try consumer.fetch(max: 64) {
///     try message.ack()            // after the device stored it
/// }
/// consumer.close()                 // the durable consumer stays on the relay
/// ```
public final class MailboxConsumer {
    public let mailbox: Mailbox
    private let relay: RelayConnection
    private var subscription: OpaquePointer?

    /// `ackWaitMs`: how long a fetched message may stay unacked before the relay redelivers
    /// it (longer than the worker's 30 s deadline).
    public init(relay: RelayConnection, mailbox: Mailbox, ackWaitMs: Int64) throws(RelayError) {
        self.relay = relay
        self.mailbox = mailbox
        try Self.create(relay: relay, mailbox: mailbox, ackWaitMs: ackWaitMs)
        var options = jsSubOptions()
        jsSubOptions_Init(&options)
        var jsError = jsErrCode(0)
        var sub: OpaquePointer?
        let status = Mailbox.streamName.withCString { stream in
            mailbox.durable.withCString { durable in
                options.Stream = stream
                options.Consumer = durable  // bind only: the library neither creates nor deletes it
                options.ManualAck = true
                return js_PullSubscribe(&sub, relay.jetStream, mailbox.subject, durable, nil, &options, &jsError)
            }
        }
        try NatsCall.check(status, "bind to the consumer of \(mailbox)", jsError: jsError)
        subscription = sub
    }

    deinit { close() }

    private static func create(relay: RelayConnection, mailbox: Mailbox, ackWaitMs: Int64) throws(RelayError) {
        if try relay.consumerState(mailbox) != nil { return }
        var config = jsConsumerConfig()
        jsConsumerConfig_Init(&config)
        var info: UnsafeMutablePointer<jsConsumerInfo>?
        var jsError = jsErrCode(0)
        let status = mailbox.durable.withCString { durable in
            mailbox.subject.withCString { subject in
                config.Durable = durable
                config.FilterSubject = subject
                config.AckPolicy = js_AckExplicit
                config.DeliverPolicy = js_DeliverAll
                config.AckWait = ackWaitMs * 1_000_000
                config.MaxAckPending = 1_024
                return js_AddConsumer(&info, relay.jetStream, Mailbox.streamName, &config, nil, &jsError)
            }
        }
        if status == NATS_OK { jsConsumerInfo_Destroy(info); return }
        if (try? relay.consumerState(mailbox)) != nil { return }  // created by another instance meanwhile
        throw NatsCall.error(status, "create the consumer of \(mailbox)", jsError: jsError)
    }

    /// Up to `max` messages that are ready now; empty when there are none. `waitMs` bounds
    /// the call: nats-server 2.9 holds a no-wait request until it expires while the consumer
    /// has messages awaiting an ack or a delayed redelivery (a request without an expiry
    /// times out in the client at once). Messages that are there come back at once (≤ 1 ms),
    /// but an empty answer costs the whole `waitMs`: measured with nats-server 2.9.10 and
    /// libnats 3.4, 191 ms for `fetch(max: 64)` on a fresh consumer with nothing ever stored
    /// and again right after every message was acked with `ack()` (docs/adr/0026 measured
    /// 0.6 ms with a C probe). A caller that knows how many are stored (work-queue retention:
    /// `RelayConnection.storedCount`) can fetch exactly that many and skip the empty fetch.
    public func fetch(max: Int, waitMs: Int64 = 200) throws(RelayError) -> [RelayMessage] {
        guard let subscription else { return [] }
        var request = jsFetchRequest()
        jsFetchRequest_Init(&request)
        request.Batch = Int32(max)
        request.NoWait = true
        request.Expires = waitMs * 1_000_000
        var list = natsMsgList()
        let status = natsSubscription_FetchRequest(&list, subscription, &request)
        if status == NATS_TIMEOUT || status == NATS_NOT_FOUND { return [] }
        try NatsCall.check(status, "fetch from \(mailbox)")
        var out: [RelayMessage] = []
        out.reserveCapacity(Int(list.Count))
        for index in 0..<Int(list.Count) {
            if let message = list.Msgs[index] {
                out.append(RelayMessage(message: message, apiWaitMs: relay.apiWaitMs))
                list.Msgs[index] = nil  // now owned by the RelayMessage
            }
        }
        natsMsgList_Destroy(&list)
        return out
    }

    /// Stops fetching; the durable consumer and its messages stay on the relay.
    public func close() {
        guard let subscription else { return }
        natsSubscription_Destroy(subscription)
        self.subscription = nil
    }
}
