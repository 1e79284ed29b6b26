import SottoCrypto
import SottoWire
import TestSupport
import Testing

/// Every case of docs/protocol/vectors/attachment-direct-v1.json through the library: what an
/// endpoint makes of each request line, what a fetcher makes of each answer line, and the
/// exact answer for stored files of attachment-v1.json from a given piece (the real worker
/// takes the request cases too: AttachmentDirectFetchTests).
@Suite("Attachment direct-fetch vectors")
struct AttachmentDirectVectorTests {
    @Test("Each request line is the request the vector names, or refused (bad_request)")
    func requests() throws {
        let vectors = try AttachmentDirectVectors.load()
        #expect(vectors.requests.count >= 15)
        for vector in vectors.requests {
            #expect(AttachmentFetchExchange.opens(vector.line), "\(vector.name): a fetch request, well formed or not")
            let request = AttachmentFetchExchange.request(vector.line)
            if let parsed = vector.parsed {
                #expect(request == AttachmentFetchExchange.Request(messageId: parsed.messageId, attachmentId: parsed.attachmentId,
                                                                   firstPiece: parsed.firstPiece), "\(vector.name)")
                #expect(request.map { Array($0.line.dropLast()) } == vector.line, "\(vector.name): the line Sotto writes for it")
            } else {
                #expect(request == nil, "\(vector.name): refused")
            }
        }
    }

    @Test("Each answer line means what the vector says")
    func answers() throws {
        for vector in try AttachmentDirectVectors.load().answers {
            let expected: AttachmentFetchExchange.Answer
            switch vector.expect {
            case "ok": expected = .ok
            case "not_spoken": expected = AttachmentFetchExchange.answer(vector.line)
                guard case .notSpoken = expected else { Issue.record("\(vector.name): not notSpoken"); continue }
            default: expected = .refused(try #require(AttachmentFetchExchange.Refusal(rawValue: vector.expect), "\(vector.name)"))
            }
            #expect(AttachmentFetchExchange.answer(vector.line) == expected, "\(vector.name)")
        }
        #expect(AttachmentFetchExchange.Refusal.allCases.map(\.line) == ["bad_request", "unknown_attachment", "busy"].map {
            Array("#sotto-attachment v1 refused \($0)\n".utf8)
        })
    }

    @Test("An answer line another device sent that is not the exchange's is named in printable ASCII only: no control byte or escape reaches a log line or the failed state")
    func hostileAnswerIsInert() {
        let hostile = Array("\u{1B}]0;pwned\u{07}\u{1B}[2J<b>x</b>\u{202E}\r".utf8) + [0x00, 0xFF]
        guard case .notSpoken(let shown) = AttachmentFetchExchange.answer(hostile) else {
            Issue.record("a hostile line is not an answer")
            return
        }
        #expect(shown.unicodeScalars.allSatisfy { $0.value >= 0x20 && $0.value < 0x7F }, "\(shown)")
        #expect(!shown.contains("\u{1B}") && shown.count <= 80)
    }

    @Test("The answer from a piece: the ok line, LF, then the stored file from that piece's first byte")
    func responses() throws {
        let files = try AttachmentVectors.load().files
        let vectors = try AttachmentDirectVectors.load().responses
        #expect(vectors.count >= 5)
        for vector in vectors {
            let stored = try #require(files.first { $0.name == vector.file }?.stored, "\(vector.file)")
            #expect(stored.count == vector.storedLength)
            let range = AttachmentPieces.range(vector.firstPiece, storedLength: stored.count)
            #expect(range.lowerBound == vector.offset, "\(vector.file) from \(vector.firstPiece)")
            let answer = AttachmentFetchExchange.okLine + [0x0a] + stored[range.lowerBound...]
            #expect(answer.count == vector.answerLength)
            #expect(Hex.encode(SHA256.hash(answer)) == vector.answerSha256, "\(vector.file) from \(vector.firstPiece)")
        }
    }
}
