import Glibc
import RelayTransport
import SottoWire

// sotto-relayd: the device's relay receiver (docs/adr/0026). Lean on purpose: no Foundation,
// no NIO, no GRDB; it never opens the database or an identity (the worker does both).

signal(SIGPIPE, SIG_IGN)
umask(0o077)

let options: RelaydOptions
do {
    options = try RelaydOptions.parse(CommandLine.arguments,
                                      environment: ProcessEnvironment.current(only: RelaydOptions.environmentNames))
} catch .help {
    print(RelaydOptions.usage)
    exit(0)
} catch .usage(let message) {
    RelaydLog.error(message)
    print(RelaydOptions.usage)
    exit(64)  // EX_USAGE
} catch .configuration(let message) {
    RelaydLog.error(message)
    exit(RelayError.configurationExitStatus)
}

ThreadStacks.setDefault(bytes: ThreadStacks.relaydBytes)
Receiver(options: options, stops: StopSignals.install()).run()
