import Foundation
import RelayTransport
import SottoWire
import TestSupport
import Testing

/// The pieces of a stored attachment on a relay (docs/protocol/attachment-relay.md §2, §3),
/// checked against the stored lengths of docs/protocol/vectors/attachment-v1.json (made by a
/// second implementation) and against garbage.
@Suite("Attachment stream pieces")
struct AttachmentStreamTests {
    struct PaddingCase: Decodable { let size: Int; let chunks: Int; let storedLength: Int }
    struct Vectors: Decodable { let padding: [PaddingCase] }

    static func vectors() throws -> Vectors {
        let path = PackagePaths.root.appendingPathComponent("docs/protocol/vectors/attachment-v1.json").path
        return try JSONDecoder().decode(Vectors.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test("every stored length of the vectors is cut into one piece per chunk, end to end: piece 0 holds the header, only the last piece is short")
    func piecesCoverTheStoredFile() throws {
        let cases = try Self.vectors().padding
        #expect(cases.count >= 20)
        for vector in cases {
            let pieces = try #require(AttachmentPieces.count(storedLength: vector.storedLength), "\(vector.storedLength)")
            #expect(pieces == vector.chunks)
            var next = 0
            for index in 0..<pieces {
                let range = AttachmentPieces.range(index, storedLength: vector.storedLength)
                #expect(range.lowerBound == next, "piece \(index) of \(vector.storedLength) starts where the last ended")
                if index == 0 { #expect(range.count <= 65_560) } else { #expect(range.lowerBound == 8 + 65_552 * index) }
                if index < pieces - 1 { #expect(range.count == (index == 0 ? 65_560 : 65_552)) }
                #expect(range.count >= 4_112)
                next = range.upperBound
            }
            #expect(next == vector.storedLength)
        }
        #expect(AttachmentPieces.count(storedLength: AttachmentLayout.storedLength(AttachmentLayout.maxSize)) == 1_600)
        #expect(AttachmentPieces.maxPieces == 1_600)
    }

    @Test("a length no file is stored as names no pieces; a subject is made only of an id and a piece in range")
    func garbage() {
        for length in [Int.min, -1, 0, 8, 4_119, 4_121, 8_215, 65_559, 69_671, AttachmentLayout.storedLength(AttachmentLayout.maxSize) + 1, Int.max] {
            #expect(AttachmentPieces.count(storedLength: length) == nil, "\(length)")
        }
        let id = String(repeating: "ab", count: 16)
        #expect(AttachmentStream.subject(id: id, piece: 0) == "sotto.att.\(id).0")
        #expect(AttachmentStream.subject(id: id, piece: 1_599) == "sotto.att.\(id).1599")
        #expect(AttachmentStream.allPieces(id: id) == "sotto.att.\(id).>")
        for (badId, piece) in [(id, -1), (id, 1_600), ("", 0), ("*", 0), (">", 0), (id.uppercased(), 0), (id + ".0", 0), (String(id.dropLast()), 0)] {
            #expect(AttachmentStream.subject(id: badId, piece: piece) == nil, "\(badId) \(piece)")
        }
        #expect(AttachmentStream.allPieces(id: "sotto.mb.>") == nil)
    }
}
