import ControlProtocol
import Foundation
@testable import SottoCLI
import SottoWire
import Testing

/// `sotto watch --json` prints one compact JSON line per change. It once made that line by
/// pretty-printing and then deleting newlines and double spaces, which also changed a
/// message's own text; the line must parse back to exactly the change it came from.
@Suite("sotto watch --json lines")
struct WatchJSONLineTests {
    @Test("a text with double spaces, a newline and a tab comes back unchanged, on one line")
    func textSurvives() throws {
        let text = "a  b\nc\t d   \"quoted\"  \\ end  "
        let change = ChangeNotification(seq: 7, kind: "messageInserted", writerPid: 42, createdAtMs: 1,
                                        conversationId: "c1", entityId: "m1", text: text, outgoing: false,
                                        senderInboxId: "i1", senderName: "bob  smith")
        let line = WatchCommand.jsonLine(change)
        #expect(!line.contains("\n"))
        let parsed = try JSONParser.parse(Array(line.utf8), limits: .init(maxBytes: 1 << 16, maxDepth: 4))
        #expect(parsed["text"]?.string == text)
        #expect(parsed["senderName"]?.string == "bob  smith")
        guard case .object(let expected) = change.json, case .object(let got) = parsed else {
            Issue.record("not an object: \(line)"); return
        }
        #expect(Set(got.keys) == Set(expected.keys))
        for member in expected.members { #expect(got[member.key] == member.value, "\(member.key)") }
    }
}
