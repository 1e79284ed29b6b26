import RelayTransport

extension RelayConnection {
    /// A connection to `url` named `test-publisher`: a test publishing into mailboxes as a
    /// sender's outbox would, and reading the relay's view of them.
    ///
    /// ```swift
    /// let publisher = try RelayConnection.testPublisher(server.url)
    /// ```
    static func testPublisher(_ url: String) throws -> RelayConnection {
        var options = RelayConnection.Options()
        options.name = "test-publisher"
        return try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(url)), options: options)
    }
}
