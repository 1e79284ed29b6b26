import RelayTransport
import SottoCrypto
import SottoWire

/// `sotto-relayd`'s command line and environment. Hand-parsed, like the worker's: the
/// receiver stays lean (no Foundation, no ArgumentParser).
///
/// ```swift
/// let options = try RelaydOptions.parse(CommandLine.arguments, environment: env)
/// options.relay.url      // from --relay or SOTTO_RELAY
/// ```
struct RelaydOptions {
    var relay: RelayConfiguration
    var group: GroupDirectory
    var runtime: RuntimeDirectory
    /// How long the relay waits for an ack before redelivering (longer than the worker's 30 s).
    var ackWaitMs: Int64 = 40_000
    /// Redelivery delay after a retryable refusal: doubles per delivery from `retryMinMs`.
    var retryMinMs: Int64 = 1_000
    var retryMaxMs: Int64 = 60_000
    /// An identity missing from the keystore this long is gone: its consumer is deleted and
    /// its mailbox purged (a rename in progress must not purge a live mailbox).
    var goneAfterMs: Int64 = 10_000
    /// The mailbox stream's maximum age when this relayd creates it or adds the missing limit
    /// (docs/adr/0030). Only a test shortens it (`--test-mailbox-max-age-ms`).
    var mailboxMaxAgeMs: Int64 = MailboxStream.defaultMaxAgeMs
    /// The longest a push to a sleeping inbox waits on the relay: its mailbox holds no
    /// connection and is drained at a random moment within this of the last drain (docs/adr/0056).
    var sleepingDrainMs: Int64 = 60_000

    /// The environment variables read (directories, relay, credentials).
    static let environmentNames = ["SOTTO_GROUP_DIR", "XDG_DATA_HOME", "HOME", "SOTTO_RUNTIME_DIR", "XDG_RUNTIME_DIR",
                                   RelayConfiguration.relayVariable, RelayConfiguration.caVariable, RelayCredentials.credsVariable,
                                   RelayCredentials.userVariable, RelayCredentials.passwordVariable, RelaySigningKey.variable]

    enum Failure: Error {
        /// Bad arguments: exit 64 (EX_USAGE).
        case usage(String)
        /// Bad relay URL or credentials, or none configured: exit 78 (EX_CONFIG).
        case configuration(String)
        case help
    }

    static let usage = """
        usage: sotto-relayd [--relay nats://HOST:PORT | tls://HOST:PORT] [--ack-wait-ms MS]
                            [--retry-min-ms MS] [--retry-max-ms MS] [--gone-after-ms MS]
                            [--sleeping-drain-ms MS] [--test-mailbox-max-age-ms MS]

        Sotto's relay receiver: holds one durable consumer per identity in the keystore on
        the device's relay (NATS JetStream) and hands each message to push.sock, as a
        remote sender would; acks the relay only after the device stored it.

        Environment: SOTTO_RELAY (the relay, unless --relay), SOTTO_RELAY_CREDS (a NATS
        .creds file) or SOTTO_RELAY_USER + SOTTO_RELAY_PASSWORD, or SOTTO_RELAY_SIGNING_KEY
        (the relay's key for per-identity users, docs/relay.md), SOTTO_RELAY_CA (a PEM
        file of the CA a tls:// relay's certificate comes from), SOTTO_GROUP_DIR,
        SOTTO_RUNTIME_DIR. Exit status 78: malformed relay URL, credentials or CA file.

        Only the mailboxes of inboxes the daemon keeps awake hold a relay connection; each
        other one is drained by a short connection of its own at a random moment between
        half of --sleeping-drain-ms (default 60000) and all of it after its last drain.

        --ack-wait-ms (default 40000) becomes every consumer's AckWait on the relay, where
        the operator sees it: a value of your own marks all of this device's mailboxes.
        It is for tests; leave it at its default.

        --test-mailbox-max-age-ms is for tests only: the age limit (1000 ms to 30 days,
        default 30 days) given to the mailbox stream if this relayd creates it or adds
        the limit to a stream that has none.
        """

    static func parse(_ arguments: [String], environment: [String: String]) throws(Failure) -> RelaydOptions {
        var env = environment
        var ackWait: Int64?, retryMin: Int64?, retryMax: Int64?, goneAfter: Int64?, maxAge: Int64?, sleepingDrain: Int64?
        var index = 1
        func value(_ flag: String) throws(Failure) -> String {
            index += 1
            guard index < arguments.count else { throw .usage("\(flag) needs a value") }
            return arguments[index]
        }
        func milliseconds(_ flag: String) throws(Failure) -> Int64 {
            let text = try value(flag)
            guard let ms = Int64(text), (1...3_600_000).contains(ms) else {
                throw .usage("\(flag) takes milliseconds between 1 and 3600000")
            }
            return ms
        }
        while index < arguments.count {
            let argument = arguments[index]
            switch argument {
            case "--relay": env[RelayConfiguration.relayVariable] = try value(argument)
            case "--ack-wait-ms": ackWait = try milliseconds(argument)
            case "--retry-min-ms": retryMin = try milliseconds(argument)
            case "--retry-max-ms": retryMax = try milliseconds(argument)
            case "--gone-after-ms": goneAfter = try milliseconds(argument)
            case "--sleeping-drain-ms":
                sleepingDrain = try milliseconds(argument)
                guard sleepingDrain! >= 100 else { throw .usage("--sleeping-drain-ms takes milliseconds between 100 and 3600000") }
            case "--test-mailbox-max-age-ms":
                guard let ms = Int64(try value(argument)), (1_000...MailboxStream.defaultMaxAgeMs).contains(ms) else {
                    throw .usage("\(argument) takes milliseconds between 1000 and \(MailboxStream.defaultMaxAgeMs)")
                }
                maxAge = ms
            case "-h", "--help": throw .help
            default: throw .usage("unknown argument '\(argument)'")
            }
            index += 1
        }
        let relay: RelayConfiguration
        do {
            guard let configured = try RelayConfiguration.from(environment: env) else {
                throw Failure.configuration("no relay configured: set SOTTO_RELAY=nats://HOST:PORT (or pass --relay)")
            }
            relay = configured
        } catch let error as RelayError {
            throw .configuration(error.description)
        } catch let error as Failure {
            throw error
        } catch {
            throw .configuration("\(error)")
        }
        var options = RelaydOptions(relay: relay, group: GroupDirectory.resolve(explicit: nil, environment: env),
                                    runtime: RuntimeDirectory.resolve(environment: env))
        if let ackWait { options.ackWaitMs = ackWait }
        if let retryMin { options.retryMinMs = retryMin }
        if let retryMax { options.retryMaxMs = retryMax }
        if let goneAfter { options.goneAfterMs = goneAfter }
        if let maxAge { options.mailboxMaxAgeMs = maxAge }
        if let sleepingDrain { options.sleepingDrainMs = sleepingDrain }
        guard options.retryMinMs <= options.retryMaxMs else { throw .usage("--retry-min-ms is above --retry-max-ms") }
        return options
    }
}
