import Glibc
import SharedStore
import SottoCrypto
import SottoWire

/// What handling a batch produced: one ack per push, in order, and the work to do after the
/// acks are written (one datagram, the notifications, the WAL reset).
///
/// ```swift
/// let outcome = processor.handle(batch: lines)
/// connection.writeAck(outcome.ackLines)
/// outcome.afterAck()
/// ```
struct PushBatchOutcome {
    let acks: [PushAck]
    let afterAck: () -> Void

    /// `PushBatchExchange.acceptedLine`, then one §2 ack line per push.
    var ackLines: String {
        var text = String(decoding: PushBatchExchange.acceptedLine, as: UTF8.self) + "\n"
        for ack in acks { text += String(decoding: ack.encodeLine(), as: UTF8.self) }
        return text
    }
}

extension PushProcessor {
    // MARK: - A batch: many pushes, one commit (docs/adr/0027)

    /// Stores the pushes of one batch with one transaction and one commit, with each push's
    /// own ack exactly as if it had come alone:
    /// - a push refused for good (garbage, a bad signature, an unknown sender…) gets its own
    ///   error ack and nothing of it is written (its write runs in a SAVEPOINT); the others
    ///   are stored;
    /// - a duplicate, also of an earlier push in the same batch, is `ok, duplicate:true`;
    /// - after the first push that must be retried (busy, timeout, internal), no later push is
    ///   written: each gets `busy`, so a sender's order holds when the relay redelivers;
    /// - a commit that fails turns every ok of the batch into that failure's error.
    /// Every ok is sent only after the one commit (synchronous=FULL) returned.
    func handle(batch lines: [PushRead], deadlineMs: Int64 = 15_000) -> PushBatchOutcome {
        let startedMs = MonotonicClock.nowMs()
        var acks: [PushAck?] = Array(repeating: nil, count: lines.count)
        var opened: [(index: Int, push: OpenedPush)] = []
        var firstRetry: Int?

        // Open and verify each push (no database writes), in order.
        for (index, line) in lines.enumerated() {
            if MonotonicClock.nowMs() - startedMs > deadlineMs {
                firstRetry = index
                acks[index] = .error(PushError(.busy, "the batch ran out of time; not stored, retry later"))
                break
            }
            if case .payload(let bytes) = line {
                switch open(bytes) {
                case .success(let push): opened.append((index, push))
                case .failure(let error): acks[index] = .error(error)
                }
            } else {
                acks[index] = line.refusal.map { .error($0) }
            }
            if case .error(let error)? = acks[index], error.code.retry {
                firstRetry = index
                break
            }
        }
        if let firstRetry { Self.holdBack(&acks, after: firstRetry) }
        opened.removeAll { firstRetry != nil && $0.index > firstRetry! }

        var stored: [StoredPush] = []
        if !opened.isEmpty {
            if let refusal = storageRefusal() {
                for (index, _) in opened { acks[index] = refusal.ack }
            } else {
                stored = write(opened, into: &acks)
            }
        }
        let final = acks.map { $0 ?? .error(PushError(.internal, "not handled")) }
        WorkerLog.info("batch of \(lines.count): \(stored.count) stored, "
                       + "\(final.filter { if case .ok = $0 { true } else { false } }.count) ok")
        return PushBatchOutcome(acks: final) { [stored] in self.announce(stored) }
    }

    /// Writes the opened pushes in one IMMEDIATE transaction, each in a SAVEPOINT of it;
    /// fills in their acks and returns what was written, in order.
    private func write(_ opened: [(index: Int, push: OpenedPush)], into acks: inout [PushAck?]) -> [StoredPush] {
        var outcomes: [(index: Int, push: OpenedPush, outcome: IncomingWriteOutcome)] = []
        var pending = acks
        do {
            let conn = try database()
            try conn.immediateTransaction { () throws(IncomingWriteError) in
                for (index, push) in opened {
                    do throws(IncomingWriteError) {
                        // Nested: a SAVEPOINT, rolled back alone if this push is refused.
                        let outcome = try conn.immediateTransaction { () throws(IncomingWriteError) in
                            try write(push, on: conn)
                        }
                        outcomes.append((index, push, outcome))
                    } catch {
                        let ack = rejected(error).ack
                        pending[index] = ack
                        if case .error(let refusal) = ack, refusal.code.retry {
                            Self.holdBack(&pending, after: index)
                            break
                        }
                    }
                }
                CrashPoint.reach("batch.beforeCommit")
            }
            CrashPoint.reach("batch.committed")
        } catch let error as IncomingWriteError {
            let failure = rejected(error).ack
            for (index, _) in opened { acks[index] = failure }
            return []
        } catch let error as StoreError {
            let failure = rejected(.store(error)).ack
            for (index, _) in opened { acks[index] = failure }
            return []
        } catch {
            for (index, _) in opened { acks[index] = .error(PushError(.internal, "unexpected error")) }
            return []
        }
        acks = pending
        var stored: [StoredPush] = []
        for (index, push, outcome) in outcomes {
            let messageId = push.message.id
            switch outcome {
            case .duplicate:
                WorkerLog.info("push duplicate message=\(messageId)")
                acks[index] = .ok(messageId: messageId, duplicate: true)
            case .written(let receipt):
                WorkerLog.info("push stored message=\(messageId) seq=\(receipt.seq)")
                acks[index] = .ok(messageId: messageId, duplicate: false)
                stored.append(StoredPush(receipt: receipt, content: push.content))
            }
        }
        return stored
    }

    /// Every push after `index` that has no ack yet gets `busy`: it is not written, so the
    /// one before it can be retried first and a sender's order holds.
    private static func holdBack(_ acks: inout [PushAck?], after index: Int) {
        for later in (index + 1)..<max(index + 1, acks.count) where acks[later] == nil || isOk(acks[later]) {
            acks[later] = .error(PushError(.busy, "an earlier push of this batch must be retried first; not stored"))
        }
    }

    private static func isOk(_ ack: PushAck?) -> Bool {
        if case .ok? = ack { return true }
        return false
    }
}
