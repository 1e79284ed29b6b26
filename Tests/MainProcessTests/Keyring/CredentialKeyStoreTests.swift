import Foundation
import SottoCrypto
import SottoWire
import Testing
import TestSupport

/// `SOTTO_KEY_STORE=credential` (docs/adr/0054) on a real daemon: the key is the systemd
/// credential `sotto-keystore-key`, never a key file. Missing or garbage: exit 78 naming what
/// is wrong, and no key made. (Under a real `systemd --user`: CredentialUserServiceTests.)
@Suite("Master key: the systemd credential")
struct CredentialKeyStoreTests {
    @Test("no credentials, no sotto-keystore-key among them, or garbage in it: exit 78 naming it, no key file", arguments: [
        (nil as [UInt8]?, "received no credentials"), ([], "is missing"), (Array("not a key".utf8), "not a 32-byte key"),
    ])
    func refusals(content: [UInt8]?, reason: String) throws {
        let tmp = try TemporaryDirectory(prefix: "credential-key")
        defer { tmp.remove() }
        var environment = ["SOTTO_GROUP_DIR": tmp.path + "/group", "SOTTO_RUNTIME_DIR": tmp.path + "/run", "SOTTO_KEY_STORE": "credential"]
        if let content {
            let credentials = tmp.path + "/credentials"
            try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
            if !content.isEmpty { try Self.writeCredential(content, in: credentials) }
            environment["CREDENTIALS_DIRECTORY"] = credentials
        }
        let result = try ChildProcess.run(try builtExecutable("sotto"), ["daemon"], environment: environment)
        #expect(result.status == 78, "exit \(result.status): \(result.stderr)")
        #expect(result.stderr.contains(reason), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: tmp.path + "/group/keystore/master.key"))
    }

    @Test("a 32-byte credential: the daemon serves, status names the credential, identities open with it, no key file")
    func servesWithTheCredential() throws {
        let tmp = try TemporaryDirectory(prefix: "credential-key")
        let credentials = tmp.path + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
        try Self.writeCredential(SecureRandom.bytes(32), in: credentials)
        let device = try Device.start("carol", in: tmp.path,
                                      environment: ["SOTTO_KEY_STORE": "credential", "CREDENTIALS_DIRECTORY": credentials])
        defer { device.stop() }
        _ = try device.json(["new", "--name", "Trip"])
        let status = try device.cli(["status"])
        #expect(status.stdout.contains("from the systemd credential \(Keystore.credentialName)"), "\(status.stdout)")
        #expect(!FileManager.default.fileExists(atPath: device.group.keystorePath + "/master.key"))
        let keystore = try Keystore(directory: device.group.keystorePath, environment: ["CREDENTIALS_DIRECTORY": credentials])
        let audit = try keystore.audit()
        #expect(audit.damaged.isEmpty && audit.openable >= 1, "\(audit)")
    }

    /// As systemd leaves a credential: readable by its owner only.
    static func writeCredential(_ bytes: [UInt8], in directory: String) throws {
        let path = directory + "/" + Keystore.credentialName
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        #expect(chmod(path, 0o400) == 0)
    }
}
