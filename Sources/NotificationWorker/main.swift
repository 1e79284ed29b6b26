import Glibc
import SottoWire

// sotto-notify: decrypt one push (or, with Accept=no, many), write it, ack, notify, exit; or
// serve a stored attachment file to a device that fetches it.
// Start-up is on the hot path of every push: nothing here loads Foundation (docs/adr/0001).

signal(SIGPIPE, SIG_IGN)
umask(0o077)
// A parent may hand down a mask that blocks SIGALRM and SIGTERM (a test runner's thread
// does): unblock everything so the 30 s deadline and systemd's stop signal take effect.
var unblocked = sigset_t()
sigemptyset(&unblocked)
sigprocmask(SIG_SETMASK, &unblocked, nil)

let options: WorkerOptions
do {
    options = try WorkerOptions.parse(CommandLine.arguments)
} catch {
    WorkerLog.error(error.message)
    print(WorkerOptions.usage)
    exit(64)  // EX_USAGE
}
if options.showHelp {
    print(WorkerOptions.usage)
    exit(0)
}

// Only what the worker reads: copying all of environ into a dictionary cost ~0.1 ms per push.
let environment = ProcessEnvironment.current(only: PushProcessor.environmentNames)
let processor = PushProcessor(options: options, environment: environment)

if options.payloadFromStdin {
    alarm(30)  // the extension's hard deadline; nothing is half-written if it fires
    let connection = PushConnection(readFD: STDIN_FILENO, writeFD: STDOUT_FILENO)
    let (first, rest) = connection.readFirstLine()
    let outcome = processor.handle(first) { hint in connection.readBody(length: Int(hint.length), after: rest) }
    connection.writeAck(outcome.ackLine)
    outcome.afterAck()
    exit(outcome.exitStatus)
}

switch SocketActivation.detect() {
case .connection(let readFD, let writeFD):
    alarm(30)
    let connection = PushConnection(readFD: readFD, writeFD: writeFD)
    let (first, rest) = connection.readFirstLine()
    if case .payload(let line) = first, let rest, PushBatchSession.opens(line, fd: readFD) {
        // sotto-relayd's batch: many pushes, one commit (docs/push-batch.md).
        PushBatchSession(connection: connection, processor: processor).run(startingWith: rest)
    } else if case .payload(let line) = first, AttachmentFetchExchange.opens(line) {
        // Another device fetches a file this one holds (docs/protocol/attachment-direct.md).
        StoredAttachmentServer(processor: processor, budgetMs: StoredAttachmentServer.connectionBudgetMs).serve(line, on: writeFD)
        connection.endAck()
    } else {
        let outcome = processor.handle(first) { hint in connection.readBody(length: Int(hint.length), after: rest) }
        connection.writeAck(outcome.ackLine)
        connection.endAck()
        outcome.afterAck()
    }
    connection.drain()
    close(writeFD)
    exit(0)
case .listeners(let fds):
    AcceptLoop(listeners: fds, idleTimeoutMs: Int64(options.idleTimeoutSeconds * 1000), handle: { read, readBody in
        processor.handle(read, readBody: readBody)
    }, handleBatch: { fd, rest in
        PushBatchSession(connection: PushConnection(readFD: fd, writeFD: fd), processor: processor).run(startingWith: rest)
    }, serveAttachment: { fd, line in
        StoredAttachmentServer(processor: processor, budgetMs: StoredAttachmentServer.sharedBudgetMs).serve(line, on: fd)
        shutdown(fd, Int32(SHUT_WR))
    }).run()
    exit(0)
case .none:
    WorkerLog.error("not socket-activated and no --payload -; see --help")
    print(WorkerOptions.usage)
    exit(64)
}
