import CNats
@testable import RelayTransport

extension RelayConnection {
    /// Test only: the relay forgets a body, as its 30-day age limit would make it (a purge of
    /// the body's subject in `SOTTO_BODIES`). A push that names it is then one relayd must
    /// terminate (docs/protocol/bodies.md §6).
    func expireBody(id: String) throws {
        guard let subject = BodyStream.subject(id: id) else { throw RelayRigFailure("not a body id: \(id)") }
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = apiWaitMs
        var jsError = jsErrCode(0)
        let status = subject.withCString { subject in
            options.Stream.Purge.Subject = subject
            return js_PurgeStream(jetStream, BodyStream.streamName, &options, &jsError)
        }
        try NatsCall.check(status, "purge body \(id)", jsError: jsError)
    }
}
