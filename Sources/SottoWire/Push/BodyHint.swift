/// What a push shows in clear of the body that follows it (`notificationData.body`): enough
/// for a relay receiver to fetch it and for the worker to read it off the socket.
///
/// ```swift
/// let hint = BodyHint(id: reference.id, length: reference.length)
/// ```
public struct BodyHint: Sendable, Equatable {
    public let id: String
    public let length: Int64

    public init(id: String, length: Int64) {
        self.id = id
        self.length = length
    }
}
