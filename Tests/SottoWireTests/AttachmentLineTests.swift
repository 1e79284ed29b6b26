import SottoWire
import Testing

/// The one line every client shows for a file (`📎 NAME (SIZE, STATE)`, docs/adr/0074), its
/// human sizes, and the media type a sender claims from a file's name.
@Suite("Attachment line")
struct AttachmentLineTests {
    @Test("sizes in powers of 1,024 with one decimal, rounded half up", arguments: [
        (0, "0 B"), (1, "1 B"), (1_023, "1023 B"), (1_024, "1.0 KiB"), (1_075, "1.0 KiB"), (1_076, "1.1 KiB"),
        (200_000, "195.3 KiB"), (1_048_575, "1024.0 KiB"), (1_048_576, "1.0 MiB"), (1_258_291, "1.2 MiB"),
        (104_857_600, "100.0 MiB"), (1 << 30, "1.0 GiB"),
    ])
    func sizes(bytes: Int, shown: String) {
        #expect(AttachmentLine.size(bytes) == shown)
    }

    @Test("the line, and the caption on the next line")
    func line() {
        #expect(AttachmentLine.text(name: "a.pdf", size: 4_096, state: .available, caption: nil) == "📎 a.pdf (4.0 KiB, available)")
        #expect(AttachmentLine.text(name: "a.pdf", size: 4_096, state: .waiting, caption: "minutes")
                == "📎 a.pdf (4.0 KiB, waiting)\nminutes")
    }

    @Test("a fetch under way shows how far it is, a failed one why; the figure and the reason only with their state")
    func fetchStates() {
        #expect(AttachmentLine.text(name: "a.pdf", size: 4_096, state: .fetching, caption: nil, percentDone: 40)
                == "📎 a.pdf (4.0 KiB, fetching 40%)")
        #expect(AttachmentLine.text(name: "a.pdf", size: 4_096, state: .fetching, caption: nil, percentDone: 140)
                == "📎 a.pdf (4.0 KiB, fetching 100%)")
        #expect(AttachmentLine.text(name: "a.pdf", size: 4_096, state: .fetching, caption: nil) == "📎 a.pdf (4.0 KiB, fetching)")
        #expect(AttachmentLine.text(name: "a.pdf", size: 4_096, state: .failed, caption: "x", failure: "the relay does not hold piece 0")
                == "📎 a.pdf (4.0 KiB, failed: the relay does not hold piece 0)\nx")
        #expect(AttachmentLine.text(name: "a.pdf", size: 4_096, state: .available, caption: nil, percentDone: 40, failure: "no")
                == "📎 a.pdf (4.0 KiB, available)")
    }

    @Test("the media type a name suggests; a type the reference's rule accepts, whatever the name")
    func mediaTypes() {
        #expect(AttachmentMediaType.guess(fileName: "IMG_0042.JPG") == "image/jpeg")
        #expect(AttachmentMediaType.guess(fileName: "report.final.pdf") == "application/pdf")
        #expect(AttachmentMediaType.guess(fileName: "notes") == AttachmentMediaType.unknown)
        #expect(AttachmentMediaType.guess(fileName: ".bashrc") == AttachmentMediaType.unknown)
        #expect(AttachmentMediaType.guess(fileName: "archive.") == AttachmentMediaType.unknown)
        for name in ["a.jpg", "a.svg", "a.docx", "a.xyz", "a.md"] {
            #expect(AttachmentReference.isMediaType(AttachmentMediaType.guess(fileName: name)), "\(name)")
        }
        #expect(AttachmentMediaType.isImage("image/png") && !AttachmentMediaType.isImage("application/pdf"))
    }
}
