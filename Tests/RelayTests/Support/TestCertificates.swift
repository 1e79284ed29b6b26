import Foundation
import TestSupport

/// A private certificate authority made with `openssl` in a test's directory, and server
/// certificates it issues: what a relay operator with their own CA hands out.
///
/// ```swift
/// let ca = try TestCertificateAuthority.make(named: "good", in: dir.path)
/// let server = try ca.issue(named: "relay", altNames: "IP:127.0.0.1,DNS:localhost")
/// // nats-server --tls --tlscert server.certificate --tlskey server.key; SOTTO_RELAY_CA=ca.certificate
/// ```
struct TestCertificateAuthority {
    struct Issued {
        let certificate: String
        let key: String
    }

    let name: String
    let directory: String
    var certificate: String { directory + "/\(name)-ca.pem" }
    var key: String { directory + "/\(name)-ca.key" }

    static let openssl = "/usr/bin/openssl"

    static func make(named name: String, in directory: String) throws -> TestCertificateAuthority {
        let ca = TestCertificateAuthority(name: name, directory: directory)
        try run(["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                 "-keyout", ca.key, "-out", ca.certificate, "-days", "2", "-subj", "/CN=Sotto test CA \(name)",
                 "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"])
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: ca.certificate)
        return ca
    }

    /// A server certificate for `altNames` (openssl's subjectAltName syntax), signed by this CA.
    func issue(named server: String, altNames: String) throws -> Issued {
        let base = directory + "/\(name)-\(server)"
        try Self.run(["req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                      "-keyout", base + ".key", "-out", base + ".csr", "-subj", "/CN=\(server)"])
        let extensions = base + ".ext"
        try "subjectAltName=\(altNames)\nextendedKeyUsage=serverAuth\n".write(toFile: extensions, atomically: true, encoding: .utf8)
        try Self.run(["x509", "-req", "-in", base + ".csr", "-CA", certificate, "-CAkey", key,
                      "-set_serial", String(UInt32.random(in: 1...UInt32.max)), "-days", "2",
                      "-extfile", extensions, "-out", base + ".pem"])
        return Issued(certificate: base + ".pem", key: base + ".key")
    }

    private static func run(_ arguments: [String]) throws {
        let result = try ChildProcess.run(openssl, arguments, environment: ["PATH": "/usr/bin:/bin"])
        guard result.status == 0 else {
            throw RelayRigFailure("openssl \(arguments.prefix(2).joined(separator: " ")) exited \(result.status): \(result.stderr)")
        }
    }
}
