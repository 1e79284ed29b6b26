import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Runs every case of the independent vectors through the library, as the worker would:
/// PushOpener (payload → keystore lookup → open → parse → verify → topic → content), then
/// the membership check the store writer does against the database, here against the
/// vector's member list.
@Suite("Protocol vectors", .serialized)
struct VectorTests {
    // Skipped (not failed) when the shared vectors file is not next to the package: set
    // SOTTO_VECTORS to run them from elsewhere.
    @Test("Vector case", .enabled(if: Vectors.isAvailable, "vectors file not found: set SOTTO_VECTORS"),
          arguments: Vectors.caseNames)
    func vectorCase(name: String) throws {
        let file = try #require(try Vectors.load())
        let vector = try #require(file.cases.first { $0.name == name })
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        let keystore = try Keystore(directory: temp.path + "/keystore", environment: [:], createIfMissing: true)
        try keystore.save(try file.recipient.identity())

        let outcome = Result { () throws(PushError) -> SignedMessage in
            let opened = try PushOpener.open(vector.payload) { (clientId) throws(KeystoreError) in
                try keystore.identity(clientId: clientId)
            }
            #expect(opened.recipientInboxId == file.recipient.inboxId)
            guard opened.message.conversationId == file.recipient.conversationId else {
                throw PushError(.unknownConversation, "not this inbox's conversation")
            }
            if case .joinRequest = opened.content {} else {
                let isMember = file.members.contains {
                    $0.inboxId == opened.message.senderInboxId && $0.publicKey == opened.message.senderPublicKey
                }
                guard isMember else { throw PushError(.unknownSender, "sender is not a member") }
            }
            return opened.message
        }

        switch (vector.expect, outcome) {
        case (.error(let code), .failure(let error)):
            #expect(error.code.rawValue == code, "\(name): \(error.detail)")
        case (.error(let code), .success(let message)):
            Issue.record("\(name): expected \(code), got message \(message.id)")
        case (.ok, .failure(let error)):
            Issue.record("\(name): expected a message, got \(error)")
        case (.ok(let expected), .success(let message)):
            let actual = try #require(try JSONParser.parse(message.encode()).object)
            #expect(!expected.keys.isEmpty)
            for key in expected.keys {
                #expect(actual[key] == expected[key], "\(name): field \(key)")
            }
        }
    }

    @Test("Vector file has every case kind", .enabled(if: Vectors.isAvailable))
    func vectorCoverage() throws {
        let file = try #require(try Vectors.load())
        let codes = Set(file.cases.compactMap { if case .error(let code) = $0.expect { code } else { nil } })
        #expect(file.cases.count >= 20)
        for code in codes { #expect(PushErrorCode(rawValue: code) != nil, "unknown code \(code)") }
    }
}
