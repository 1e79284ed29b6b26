// sotto-store-probe GROUP_DIR COUNT
//
// A test helper: opens the group directory's database as the worker does (raw SQLite, worker
// profile, SOTTO_BUSY_TIMEOUT_MS honoured), prints "ready", then writes COUNT messages from
// the first non-creator member (else the creator) of the first conversation, each through
// IncomingMessageWriter in its own BEGIN IMMEDIATE transaction, and prints one summary line:
//   written=N duplicate=D busy=B failed=F
// Exit status: 0 when all COUNT were written, 3 when any write was busy, 1 otherwise.
import Glibc
import SharedStore
import SottoCrypto
import SottoWire

func say(_ line: String) {
    print(line)
    fflush(nil)   // all streams: `stdout` is a global var Swift 6 refuses
}

let arguments = CommandLine.arguments
guard arguments.count == 3, let count = Int(arguments[2]), count >= 0 else {
    say("usage: sotto-store-probe GROUP_DIR COUNT")
    exit(2)
}
let directory = GroupDirectory(path: arguments[1])
let profile = ConnectionProfile.worker(environment: ProcessEnvironment.current())

let conn: SQLiteConnection
let target: (conversation: DBConversation, sender: DBMember)
do {
    conn = try SQLiteConnection.open(path: directory.databasePath, profile: profile)
    try SchemaCheck.verify(conn)
    guard let conversation = try conn.queryOne("SELECT id FROM conversation ORDER BY id LIMIT 1")
        .flatMap({ row throws(StoreError) in try ConversationRepository.find(id: row.string(0), on: conn) }) else {
        say("error=no-conversation")
        exit(1)
    }
    let members = try MemberRepository.members(of: conversation.id, on: conn)
    guard let sender = members.first(where: { $0.role == .member }) ?? members.first else {
        say("error=no-member")
        exit(1)
    }
    target = (conversation, sender)
} catch {
    say("error=open \(error)")
    exit(1)
}

say("ready pid=\(getpid())")

var written = 0, duplicate = 0, busy = 0, failed = 0
for index in 0..<count {
    let message = IncomingMessage(
        id: Hex.encode(SecureRandom.bytes(16)), conversationId: target.conversation.id,
        senderInboxId: target.sender.inboxId, senderPublicKey: target.sender.publicKey,
        sentAtMs: WallClock.nowMs(), contentType: "xmtp.org/text:1.0",
        content: Array("probe \(getpid()) #\(index)".utf8), fallback: nil, kind: .stored(referenceId: nil))
    do {
        let outcome = try conn.immediateTransaction { () throws(IncomingWriteError) -> IncomingWriteOutcome in
            try IncomingMessageWriter.write(message, recipientInboxId: target.conversation.inboxId,
                                            topic: target.conversation.topic, now: WallClock.nowMs(), on: conn)
        }
        if case .duplicate = outcome { duplicate += 1 } else { written += 1 }
    } catch .store(.busy) {
        busy += 1
    } catch {
        failed += 1
        say("error=\(error.protocolCode) \(error)")
    }
}

say("written=\(written) duplicate=\(duplicate) busy=\(busy) failed=\(failed)")
exit(written == count ? 0 : (busy > 0 ? 3 : 1))
