import CNats
@testable import RelayTransport

extension RelayConnection {
    /// Test only: what the relay answered a raw request (a JetStream API call a hostile client
    /// makes by hand), or nil with the connection's last error (a permission violation is
    /// reported asynchronously by the server: `-ERR 'Permissions Violation for Publish to …'`).
    func rawRequest(_ subject: String, _ payload: String = "", timeoutMs: Int64 = 1_500) -> (reply: String?, lastError: String) {
        var reply: OpaquePointer?
        let status = natsConnection_RequestString(&reply, connection, subject, payload, timeoutMs)
        defer { if let reply { natsMsg_Destroy(reply) } }
        if status == NATS_OK, let reply {
            let count = Int(natsMsg_GetDataLength(reply))
            let text = count > 0 ? String(cString: natsMsg_GetData(reply)) : ""
            return (text, lastError)
        }
        return (nil, lastError)
    }

    /// Test only: creates (or updates) the attachment stream as an operator would, with Sotto's
    /// settings (docs/protocol/attachment-relay.md §3) and a quota of `maxBytes`; true when the
    /// relay says the quota is set.
    func capAttachmentStream(maxBytes: Int) -> Bool {
        let config = #"{"name":"SOTTO_ATTACHMENTS","subjects":["sotto.att.>"],"retention":"limits","storage":"file","max_bytes":\#(maxBytes),"#
            + #""max_msg_size":66584,"max_msgs_per_subject":1,"discard":"new","discard_new_per_subject":true,"#
            + #""max_age":2592000000000000,"duplicate_window":600000000000,"num_replicas":1}"#
        var answer = rawRequest("$JS.API.STREAM.CREATE.SOTTO_ATTACHMENTS", config)
        if answer.reply?.contains(#""error""#) == true { answer = rawRequest("$JS.API.STREAM.UPDATE.SOTTO_ATTACHMENTS", config) }
        return answer.reply?.contains(#""max_bytes":\#(maxBytes)"#) == true
    }

    /// Test only: publishes without waiting for anything (an ack forged by hand), then flushes.
    func rawPublish(_ subject: String, _ payload: String = "") {
        _ = natsConnection_PublishString(connection, subject, payload)
        _ = natsConnection_FlushTimeout(connection, 1_000)
    }

    /// Test only: publishes bytes as a plain NATS message (no message id, so no duplicate
    /// window: what a hostile client that knows a subject can do), then flushes.
    func rawPublish(_ subject: String, bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { natsConnection_Publish(connection, subject, $0.baseAddress, Int32($0.count)) }
        _ = natsConnection_FlushTimeout(connection, 1_000)
    }

    /// Test only: subscribes to `subject` and returns whether a message arrives within
    /// `timeoutMs` (a refused subscription never gets one; the refusal is in `lastError`).
    func rawSubscribeReceives(_ subject: String, within timeoutMs: Int64, after publish: () throws -> Void) rethrows -> Bool {
        var subscription: OpaquePointer?
        guard natsConnection_SubscribeSync(&subscription, connection, subject) == NATS_OK, let subscription else { return false }
        defer { natsSubscription_Destroy(subscription) }
        _ = natsConnection_FlushTimeout(connection, 1_000)
        try publish()
        var message: OpaquePointer?
        let status = natsSubscription_NextMsg(&message, subscription, timeoutMs)
        if let message { natsMsg_Destroy(message) }
        return status == NATS_OK
    }

    /// The text of the connection's last error ("" when none).
    var lastError: String {
        var text: UnsafePointer<CChar>?
        _ = natsConnection_GetLastError(connection, &text)
        return text.map { String(cString: $0) } ?? ""
    }
}
