// AttachmentBench FILE [ROUNDS]
//
// Throughput of encrypting FILE into an attachment's stored form and of decrypting it again
// (docs/protocol/attachments.md), as ratios against a baseline run in the same process, in
// alternating rounds: the same 64 KiB reads and writes, the same ChaCha20-Poly1305 per chunk
// and the same streaming SHA-256 of the stored bytes, called on libsodium directly with no
// format (no key derivation, AAD, padding, header or per-chunk checks). The ratio is what
// the format costs; goal ≥ 0.9 (Benchmarks/attachment-bench.sh, docs/adr/0073).
import CSodium
import Foundation
import Glibc
import SottoCrypto
import SottoWire

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("AttachmentBench: \(text)\n".utf8))
    exit(1)
}

func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

func openOrFail(_ path: String, _ flags: Int32) -> Int32 {
    let fd = open(path, flags, 0o600)
    guard fd >= 0 else { fail("cannot open \(path)") }
    return fd
}

func writeAll(_ fd: Int32, _ base: UnsafeRawPointer, _ count: Int) {
    var offset = 0
    while offset < count {
        let written = write(fd, base + offset, count - offset)
        guard written > 0 else { fail("write failed") }
        offset += written
    }
}

// MARK: The baseline: libsodium alone over the same reads and writes

func baselineEncrypt(_ input: String, _ output: String, key: [UInt8]) {
    let source = openOrFail(input, O_RDONLY), sink = openOrFail(output, O_WRONLY | O_CREAT | O_TRUNC)
    defer { close(source); close(sink) }
    var plain = [UInt8](repeating: 0, count: 65_536), sealed = [UInt8](repeating: 0, count: 65_552)
    var state = crypto_hash_sha256_state()
    crypto_hash_sha256_init(&state)
    var index: UInt64 = 0
    while true {
        let count = plain.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        var nonce = [UInt8](repeating: 0, count: 12)
        for byte in 0..<8 { nonce[4 + byte] = UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(byte))) }
        _ = crypto_aead_chacha20poly1305_ietf_encrypt(&sealed, nil, plain, UInt64(count), nil, 0, nil, nonce, key)
        crypto_hash_sha256_update(&state, sealed, UInt64(count + 16))
        sealed.withUnsafeBytes { writeAll(sink, $0.baseAddress!, count + 16) }
        index += 1
    }
    var digest = [UInt8](repeating: 0, count: 32)
    crypto_hash_sha256_final(&state, &digest)
}

func baselineDecrypt(_ input: String, key: [UInt8], to output: String = "/dev/null") {
    let source = openOrFail(input, O_RDONLY)
    let sink = output == "/dev/null" ? openOrFail(output, O_WRONLY) : openOrFail(output, O_WRONLY | O_CREAT | O_EXCL)
    defer {
        // A file saved for the user is fsynced before it counts (attachment-save-bench.sh).
        if output != "/dev/null", fsync(sink) != 0 { fail("fsync of \(output)") }
        close(source); close(sink)
    }
    var plain = [UInt8](repeating: 0, count: 65_536), sealed = [UInt8](repeating: 0, count: 65_552)
    var state = crypto_hash_sha256_state()
    crypto_hash_sha256_init(&state)
    var index: UInt64 = 0
    while true {
        var filled = 0
        while filled < sealed.count {
            let count = sealed.withUnsafeMutableBytes { read(source, $0.baseAddress! + filled, $0.count - filled) }
            guard count > 0 else { break }
            filled += count
        }
        guard filled > 16 else { break }
        crypto_hash_sha256_update(&state, sealed, UInt64(filled))
        var nonce = [UInt8](repeating: 0, count: 12)
        for byte in 0..<8 { nonce[4 + byte] = UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(byte))) }
        guard crypto_aead_chacha20poly1305_ietf_decrypt(&plain, nil, nil, sealed, UInt64(filled), nil, 0, nonce, key) == 0 else {
            fail("baseline chunk \(index) did not open")
        }
        plain.withUnsafeBytes { writeAll(sink, $0.baseAddress!, filled - 16) }
        index += 1
    }
}

// MARK: Runs

let arguments = CommandLine.arguments

