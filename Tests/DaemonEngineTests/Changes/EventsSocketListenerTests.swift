@testable import DaemonEngine
import Foundation
import SottoWire
import Synchronization
import TestSupport
import Testing

/// The daemon's side of the events datagram: a real `events.sock` receiving what the worker
/// sends (`EventsDatagram.encode`) hands the seq to the change feed's callback; garbage still
/// pokes the feed (seq nil); the daemon's own datagrams are ignored.
@Suite("Events datagram: worker → EventsSocketListener")
struct EventsSocketListenerTests {
    @Test("the parsed seq reaches the callback; garbage arrives as nil; the daemon's own pid is skipped")
    func seqReachesCallback() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path + "/events.sock"
        let received = Mutex<[Int64?]>([])
        let listener = try EventsSocketListener.bind(path: path) { seq in received.withLock { $0.append(seq) } }
        listener.start()
        defer { listener.stop() }

        let worker = Int64(getpid()) + 1  // any pid but the daemon's own
        UnixSocket.sendDatagram(EventsDatagram(seq: 41, pid: Int64(getpid())).encode(), to: path)  // own: skipped
        UnixSocket.sendDatagram(EventsDatagram(seq: 42, pid: worker).encode(), to: path)
        UnixSocket.sendDatagram(Array("not a datagram".utf8), to: path)
        UnixSocket.sendDatagram(EventsDatagram(seq: 43, pid: worker).encode(), to: path)

        let deadline = MonotonicClock.nowNs() + 10_000_000_000
        while received.withLock({ $0.count }) < 3, MonotonicClock.nowNs() < deadline {
            _ = poll(nil, 0, 5)  // paces the check; the condition is what ends the wait
        }
        #expect(received.withLock { $0 } == [42, nil, 43])
    }
}
