@testable import ControlServer
import NIOCore
import Testing

/// The control socket's framing and its budget for unfinished lines, fed bytes directly.
@Suite("Control request framing")
struct ControlRequestDecoderTests {
    static func frames(_ decoder: inout ControlRequestDecoder) -> [String] {
        var out: [String] = []
        while let frame = decoder.nextFrame() {
            switch frame {
            case .line(let line): out.append(String(buffer: line))
            case .tooLong: out.append("<too long>")
            }
        }
        return out
    }

    @Test("lines split across and within reads; the LF is not part of a line; blank lines are lines")
    func framing() {
        var decoder = ControlRequestDecoder(maxLineBytes: 64)
        decoder.append(ByteBuffer(string: "{\"a\""))
        #expect(Self.frames(&decoder).isEmpty)
        decoder.append(ByteBuffer(string: ":1}\n\n{\"b\":2}\n{\"c\""))
        #expect(Self.frames(&decoder) == ["{\"a\":1}", "", "{\"b\":2}"])
        #expect(decoder.bufferedBytes == 4)
        #expect(decoder.finish() == .line(ByteBuffer(string: "{\"c\"")))
        #expect(decoder.bufferedBytes == 0)
    }

    @Test("an over-long line is reported once and skipped up to its LF, however it arrives")
    func overLongLine() {
        var decoder = ControlRequestDecoder(maxLineBytes: 8)
        decoder.append(ByteBuffer(string: "0123456789"))
        #expect(Self.frames(&decoder) == ["<too long>"])
        #expect(decoder.bufferedBytes == 0)
        decoder.append(ByteBuffer(string: "more of it"))
        #expect(Self.frames(&decoder).isEmpty)
        #expect(decoder.bufferedBytes == 0)
        decoder.append(ByteBuffer(string: "end\nok\n"))
        #expect(Self.frames(&decoder) == ["ok"])

        // Complete in one read but too long: the same error, the next line is kept.
        decoder.append(ByteBuffer(string: "0123456789\nfine\n"))
        #expect(Self.frames(&decoder) == ["<too long>", "fine"])
        // Exactly at the bound is allowed.
        decoder.append(ByteBuffer(string: "01234567\n"))
        #expect(Self.frames(&decoder) == ["01234567"])
        // An over-long unfinished line at the end of input is an error, not a request.
        decoder.append(ByteBuffer(string: "012345678"))
        #expect(decoder.finish() == .tooLong)
    }

    @Test("random bytes in random chunks: lines never hold an LF or exceed the bound, and what is held stays bounded")
    func randomChunks() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<50 {
            var decoder = ControlRequestDecoder(maxLineBytes: 100)
            for _ in 0..<200 {
                let count = Int.random(in: 0...300, using: &generator)
                let bytes = (0..<count).map { _ in
                    Bool.random(using: &generator) && Int.random(in: 0..<40, using: &generator) == 0
                        ? UInt8(ascii: "\n") : UInt8.random(in: 0...255, using: &generator)
                }
                decoder.append(ByteBuffer(bytes: bytes))
                while let frame = decoder.nextFrame() {
                    if case .line(let line) = frame {
                        #expect(line.readableBytes <= 100)
                        #expect(!line.readableBytesView.contains(UInt8(ascii: "\n")))
                    }
                }
                #expect(decoder.bufferedBytes <= 100)
            }
        }
    }

    @Test("the budget: 16 KB per connection free, then one shared pool; giving back restores it")
    func budget() {
        var budget = ControlConnectionBudget(smallBufferBytes: 16, sharedBufferBytes: 100)
        var small = ControlConnectionBudget.Share()
        var big = ControlConnectionBudget.Share()
        var other = ControlConnectionBudget.Share()
        #expect(budget.update(&small, holding: 16))
        #expect(budget.chargedBytes == 0)
        #expect(budget.update(&big, holding: 96))       // 80 charged
        #expect(!budget.update(&other, holding: 46))    // 30 more: over the pool
        #expect(budget.update(&small, holding: 10))     // within its free part: never refused
        #expect(budget.heldBytes == 96 + 46 + 10)
        budget.update(&other, holding: 0)
        budget.update(&big, holding: 0)
        #expect(budget.chargedBytes == 0)
        #expect(budget.update(&other, holding: 116))    // 100 charged: exactly the pool
    }
}
