// AttachmentRelayBench FILE [ROUNDS]
//
// A file sent through a relay and saved on the other side (issue #35), transport part 1:
// encrypt FILE into its stored form, upload it to a real nats-server -js as pieces
// (RelayAttachmentTransfer), fetch it back checking each piece, and write the plaintext;
// against a baseline in the same process, rounds alternating, that does the same work
// without Sotto: ChaCha20-Poly1305 per 64 KiB chunk and SHA-256 with libsodium directly,
// the same number of raw JetStream publishes (each acked) to a plain stream and the same
// fetches by subject, straight through the C client. The ratio is what Sotto's transfer
// costs; goal ≥ 0.5. Also: the peak RSS the fetch adds to the process (VmHWM, reset through
// /proc/self/clear_refs before it), goal ≤ 16 MiB. Run through Benchmarks/attachment-relay-bench.sh.
import CNats
import CSodium
import Foundation
import Glibc
import RelayTransport
import SottoCrypto
import SottoWire
import TestSupport

func fail(_ text: String) -> Never {
    FileHandle.standardError.write(Data("AttachmentRelayBench: \(text)\n".utf8))
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

func statusKiB(_ field: String) -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ")[1]) ?? 0
    }
    return 0
}

func check(_ status: natsStatus, _ what: String) {
    guard status == NATS_OK else { fail("\(what): \(String(cString: natsStatus_GetText(status)))") }
}

func nonce(_ index: UInt64) -> [UInt8] {
    var nonce = [UInt8](repeating: 0, count: 12)
    for byte in 0..<8 { nonce[4 + byte] = UInt8(truncatingIfNeeded: index >> (56 - 8 * UInt64(byte))) }
    return nonce
}

// MARK: The baseline: libsodium and the C client, no Sotto

/// A plain stream `BENCH_RAW` on `bench.raw.>` and the calls the baseline makes on it.
final class RawRelay {
    var connection: OpaquePointer?
    var jetStream: OpaquePointer?

    init(url: String) {
        check(natsConnection_ConnectTo(&connection, url), "connect")
        var options = jsOptions()
        jsOptions_Init(&options)
        options.Wait = 10_000
        check(natsConnection_JetStream(&jetStream, connection, &options), "jetstream")
        var config = jsStreamConfig()
        jsStreamConfig_Init(&config)
        let name = strdup("BENCH_RAW"), subject = strdup("bench.raw.>")
        defer { free(name); free(subject) }
        config.Name = UnsafePointer(name)
        var subjects: [UnsafePointer<CChar>?] = [UnsafePointer(subject)]
        subjects.withUnsafeMutableBufferPointer { buffer in
            config.Subjects = buffer.baseAddress
            config.SubjectsLen = 1
            config.Storage = js_FileStorage
            var info: UnsafeMutablePointer<jsStreamInfo>?
            check(js_AddStream(&info, jetStream, &config, nil, nil), "add BENCH_RAW")
            jsStreamInfo_Destroy(info)
        }
    }

    func publish(_ bytes: [UInt8], subject: String) {
        var ack: UnsafeMutablePointer<jsPubAck>?
        let status = bytes.withUnsafeBytes { js_Publish(&ack, jetStream, subject, $0.baseAddress, Int32($0.count), nil, nil) }
        check(status, "raw publish")
        jsPubAck_Destroy(ack)
    }

    func get(_ subject: String) -> [UInt8] {
        var message: OpaquePointer?
        check(js_GetLastMsg(&message, jetStream, "BENCH_RAW", subject, nil, nil), "raw get")
        defer { natsMsg_Destroy(message) }
        return Array(UnsafeRawBufferPointer(start: natsMsg_GetData(message), count: Int(natsMsg_GetDataLength(message))))
    }

    func purge() { check(js_PurgeStream(jetStream, "BENCH_RAW", nil, nil), "raw purge") }
}

func baselineRound(_ input: String, _ stored: String, _ output: String, key: [UInt8], relay: RawRelay, round: Int) {
    // Encrypt and hash into the stored file.
    let source = openOrFail(input, O_RDONLY), sink = openOrFail(stored, O_RDWR | O_CREAT | O_TRUNC)
    var plain = [UInt8](repeating: 0, count: 65_536), sealed = [UInt8](repeating: 0, count: 65_552)
    var state = crypto_hash_sha256_state()
    crypto_hash_sha256_init(&state)
    var chunks: UInt64 = 0
    while true {
        let count = plain.withUnsafeMutableBytes { read(source, $0.baseAddress, $0.count) }
        guard count > 0 else { break }
        _ = crypto_aead_chacha20poly1305_ietf_encrypt(&sealed, nil, plain, UInt64(count), nil, 0, nil, nonce(chunks), key)
        crypto_hash_sha256_update(&state, sealed, UInt64(count + 16))
        sealed.withUnsafeBytes { writeAll(sink, $0.baseAddress!, count + 16) }
        chunks += 1
    }
    close(source)
    // Publish each sealed chunk, acked.
    var offset = 0
    for index in 0..<Int(chunks) {
        let count = pread(sink, &sealed, 65_552, off_t(offset))
        guard count > 16 else { fail("baseline short read") }
        relay.publish(Array(sealed[0..<count]), subject: "bench.raw.\(round).\(index)")
        offset += count
    }
    close(sink)
    // Fetch each, hash, open, write the plaintext.
    let out = openOrFail(output, O_WRONLY | O_CREAT | O_TRUNC)
    crypto_hash_sha256_init(&state)
    for index in 0..<Int(chunks) {
        let piece = relay.get("bench.raw.\(round).\(index)")
        crypto_hash_sha256_update(&state, piece, UInt64(piece.count))
        guard crypto_aead_chacha20poly1305_ietf_decrypt(&plain, nil, nil, piece, UInt64(piece.count), nil, 0, nonce(UInt64(index)), key) == 0 else {
            fail("baseline chunk \(index) did not open")
        }
        plain.withUnsafeBytes { writeAll(out, $0.baseAddress!, piece.count - 16) }
    }
    close(out)
    relay.purge()
}

