// sotto-attachment-probe encrypt SIZE STORED_PATH   → prints the reference (base64url of its JSON)
// sotto-attachment-probe decrypt STORED_PATH REFERENCE OUT_PATH
//                                                    → prints "rss_start_kib=A rss_peak_kib=B"
//
// A real process for AttachmentMemoryTests: its peak RSS (VmHWM) after decrypting a 1 MiB
// and a 100 MiB stored file shows whether memory grows with the file. encrypt feeds a
// generated pattern (one 64 KiB buffer, its first 8 bytes the offset), so neither side holds a file.
import Glibc
import SottoCrypto
import SottoWire

func fail(_ text: String) -> Never {
    let line = Array("sotto-attachment-probe: \(text)\n".utf8)
    _ = line.withUnsafeBytes { Glibc.write(2, $0.baseAddress, $0.count) }
    exit(1)
}

/// VmHWM of /proc/self/status: the peak RSS of this process's own memory since exec.
/// (getrusage's ru_maxrss is no good here: exec carries the spawning process's peak into it.)
func peakRSSKiB() -> Int {
    let file = open("/proc/self/status", O_RDONLY)
    guard file >= 0 else { fail("no /proc/self/status") }
    defer { close(file) }
    var bytes = [UInt8](repeating: 0, count: 8192)
    let count = bytes.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
    guard count > 0 else { fail("cannot read /proc/self/status") }
    for line in String(decoding: bytes[0..<count], as: UTF8.self).split(separator: "\n") where line.hasPrefix("VmHWM:") {
        if let value = line.split(separator: " ").dropFirst().first.flatMap({ Int($0) }) { return value }
    }
    fail("no VmHWM in /proc/self/status")
}

let arguments = CommandLine.arguments
switch arguments.count > 1 ? arguments[1] : "" {
case "encrypt" where arguments.count == 4:
    guard let size = Int(arguments[2]) else { fail("SIZE is not a number") }
    let sink = open(arguments[3], O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard sink >= 0 else { fail("cannot open \(arguments[3])") }
    do {
        var encryptor = try AttachmentEncryptor(size: size)
        var pattern = (0..<AttachmentLayout.chunkSize).map { UInt8(truncatingIfNeeded: $0 &* 131 &+ 7) }
        let write: AttachmentEncryptor.Emit = { (bytes) throws(AttachmentError) in
            var offset = 0
            while offset < bytes.count {
                let count = Glibc.write(sink, bytes.baseAddress! + offset, bytes.count - offset)
                guard count > 0 else { throw AttachmentError(.io, "write failed") }
                offset += count
            }
        }
        var offset = 0
        while offset < size {
            let count = min(pattern.count, size - offset)
            for index in 0..<8 { pattern[index] = UInt8(truncatingIfNeeded: offset >> (8 * index)) }
            try encryptor.consume(Array(pattern[0..<count]), emit: write)
            offset += count
        }
        let digest = try encryptor.finish(emit: write)
        close(sink)
        let reference = AttachmentReference(id: encryptor.id, size: size, sha256: digest, key: encryptor.key,
                                            name: "generated.bin", mediaType: "application/octet-stream")
        print(Base64URL.encode(reference.encode()))
    } catch {
        fail("\(error)")
    }
case "decrypt" where arguments.count == 5:
    let start = peakRSSKiB()
    guard let json = Base64URL.decode(arguments[3]), let reference = try? AttachmentReference.decode(json) else {
        fail("REFERENCE is not a reference")
    }
    let source = open(arguments[2], O_RDONLY), sink = open(arguments[4], O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    guard source >= 0, sink >= 0 else { fail("cannot open the files") }
    do {
        try AttachmentFile.decrypt(from: source, reference: reference, to: sink)
    } catch {
        fail("\(error)")
    }
    print("rss_start_kib=\(start) rss_peak_kib=\(peakRSSKiB())")
default:
    fail("usage: sotto-attachment-probe encrypt SIZE STORED_PATH | decrypt STORED_PATH REFERENCE OUT_PATH")
}