// `AttachmentBench --save-baseline FILE OUT`: the baseline of Benchmarks/attachment-save-bench.sh.
// FILE is encrypted with libsodium (not timed); then, timed, its stored form is read in
// 64 KiB chunks, each opened with ChaCha20-Poly1305, the stored bytes hashed with SHA-256,
// and the plaintext written to OUT (created, never replaced) and fsynced: what saving a file
// costs without Sotto (no daemon, no socket, no base64, no format checks). Prints the ms.
if arguments.count == 4, arguments[1] == "--save-baseline" {
    Sodium.ensureInitialized()
    let key = SecureRandom.bytes(32)
    let sealedPath = arguments[3] + ".sealed"
    baselineEncrypt(arguments[2], sealedPath, key: key)
    let start = now()
    baselineDecrypt(sealedPath, key: key, to: arguments[3])
    let elapsed = now() - start
    unlink(sealedPath)
    print(String(format: "%.1f", elapsed * 1000))
    exit(0)
}
// `AttachmentBench --direct-baseline FILE OUT`: the baseline of Benchmarks/attachment-direct-bench.sh.
// Timed, end to end: FILE encrypted with libsodium per 64 KiB chunk and its stored bytes hashed
// (baselineEncrypt), written, fsynced; those bytes moved over a Unix stream socket (sendfile on
// one side, a thread; reads into a received file on the other, fsynced); the received bytes
// read, hashed, opened chunk by chunk and written to OUT, fsynced. What a file from one device
// to another costs without Sotto: no daemons, no push, no pieces, no format checks. Prints the ms.
if arguments.count == 4, arguments[1] == "--direct-baseline" {
    Sodium.ensureInitialized()
    let key = SecureRandom.bytes(32)
    let sealedPath = arguments[3] + ".sealed", receivedPath = arguments[3] + ".received"
    let start = now()
    baselineEncrypt(arguments[2], sealedPath, key: key)
    let sealed = openOrFail(sealedPath, O_RDONLY)
    if fsync(sealed) != 0 { fail("fsync of \(sealedPath)") }
    var pair: [Int32] = [0, 0]
    guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { fail("socketpair") }
    let (sending, receiving) = (pair[0], pair[1])
    let sender = Thread {
        var offset: off_t = 0
        while sendfile(sending, sealed, &offset, 1 << 20) > 0 {}
        close(sending)
    }
    sender.start()
    let received = openOrFail(receivedPath, O_WRONLY | O_CREAT | O_TRUNC)
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(receiving, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        buffer.withUnsafeBytes { writeAll(received, $0.baseAddress!, count) }
    }
    if fsync(received) != 0 { fail("fsync of \(receivedPath)") }
    close(received); close(receiving); close(sealed)
    baselineDecrypt(receivedPath, key: key, to: arguments[3])
    let elapsed = now() - start
    unlink(sealedPath); unlink(receivedPath)
    print(String(format: "%.1f", elapsed * 1000))
    exit(0)
}
guard arguments.count >= 2 else { fail("usage: AttachmentBench FILE [ROUNDS]") }
let input = arguments[1]
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 5 : 5
var info = stat()
guard stat(input, &info) == 0 else { fail("no \(input)") }
let size = Int(info.st_size)
let directory = String(cString: getenv("TMPDIR") ?? strdup("/tmp"))
let storedPath = "\(directory)/attachment-bench-\(getpid()).stored", basePath = "\(directory)/attachment-bench-\(getpid()).base"
defer { unlink(storedPath); unlink(basePath) }
Sodium.ensureInitialized()
let key = SecureRandom.bytes(32)

var times: [String: [Double]] = [:]
var reference: AttachmentReference?
for _ in 0..<rounds {
    var start = now()
    baselineEncrypt(input, basePath, key: key)
    times["baseline encrypt", default: []].append(now() - start)

    start = now()
    let source = openOrFail(input, O_RDONLY), sink = openOrFail(storedPath, O_WRONLY | O_CREAT | O_TRUNC)
    do {
        reference = try AttachmentFile.encrypt(from: source, size: size, to: sink).reference(name: "f", mediaType: "application/octet-stream")
    } catch { fail("\(error)") }
    close(source); close(sink)
    times["sotto encrypt", default: []].append(now() - start)

    start = now()
    baselineDecrypt(basePath, key: key)
    times["baseline decrypt", default: []].append(now() - start)

    start = now()
    let stored = openOrFail(storedPath, O_RDONLY), null = openOrFail("/dev/null", O_WRONLY)
    do { try AttachmentFile.decrypt(from: stored, reference: reference!, to: null) } catch { fail("\(error)") }
    close(stored); close(null)
    times["sotto decrypt", default: []].append(now() - start)
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let mib = Double(size) / 1_048_576
print("AttachmentBench: \(size) bytes, \(rounds) alternating rounds, medians")
for name in ["baseline encrypt", "sotto encrypt", "baseline decrypt", "sotto decrypt"] {
    let seconds = median(times[name]!)
    print("  " + name.padding(toLength: 17, withPad: " ", startingAt: 0) + String(format: " %8.1f ms  %7.1f MiB/s", seconds * 1000, mib / seconds))
}
let encryptRatio = median(times["baseline encrypt"]!) / median(times["sotto encrypt"]!)
let decryptRatio = median(times["baseline decrypt"]!) / median(times["sotto decrypt"]!)
print(String(format: "  throughput ratio sotto/baseline: encrypt %.2f×, decrypt %.2f× (goal ≥ 0.9)", encryptRatio, decryptRatio))
