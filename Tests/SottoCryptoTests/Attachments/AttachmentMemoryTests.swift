import Foundation
import SottoWire
import TestSupport
import Testing

/// Peak RSS of a real process (`sotto-attachment-probe`) decrypting a 1 MiB and a 100 MiB
/// stored file: the decryptor holds one chunk, so the 100 MiB run may not use more than the
/// 1 MiB one beyond noise (issue #35: the fetching process grows ≤ 16 MiB; here ≤ 1 MiB).
@Suite("Attachment memory", .serialized)
struct AttachmentMemoryTests {
    @Test("Decrypting 100 MiB peaks where decrypting 1 MiB does")
    func constantMemory() throws {
        let probe = try builtExecutable("sotto-attachment-probe")
        let temp = try TemporaryDirectory()
        defer { temp.remove() }
        var peaks: [Int: (start: Int, peak: Int)] = [:]
        for size in [1 << 20, 104_857_600] {
            let stored = temp.path + "/stored-\(size)"
            let reference = try run(probe, ["encrypt", String(size), stored])
            let line = try run(probe, ["decrypt", stored, reference, "/dev/null"])
            let fields = Dictionary(uniqueKeysWithValues: line.split(separator: " ").compactMap { field -> (String, Int)? in
                let parts = field.split(separator: "=")
                return parts.count == 2 ? (String(parts[0]), Int(parts[1]) ?? -1) : nil
            })
            peaks[size] = (try #require(fields["rss_start_kib"]), try #require(fields["rss_peak_kib"]))
            try FileManager.default.removeItem(atPath: stored)
        }
        let small = try #require(peaks[1 << 20]), large = try #require(peaks[104_857_600])
        print("attachment probe peak RSS: 1 MiB \(small.peak) KiB (start \(small.start)), 100 MiB \(large.peak) KiB (start \(large.start))")
        #expect(large.peak - small.peak <= 1024, "100 MiB peaked \(large.peak) KiB, 1 MiB \(small.peak) KiB")
        #expect((large.peak - large.start) - (small.peak - small.start) <= 1024, "100 MiB grew more than 1 MiB did")
        // The bound for a fetching process.
        #expect(large.peak - large.start <= 16 * 1024, "decrypting 100 MiB grew \(large.peak - large.start) KiB")
    }

    private func run(_ executable: String, _ arguments: [String]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "\(arguments[0]) exited \(process.terminationStatus)")
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
