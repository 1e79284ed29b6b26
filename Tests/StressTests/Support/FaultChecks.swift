import Foundation
import SharedStore
import SottoCrypto
import SottoWire
import TestSupport

/// What the send and explode fault loops (issue #21) check on the device whose disk failed:
/// the CLI's error said what happened, the file is sound, no outgoing message lost its pushes,
/// the daemon still answers, and when the device has gone quiet.
///
/// ```swift
/// let checks = FaultChecks(device: alice, error: "ENOSPC")
/// if let unclear = checks.unclear(result.stderr) { findings.append(unclear) }
/// findings += try checks.afterFault("step 3", conversation: trip)
/// ```
struct FaultChecks {
    let device: Device
    /// The errno armed: "EIO" or "ENOSPC".
    let error: String

    /// Nil when `stderr` names the failure as the user should read it: a full disk for
    /// ENOSPC, an I/O error for EIO; else what is wrong with it.
    func unclear(_ stderr: String) -> String? {
        let text = stderr.lowercased()
        let expected = error == "ENOSPC" ? ["disk full", "no space"] : ["i/o error"]
        return expected.contains(where: text.contains) ? nil : "stderr does not say \(expected[0]): \(stderr.prefix(200))"
    }

    /// The file is sound, every outgoing message of the conversation has its pushes, and the
    /// daemon is alive and answers `status`. One line per failure.
    func afterFault(_ label: String, conversation: String) throws -> [String] {
        var findings: [String] = []
        let integrity = try device.query("PRAGMA integrity_check").map { try $0.string(0) }.joined(separator: "; ")
        if integrity != "ok" { findings.append("\(label): integrity \(integrity.prefix(160))") }
        let pushless = try device.query("""
            SELECT count(*) FROM message m WHERE m.conversationId = ? AND m.isOutgoing = 1
              AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.messageId = m.id)
            """, [.text(conversation)])[0].int64(0)
        if pushless > 0 { findings.append("\(label): \(pushless) outgoing message(s) without outbox rows") }
        if !device.daemonIsRunning { findings.append("\(label): the daemon died: \(device.daemonLog.suffix(400))") }
        else if try device.cli(["status"]).status != 0 { findings.append("\(label): the daemon does not answer status") }
        return findings
    }

    /// How many messages with `text` the device stores in `conversation`, each with at least one push.
    func storedWithPushes(_ text: String, in conversation: String) throws -> Int {
        try device.storedTexts(conversation: conversation).filter { $0.text == text }.filter { message in
            try device.query("SELECT count(*) FROM outbox WHERE messageId = ?", [.text(message.id)])[0].int64(0) > 0
        }.count
    }

    /// Whether any message with `text` is stored, pushes or not.
    func storedAnyhow(_ text: String, in conversation: String) throws -> Bool {
        try device.storedTexts(conversation: conversation).contains { $0.text == text }
    }

    /// Polls until nothing is pending in the outbox and every text's push has come back
    /// delivered (the member's receipt is stored): no background write of the last step is
    /// left to meet the next step's fault.
    func waitQuiet(_ what: String) throws {
        try device.waitUntil("\(what): \(device.name)'s outbox settled", timeoutMs: 30_000) {
            try device.query("""
                SELECT count(*) FROM outbox o JOIN message m ON m.id = o.messageId
                WHERE o.state = 'pending' OR (o.state = 'sent' AND m.contentType = ?)
                """, [.text(ContentType.text)])[0].int64(0) == 0
        }
    }
}
