import Foundation
import RelayTransport
import SharedStore
import Testing
import TestSupport

/// `SOTTO_RELAY_CA`, the private CA a `tls://` relay's certificate comes from, is checked as
/// strictly as a credentials file: a bad one is a clear error (sotto-relayd: exit 78) that
/// names the file, never its content.
@Suite("Relay CA file")
struct RelayCAFileTests {
    static let pemCertificate = "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----\n"

    /// Writes `content` with `mode` into a fresh file of `dir` and returns its path.
    static func file(_ dir: TemporaryDirectory, _ content: String, mode: Int = 0o644) -> String {
        let path = dir.path + "/\(UUID().uuidString).pem"
        FileManager.default.createFile(atPath: path, contents: Data(content.utf8), attributes: [.posixPermissions: mode])
        return path
    }

    static func configuration(_ environment: [String: String]) throws(RelayError) -> RelayConfiguration? {
        try RelayConfiguration.from(environment: ["SOTTO_RELAY": "tls://relay.example.org:4222"].merging(environment) { $1 })
    }

    @Test("a CA file made by openssl is accepted for a tls:// relay; no SOTTO_RELAY_CA means the system's CAs")
    func accepted() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-ca")
        defer { dir.remove() }
        let ca = try TestCertificateAuthority.make(named: "ok", in: dir.path)
        #expect(try Self.configuration(["SOTTO_RELAY_CA": ca.certificate])?.caFile == ca.certificate)
        #expect(try Self.configuration([:])?.caFile == nil)
        #expect(try Self.configuration(["SOTTO_RELAY_CA": ""])?.caFile == nil)
        // A bundle of several certificates (like /etc/ssl/certs/ca-certificates.crt) is fine too.
        let bundle = Self.file(dir, try String(contentsOfFile: ca.certificate, encoding: .utf8) + Self.pemCertificate)
        #expect(try Self.configuration(["SOTTO_RELAY_CA": bundle])?.caFile == bundle)
    }

    @Test("missing, relative, a directory, writable by others, empty, garbage, a private key, an unclosed block, a nats:// relay: refused")
    func refused() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-ca")
        defer { dir.remove() }
        let cases: [(String, [String: String])] = [
            ("cannot read", ["SOTTO_RELAY_CA": dir.path + "/missing.pem"]),
            ("not absolute", ["SOTTO_RELAY_CA": "ca.pem"]),
            ("not a regular file", ["SOTTO_RELAY_CA": dir.path]),
            ("writable by others", ["SOTTO_RELAY_CA": Self.file(dir, Self.pemCertificate, mode: 0o666)]),
            ("expected 1 to", ["SOTTO_RELAY_CA": Self.file(dir, "")]),
            ("no PEM certificate", ["SOTTO_RELAY_CA": Self.file(dir, "SECRETISH garbage \u{7f}\n")]),
            ("not UTF-8", ["SOTTO_RELAY_CA": Self.file(dir, "") + "x"]),
            ("private key", ["SOTTO_RELAY_CA": Self.file(dir, Self.pemCertificate
                + "-----BEGIN PRIVATE KEY-----\nSECRETISH\n-----END PRIVATE KEY-----\n")]),
            ("not closed", ["SOTTO_RELAY_CA": Self.file(dir, "-----BEGIN CERTIFICATE-----\nMIIB\n")]),
            ("is not tls://", ["SOTTO_RELAY_CA": Self.file(dir, Self.pemCertificate), "SOTTO_RELAY": "nats://127.0.0.1:4222"]),
        ]
        // Not UTF-8: bytes no decoder accepts.
        let binary = cases[6].1["SOTTO_RELAY_CA"]!
        FileManager.default.createFile(atPath: binary, contents: Data([0xff, 0xfe, 0x00, 0x80]), attributes: [.posixPermissions: 0o644])
        for (expected, environment) in cases {
            do {
                _ = try Self.configuration(environment)
                Issue.record("accepted: \(environment)")
            } catch {
                #expect(error.isConfiguration)
                #expect(error.description.hasPrefix("malformed relay CA file"), "\(error)")
                #expect(error.description.contains(expected), "\(expected): \(error)")
                #expect(!error.description.contains("SECRETISH"))
            }
        }
    }

    @Test("sotto-relayd: a bad SOTTO_RELAY_CA is exit 78 naming the file; one OpenSSL cannot parse is exit 78 at the first connect")
    func relaydExits() throws {
        let dir = try TemporaryDirectory(prefix: "sotto-ca")
        defer { dir.remove() }
        let base = ["SOTTO_GROUP_DIR": dir.path + "/group", "SOTTO_RUNTIME_DIR": dir.path + "/run",
                    "SOTTO_RELAY": "tls://127.0.0.1:1"]
        let unparsable = Self.file(dir, "-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n")
        for ca in [dir.path + "/missing.pem", unparsable] {
            let relayd = try LoggedProcess.launch(try builtExecutable("sotto-relayd"), [],
                                                  environment: base.merging(["SOTTO_RELAY_CA": ca]) { $1 })
            // A relayd that took the file would retry the unreachable relay forever.
            let exited = (try? waitUntil("sotto-relayd exits", timeout: 30) { !relayd.isRunning }) != nil
            if !exited { relayd.signal(SIGKILL) }
            let status = relayd.waitForExit()
            #expect(exited && status == 78, "\(ca): \(relayd.output)")
            #expect(relayd.output.contains { $0.contains("malformed relay CA file:") && $0.contains(ca) }, "\(relayd.output)")
        }
    }
}
