import SottoCrypto
import Testing

/// The sealed cell format (docs/adr/0052): it opens only with its conversation's key at its
/// own address, and garbage is a clear error, never a crash.
@Suite("Conversation content key")
struct ConversationContentKeyTests {
    let databaseKey = SecretBytes(SecureRandom.bytes(32))
    let address = CellAddress(table: "message", column: "content", rowId: "aa11")

    var key: ConversationContentKey { ConversationContentKey(databaseKey: databaseKey, conversationId: "c0ffee") }

    @Test("a sealed cell opens to its plaintext and does not hold it in clear")
    func roundTrip() throws {
        let plain = Array("meet at the north gate".utf8)
        let cell = key.seal(plain, at: address)
        #expect(cell.count == plain.count + ConversationContentKey.overhead)
        #expect(cell.first == ConversationContentKey.version)
        #expect(!(0...(cell.count - plain.count)).contains { Array(cell[$0..<$0 + plain.count]) == plain })
        #expect(try key.open(cell, at: address) == plain)
        #expect(try key.open(key.seal([], at: address), at: address) == [])
    }

    @Test("two seals of one plaintext differ (random nonce)")
    func randomNonce() {
        #expect(key.seal([1, 2, 3], at: address) != key.seal([1, 2, 3], at: address))
    }

    @Test("another conversation's key, or another identity's, does not open it")
    func wrongKey() {
        let cell = key.seal(Array("hi".utf8), at: address)
        let otherConversation = ConversationContentKey(databaseKey: databaseKey, conversationId: "c0ffef")
        let otherIdentity = ConversationContentKey(databaseKey: SecretBytes(SecureRandom.bytes(32)), conversationId: "c0ffee")
        #expect(throws: SealedCellError.authenticationFailed) { try otherConversation.open(cell, at: address) }
        #expect(throws: SealedCellError.authenticationFailed) { try otherIdentity.open(cell, at: address) }
    }

    @Test("a cell moved to another row, column or table does not open")
    func movedCell() {
        let cell = key.seal(Array("hi".utf8), at: address)
        for moved in [CellAddress(table: "message", column: "content", rowId: "aa12"),
                      CellAddress(table: "message", column: "fallback", rowId: "aa11"),
                      CellAddress(table: "member_profile", column: "content", rowId: "aa11")] {
            #expect(throws: SealedCellError.authenticationFailed) { try key.open(cell, at: moved) }
        }
    }

    @Test("truncated, empty, altered or unknown-version cells are clear errors")
    func garbage() {
        let cell = key.seal(Array("hello".utf8), at: address)
        #expect(throws: SealedCellError.truncated) { try key.open([], at: address) }
        #expect(throws: SealedCellError.truncated) { try key.open(Array(cell.prefix(ConversationContentKey.overhead - 1)), at: address) }
        #expect(throws: SealedCellError.authenticationFailed) { try key.open(Array(cell.dropLast()), at: address) }
        var altered = cell
        altered[altered.count / 2] ^= 0x01
        #expect(throws: SealedCellError.authenticationFailed) { try key.open(altered, at: address) }
        var version = cell
        version[0] = 0x02
        #expect(throws: SealedCellError.unknownVersion(0x02)) { try key.open(version, at: address) }
        #expect(throws: SealedCellError.unknownVersion(0x68)) { try key.open(Array("hello".utf8), at: address) }
        for length in 0..<80 {
            _ = try? key.open(SecureRandom.bytes(length), at: address)  // never traps
        }
    }

    @Test("the format is what docs/adr/0052 says: HKDF key, version, nonce, XChaCha20-Poly1305 with the stated AAD")
    func formatAsDocumented() throws {
        let ikm = [UInt8](0..<32)
        let conversationId = "00112233445566778899aabbccddeeff"
        let cell = ConversationContentKey(databaseKey: SecretBytes(ikm), conversationId: conversationId)
            .seal(Array("hello".utf8), at: address)
        // Rebuilt from the document alone, with the primitives, not with ConversationContentKey.
        var derived = HKDFSHA256.derive(ikm: ikm, salt: [], info: Array("sotto/db-cell/v1".utf8) + [0] + Array(conversationId.utf8),
                                        length: 32)
        let aad = Array("sotto/db-cell/v1".utf8) + [0] + Array(conversationId.utf8) + [0] + Array("message".utf8)
            + [0] + Array("content".utf8) + [0] + Array("aa11".utf8)
        #expect(cell[0] == 0x01)
        let plain = try derived.withUnsafeBytes { key in
            try XChaCha20Poly1305.open(cell[25...], key: key, nonce: cell[1..<25], aad: aad)
        }
        SecretBytes.zero(&derived)
        #expect(plain == Array("hello".utf8))
    }
}
