#if canImport(Glibc)
import Glibc
import DaemonStore
import SharedStore
import SottoCrypto
import SottoWire
#endif

/// The daemon's start-up quick check (docs/adr/0018) on databases of a realistic shape:
/// one conversation per 1,000 messages of ~200 B text, each with its change_log row. Prints
/// the file size, the check's time and its cost per MB, so the default budget can be read
/// off as a database size.
enum QuickCheckBench {
    static func run() throws {
        for messages in [10_000, 50_000, 200_000] {
            var template = Array("/tmp/sotto-qc-XXXXXX".utf8CString)
            guard mkdtemp(&template) != nil else { fatalError("mkdtemp") }
            let dir = template.withUnsafeBufferPointer { String(cString: $0.baseAddress!) }
            let path = dir + "/shared.sqlite"
            do {
                let conn = try SQLiteConnection.open(path: path, profile: .worker, create: true)
                try Migrator.migrate(conn)
                try fill(conn, messages: messages)
                try conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            }
            var info = stat()
            stat(path, &info)
            let megabytes = Double(info.st_size) / 1_048_576
            // A fresh connection with a cold page cache, as at daemon start (the OS cache is warm).
            let conn = try SQLiteConnection.open(path: path, profile: .worker)
            let start = MonotonicClock.nowNs()
            let outcome = IntegrityCheck.quick(conn, budgetMs: nil)
            let ms = Double(MonotonicClock.nowNs() - start) / 1e6
            print("quick_check \(String(messages).leftPadding(7)) messages \(String(format1(megabytes)).leftPadding(7)) MB "
                  + "\(String(format1(ms)).leftPadding(8)) ms \(String(format1(ms / megabytes)).leftPadding(6)) ms/MB  \(outcome)")
            for suffix in ["", "-wal", "-shm"] { unlink(path + suffix) }
            rmdir(dir)
        }
    }

    private static func fill(_ conn: SQLiteConnection, messages: Int) throws {
        try conn.immediateTransaction { () throws(StoreError) in
            var conversation = ""
            for index in 0..<messages {
                if index % 1000 == 0 {
                    let inbox = Hex.encode(SecureRandom.bytes(32))
                    conversation = Hex.encode(SecureRandom.bytes(16))
                    try conn.run("INSERT INTO inbox(inboxId, clientId, createdAt, lastActivityAt) VALUES (?, ?, 0, 0)",
                                 [.text(inbox), .text(SecureRandom.uuidV4())])
                    try conn.run("""
                        INSERT INTO conversation(id, inboxId, clientId, topic, name, creatorInboxId, createdAt, state)
                        VALUES (?, ?, '', ?, 'bench', ?, 0, 'active')
                        """, [.text(conversation), .text(inbox), .text(ProtocolIds.topic(conversationId: conversation)), .text(inbox)])
                }
                let id = Hex.encode(SecureRandom.bytes(16))
                try conn.run("""
                    INSERT INTO message(id, conversationId, senderInboxId, sentAt, receivedAt, contentType, content)
                    VALUES (?, ?, 'x', ?, ?, 'xmtp.org/text:1.0', ?)
                    """, [.text(id), .text(conversation), .integer(Int64(index)), .integer(Int64(index)),
                          .blob(Array(Hex.encode(SecureRandom.bytes(100)).utf8))])
                try conn.run("INSERT INTO change_log(kind, conversationId, entityId, writerPid, createdAt) VALUES ('messageInserted', ?, ?, 1, 0)",
                             [.text(conversation), .text(id)])
            }
        }
    }

    private static func format1(_ value: Double) -> String {
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(abs(tenths % 10))"
    }
}
