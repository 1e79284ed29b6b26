import Foundation
import RelayTransport
import TestSupport

/// A relay in NATS operator mode made the way docs/relay.md tells its operator to: the real
/// `scripts/relay-operator.py init` (operator, accounts, the scoped signing key for devices,
/// nats.conf), a real nats-server on that configuration, then `streams` with the admin user.
///
/// ```swift
/// let setup = try RelayOperatorSetup.make(directory: tmp.path + "/operator")
/// let server = try setup.startServer(storeDirectory: tmp.path + "/jetstream")
/// setup.signingKeyPath   // SOTTO_RELAY_SIGNING_KEY for the devices
/// ```
struct RelayOperatorSetup {
    let directory: String
    var configPath: String { directory + "/nats.conf" }
    var signingKeyPath: String { directory + "/device-signing.key" }
    var adminCredsPath: String { directory + "/admin.creds" }

    static var script: String { PackagePaths.root.appendingPathComponent("scripts/relay-operator.py").path }

    static func make(directory: String) throws -> RelayOperatorSetup {
        try run([script, "init", directory])
        return RelayOperatorSetup(directory: directory)
    }

    /// A nats-server on the set-up's configuration, with the streams made by the admin.
    func startServer(storeDirectory: String, monitoring: Bool = false) throws -> NatsServer {
        let server = try NatsServer.prepare(storeDirectory: storeDirectory, extraArguments: ["-c", configPath],
                                            monitoring: monitoring)
        try server.restart()
        try createStreams(server)
        return server
    }

    /// `streams`: the mailbox and body streams, made by the admin on the running relay.
    func createStreams(_ server: NatsServer) throws {
        try Self.run([Self.script, "streams", directory, server.url])
    }

    /// The devices' configuration: the relay URL and the signing key.
    func deviceConfiguration(_ server: NatsServer) throws -> RelayConfiguration {
        RelayConfiguration(url: try RelayURL.parse(server.url),
                           credentials: .signingKey(try RelaySigningKey.load(path: signingKeyPath)))
    }

    /// The operator's own view (the admin user: no limits), named `test-admin`.
    func adminConnection(_ server: NatsServer) throws -> RelayConnection {
        var options = RelayConnection.Options()
        options.name = "test-admin"
        return try RelayConnection.connect(RelayConfiguration(url: try RelayURL.parse(server.url),
                                                              credentials: .credsFile(path: adminCredsPath)), options: options)
    }

    private static func run(_ arguments: [String]) throws {
        let process = try LoggedProcess.launch("/usr/bin/python3", arguments, environment: ["PATH": "/usr/bin:/bin"])
        let status = process.waitForExit()
        guard status == 0 else {
            throw RelayRigFailure("\(arguments.dropFirst().prefix(2).joined(separator: " ")) exited \(status): \(process.output.suffix(5))")
        }
    }
}