// MARK: Sotto: AttachmentFile, RelayAttachmentTransfer, AttachmentDecryptor

struct SottoTimes { var encrypt = 0.0, upload = 0.0, fetch = 0.0, fetchAddedKiB = 0 }

func sottoRound(_ input: String, size: Int, _ stored: String, _ part: String, _ output: String, relay: RelayConnection) -> SottoTimes {
    var times = SottoTimes()
    var start = now()
    let source = openOrFail(input, O_RDONLY), sink = openOrFail(stored, O_RDWR | O_CREAT | O_TRUNC)
    let reference: AttachmentReference
    do { reference = try AttachmentFile.encrypt(from: source, size: size, to: sink).reference(name: "f", mediaType: "application/octet-stream") }
    catch { fail("\(error)") }
    close(source)
    times.encrypt = now() - start

    start = now()
    let id = Hex.encode(reference.id)
    do { try RelayAttachmentTransfer.upload(from: sink, storedLength: reference.length, id: id, over: relay) } catch { fail("\(error)") }
    close(sink)
    times.upload = now() - start

    unlink(part)
    let before = statusKiB("VmRSS")
    if let clear = fopen("/proc/self/clear_refs", "w") { fputs("5", clear); fclose(clear) }
    start = now()
    let partFd = openOrFail(part, O_RDWR | O_CREAT), out = openOrFail(output, O_WRONLY | O_CREAT | O_TRUNC)
    var decryptor = AttachmentDecryptor(reference)
    do {
        try RelayAttachmentTransfer.fetch(id: id, storedLength: reference.length, over: relay, into: partFd) { _, piece in
            try decryptor.consume(piece) { plain throws(AttachmentError) in writeAll(out, plain.baseAddress!, plain.count) }
        }
        try decryptor.finish()
    } catch { fail("\(error)") }
    fsync(partFd)
    close(partFd); close(out)
    times.fetch = now() - start
    times.fetchAddedKiB = statusKiB("VmHWM") - before
    do { try relay.deleteAttachment(id: id) } catch { fail("\(error)") }
    return times
}

// MARK: Runs

let arguments = CommandLine.arguments
guard arguments.count >= 2 else { fail("usage: AttachmentRelayBench FILE [ROUNDS]") }
let input = arguments[1]
let rounds = arguments.count > 2 ? Int(arguments[2]) ?? 3 : 3
var info = stat()
guard stat(input, &info) == 0 else { fail("no \(input)") }
let size = Int(info.st_size)
let directory = String(cString: getenv("TMPDIR") ?? strdup("/tmp"))
let stored = "\(directory)/relay-bench.stored", part = "\(directory)/relay-bench.part", output = "\(directory)/relay-bench.out"
Sodium.ensureInitialized()
let key = SecureRandom.bytes(32)

let server: NatsServer
do { server = try NatsServer.start(storeDirectory: directory + "/js") } catch { fail("nats-server: \(error)") }
defer { server.stop() }
let relay: RelayConnection
do {
    relay = try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url)))
    try relay.ensureAttachmentStream()
} catch { fail("\(error)") }
let raw = RawRelay(url: server.url)

var baseline: [Double] = [], sotto: [Double] = [], parts: [SottoTimes] = []
for round in 0..<rounds {
    var start = now()
    baselineRound(input, stored + ".base", output + ".base", key: key, relay: raw, round: round)
    baseline.append(now() - start)
    start = now()
    parts.append(sottoRound(input, size: size, stored, part, output, relay: relay))
    sotto.append(now() - start)
    guard FileManager.default.contentsEqual(atPath: input, andPath: output) else { fail("the saved file is not the file") }
}

func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
let mib = Double(size) / 1_048_576
print("AttachmentRelayBench: \(size) bytes through nats-server -js on loopback, \(rounds) alternating rounds, medians")
print(String(format: "  baseline (libsodium + raw JetStream)  %8.0f ms  %6.1f MiB/s", median(baseline) * 1000, mib / median(baseline)))
print(String(format: "  sotto (encrypt, upload, fetch+check)  %8.0f ms  %6.1f MiB/s", median(sotto) * 1000, mib / median(sotto)))
print(String(format: "    of which encrypt %.0f ms, upload %.0f ms, fetch %.0f ms",
             median(parts.map(\.encrypt)) * 1000, median(parts.map(\.upload)) * 1000, median(parts.map(\.fetch)) * 1000))
print(String(format: "  throughput ratio sotto/baseline: %.2f× (goal ≥ 0.5)", median(baseline) / median(sotto)))
let added = parts.map(\.fetchAddedKiB).max() ?? 0
print(String(format: "  peak RSS the fetch added: %.1f MiB (largest of the rounds; goal ≤ 16 MiB)", Double(added) / 1024))
