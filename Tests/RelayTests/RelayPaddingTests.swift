import Foundation
import RelayTransport
import SharedStore
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// docs/protocol/relay-padding.md: every push on a relay is one 4,099-byte frame; relayd
/// strips it, and terminates a frame that is not exactly that without storing anything or
/// logging its bytes.
@Suite("Relay padding")
struct RelayPaddingTests {
    static func sha256(_ bytes: [UInt8]) -> String { Hex.encode(SHA256.hash(bytes)) }

    @Test("the vectors of relay-padding.md §5: frame bytes, SHA-256 and the round trip")
    func vectors() throws {
        let cases: [([UInt8], String)] = [
            (Array(#"{"version":1}"#.utf8), "8d4f8eba1da7f33422d46edc84f101d5e1066f4a178ca104db8885ce48b61bdf"),
            (Array("x".utf8), "038c650a56e5360cd357e6a89f6a3c2d802c598455e86438786d5c0341b3a1aa"),
            ([UInt8](repeating: 0x61, count: 4_096), "86fc5cc2d630b0760093aea964aebb3d004ce47c3f4be2e70d45a9c27d1c028f"),
        ]
        for (push, digest) in cases {
            let frame = try RelayPadding.pad(push)
            #expect(frame.count == 4_099)
            #expect(Array(frame[0..<3]) == [0x01, UInt8(push.count >> 8), UInt8(push.count & 0xff)])
            #expect(Self.sha256(frame) == digest)
            #expect(try RelayPadding.unpad(frame) == push)
        }
    }

    @Test("frames a receiver must refuse, each with its reason")
    func refusals() throws {
        let good = try RelayPadding.pad(Array(#"{"version":1}"#.utf8))
        var version2 = good; version2[0] = 2
        var empty = good; empty[1] = 0; empty[2] = 0
        var tooLong = good; tooLong[1] = 0x10; tooLong[2] = 0x01
        var dirty = good; dirty[4_098] = 1
        let cases: [([UInt8], RelayPadding.Failure)] = [
            (Array(good.dropLast()), .wrongSize(4_098)), (good + [0], .wrongSize(4_100)), ([], .wrongSize(0)),
            (version2, .unknownVersion(2)), (empty, .badLength(0)), (tooLong, .badLength(4_097)),
            (dirty, .nonZeroPadding(offset: 4_098)), (Array(#"{"version":1}"#.utf8), .wrongSize(13)),
        ]
        for (frame, failure) in cases {
            #expect(throws: failure) { try RelayPadding.unpad(frame) }
        }
        #expect(throws: RelayPadding.Failure.emptyPush) { try RelayPadding.pad([]) }
        #expect(throws: RelayPadding.Failure.pushTooLarge(4_097)) { try RelayPadding.pad([UInt8](repeating: 1, count: 4_097)) }
    }

    @Test("relayd terminates badly padded frames (logged without their bytes), stores nothing of them, and stores the good push after them",
          .enabled(if: NatsServer.isInstalled, "nats-server not installed (make deps)"))
    func relaydRefusesBadFrames() async throws {
        let outcome = try await onOwnThread { () -> (before: [String], after: [String], valid: String, log: [String], running: Bool)? in
            guard let rig = try RelayRig.make() else { return nil }
            defer { rig.tearDown() }
            try rig.startPushSocket()
            try rig.startRelayd(arguments: ["--ack-wait-ms", "2000", "--retry-min-ms", "100"])
            let before = try rig.storedMessageIds()
            let secret = Array("SECRET-PLAINTEXT-MARKER".utf8)
            let good = try RelayPadding.pad(secret)
            var version2 = good; version2[0] = 2
            var dirty = good; dirty[4_098] = 0x53
            var long = good; long[1] = 0xff; long[2] = 0xff
            var zeroLength = good; zeroLength[1] = 0; zeroLength[2] = 0
            let valid = try rig.fixture.sealTextForRelay("after the bad frames")
            let frames = [secret, Array(good.dropLast()), good + [0], version2, dirty, long, zeroLength]
            for (index, frame) in frames.enumerated() {
                _ = try rig.publisher().publish(frame, to: rig.mailbox, messageId: "bad-frame-\(index)", padded: false)
            }
            try rig.publish(valid)
            try waitUntil("the valid push stored", timeout: 60) { try rig.fixture.message(id: valid.messageId) != nil }
            try waitUntil("every bad frame terminated", timeout: 60) {
                rig.relaydOutput.filter { $0.contains("bad relay padding") }.count >= frames.count
            }
            try waitUntil("the mailbox is empty", timeout: 10) { try rig.publisher().storedCount(rig.mailbox) == 0 }
            return (before, try rig.storedMessageIds(), valid.messageId, rig.relaydOutput, rig.relayd?.isRunning == true)
        }
        guard let outcome else { return }
        #expect(outcome.after == outcome.before + [outcome.valid], "nothing of the bad frames was stored")
        #expect(outcome.running, "relayd still runs")
        #expect(outcome.log.filter { $0.contains("bad relay padding") }.count == 7, "\(outcome.log)")
        #expect(!outcome.log.contains { $0.contains("SECRET") }, "no frame content in the log")
        for reason in ["is 4099 bytes, this one 23", "this one 4098", "this one 4100", "unknown relay frame version 2",
                       "padding byte at offset 4098", "push length 65535", "push length 0"] {
            #expect(outcome.log.contains { $0.contains(reason) }, "\(reason)")
        }
    }
}
