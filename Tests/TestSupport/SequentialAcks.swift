import Foundation
import SottoWire

/// For benchmarks: pushes sent one after another through a real push socket with a fresh
/// worker per connection (Accept=yes), and the milliseconds from connect to each ok ack.
///
/// ```swift
/// let ms = try SequentialAcks.latencies([(payload, nil)], worker: worker, socketPath: dir + "/bench.sock",
///                                       environment: fixture.environment)
/// ```
public enum SequentialAcks {
    public static func latencies(_ pushes: [(payload: [UInt8], body: [UInt8]?)], worker: String, socketPath: String,
                                 environment: [String: String]) throws -> [Double] {
        let server = try PushSocketServer.start(socketPath: socketPath, accept: true, command: [worker],
                                                environment: environment)
        defer { server.stop() }
        var out: [Double] = []
        for push in pushes {
            let t0 = MonotonicClock.nowNs()
            let ack = try PushClient.send(push.payload, body: push.body, to: socketPath)
            guard ack.contains("\"ok\":true") else { throw PushClient.Failure(message: ack) }
            out.append(Double(MonotonicClock.nowNs() - t0) / 1e6)
        }
        return out
    }
}
