import Foundation
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Every case of docs/protocol/vectors/attachment-release-v1.json, made from
/// docs/protocol/attachment-relay.md alone by a second implementation, through the library: a
/// member's mark and its subject (§6.1), the need's data (§4 step 3), and what data reads as a
/// need (§6.1 step 3).
@Suite("Attachment release vectors")
struct AttachmentReleaseVectorTests {
    struct Vectors: Decodable {
        struct Mark: Decodable { let id, key, publicKey, mark, subject, msgId: String }
        struct Need: Decodable { let id: String; let n: Int; let data, subject, msgId: String }
        struct NeedData: Decodable { let data: String; let need: Int?; let why: String }
        let label: String
        let marks: [Mark]
        let needs: [Need]
        let needData: [NeedData]
    }

    static func load() throws -> Vectors {
        let url = PackagePaths.root.appendingPathComponent("docs/protocol/vectors/attachment-release-v1.json")
        return try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: url))
    }

    @Test("each member's mark, its subject and its message id are the vector's; no two cases share a mark")
    func marks() throws {
        let vectors = try Self.load()
        #expect(vectors.label == String(decoding: AttachmentFetchedMark.label, as: UTF8.self))
        #expect(vectors.marks.count >= 6)
        for vector in vectors.marks {
            let key = try #require(Hex.decode(vector.key, count: 32)), publicKey = try #require(Hex.decode(vector.publicKey, count: 33))
            let mark = try #require(AttachmentFetchedMark.token(key: key, memberPublicKey: publicKey))
            #expect(mark == vector.mark, "\(vector.id) \(vector.publicKey.prefix(8))")
            #expect(AttachmentStream.fetchedSubject(id: vector.id, token: mark) == vector.subject)
            #expect("\(vector.id).got.\(mark)" == vector.msgId)
        }
        #expect(Set(vectors.marks.map(\.mark)).count == vectors.marks.count)
        #expect(AttachmentFetchedMark.token(key: [UInt8](repeating: 1, count: 31), memberPublicKey: [UInt8](repeating: 2, count: 33)) == nil)
        #expect(AttachmentFetchedMark.token(key: [UInt8](repeating: 1, count: 32), memberPublicKey: [UInt8](repeating: 2, count: 66)) == nil)
    }

    @Test("each need's data is the vector's and reads back as its count")
    func needs() throws {
        let vectors = try Self.load()
        #expect(vectors.needs.map(\.n).contains(999) && vectors.needs.map(\.n).contains(1))
        for vector in vectors.needs {
            #expect(Hex.encode(Array(String(vector.n).utf8)) == vector.data, "\(vector.n): the data Sotto publishes")
            #expect(AttachmentStream.need(from: try #require(Hex.decode(vector.data))) == vector.n)
            #expect(AttachmentStream.needSubject(id: vector.id) == vector.subject)
            #expect("\(vector.id).need" == vector.msgId)
        }
    }

    @Test("data is a need, or not, as the vector says (leading zeros, signs, spaces, other digits, NUL: not)")
    func needData() throws {
        let vectors = try Self.load()
        #expect(vectors.needData.contains { $0.need == nil } && vectors.needData.contains { $0.need != nil })
        for vector in vectors.needData {
            let data = try #require(Hex.decode(vector.data), "\(vector.why)")
            #expect(AttachmentStream.need(from: data) == vector.need, "\(vector.why)")
        }
    }
}
