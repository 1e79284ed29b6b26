import RelayTransport
import SharedStore
import Testing
@testable import DaemonEngine

/// The one rule of where a member fetches a file from (docs/protocol/attachment-relay.md §5.1),
/// and the sender's count of fetchers per relay made from it (§4 step 3): a relay nobody
/// fetches from gets no copy, and each relay's need is the number of members that look there.
@Suite("Attachment source: where members fetch from")
struct AttachmentSourceOriginTests {
    static let r1 = "nats://127.0.0.1:4222", r2 = "tls://relay.example:4443"

    static func member(_ inboxId: String, _ endpoint: String) -> DBMember {
        DBMember(conversationId: "c", inboxId: inboxId, publicKey: "02" + String(repeating: "0", count: 64), endpoint: endpoint,
                 clientId: "00000000-0000-4000-8000-000000000000", role: .member)
    }

    static func counts(_ members: [DBMember], sender: String) -> [String: Int] {
        Dictionary(uniqueKeysWithValues: AttachmentSource.fetchersByRelay(members: members, senderInboxId: sender)
            .map { ($0.relay.description, $0.fetchers) })
    }

    @Test("a member on a relay fetches there; on a direct endpoint, from the sender's relay, or the sender's device and then the other members' devices; nobody to ask or a relay that does not parse is not carried")
    func origin() throws {
        let url1 = try RelayURL.parse(Self.r1)
        #expect(try AttachmentSource.origin(memberEndpoint: Self.r1, senderEndpoint: Self.r2).get() == .relay(url1))
        #expect(try AttachmentSource.origin(memberEndpoint: Self.r1, senderEndpoint: nil).get() == .relay(url1))
        #expect(try AttachmentSource.origin(memberEndpoint: "unix:/run/b.sock", senderEndpoint: Self.r1).get() == .relay(url1))
        #expect(try AttachmentSource.origin(memberEndpoint: "unix:/run/b.sock", senderEndpoint: "tcp:10.0.0.1:7000").get()
                == .devices([.init(endpoint: "tcp:10.0.0.1:7000", isSender: true)]))
        // The sender's device first, then each other member's on a direct endpoint (a relay member's device cannot be asked).
        #expect(try AttachmentSource.origin(memberEndpoint: "unix:/run/b.sock", senderEndpoint: "unix:/run/a.sock",
                                            otherEndpoints: ["unix:/run/c.sock", Self.r2, "tcp:10.0.0.4:7000"]).get()
                == .devices([.init(endpoint: "unix:/run/a.sock", isSender: true), .init(endpoint: "unix:/run/c.sock", isSender: false),
                             .init(endpoint: "tcp:10.0.0.4:7000", isSender: false)]))
        #expect(try AttachmentSource.origin(memberEndpoint: "unix:/run/b.sock", senderEndpoint: nil, otherEndpoints: ["unix:/run/c.sock"]).get()
                == .devices([.init(endpoint: "unix:/run/c.sock", isSender: false)]), "the sender left: the others may hold it")
        #expect(try AttachmentSource.origin(memberEndpoint: "unix:/run/b.sock", senderEndpoint: Self.r1, otherEndpoints: ["unix:/run/c.sock"]).get()
                == .relay(url1), "a sender on a relay put it there")
        #expect(throws: AttachmentSource.NotCarried.self) {
            try AttachmentSource.origin(memberEndpoint: "unix:/run/b.sock", senderEndpoint: nil, otherEndpoints: [Self.r2]).get()
        }
        #expect(throws: AttachmentSource.NotCarried.self) { try AttachmentSource.origin(memberEndpoint: "nats://", senderEndpoint: Self.r1).get() }
    }

    @Test("the sender counts each relay's fetchers by that rule: its own relay only when a member receives on a direct endpoint, never itself, never a relay nobody looks at")
    func fetchersByRelay() throws {
        let r1 = try RelayURL.parse(Self.r1).description, r2 = try RelayURL.parse(Self.r2).description
        let mixed = [Self.member("a", Self.r1), Self.member("b", Self.r2), Self.member("c", Self.r2),
                     Self.member("d", "unix:/run/d.sock"), Self.member("e", "tcp:10.0.0.5:7000")]
        #expect(Self.counts(mixed, sender: "a") == [r1: 2, r2: 2], "b, c on r2; d, e direct: from a's relay")
        #expect(Self.counts(mixed, sender: "b") == [r1: 1, r2: 3], "a on r1; c on r2 and d, e through b's relay")
        #expect(Self.counts(mixed, sender: "d") == [r1: 1, r2: 2], "e fetches from d's device: no relay")
        let allOnOne = (0..<5).map { Self.member("m\($0)", Self.r1) }
        #expect(Self.counts(allOnOne, sender: "m0") == [r1: 4])
        #expect(Self.counts([Self.member("a", Self.r1), Self.member("b", "unix:/b")], sender: "b") == [r1: 1], "a looks on its own relay")
        #expect(Self.counts([Self.member("a", Self.r1), Self.member("b", "unix:/b")], sender: "a") == [r1: 1], "b looks on a's relay")
        #expect(Self.counts([Self.member("a", "unix:/a"), Self.member("b", "tcp:10.0.0.2:7000")], sender: "a").isEmpty,
                "both direct: b fetches from a's device")
    }
}
