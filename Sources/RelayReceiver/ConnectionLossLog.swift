import Synchronization

/// One log line when the relay goes away and one when it is back, however many identity
/// connections (docs/adr/0044) notice it: a relay restart with 1,000 identities is two
/// lines, not 2,000. A connection relayd closes itself (a retired identity, the stop) is no
/// loss. Called on the C client's threads.
///
/// ```swift
/// let losses = ConnectionLossLog()
/// let link = ConnectionLossLog.Link()   // one per connection
/// losses.lost(link)      // "relay connection lost; reconnecting" (the first of many)
/// losses.back(link)      // "relay reconnected" (the last of them)
/// losses.closing(link)   // before closing it: its events are ignored from now on
/// ```
final class ConnectionLossLog: Sendable {
    final class Link: Sendable {
        fileprivate let state = Mutex((closing: false, down: false))
    }

    private let down = Mutex(0)

    func lost(_ link: Link) {
        let first = link.state.withLock { state in
            guard !state.closing, !state.down else { return false }
            state.down = true
            return down.withLock { count in count += 1; return count == 1 }
        }
        if first { RelaydLog.warning("relay connection lost; reconnecting") }
    }

    func back(_ link: Link) {
        let last = link.state.withLock { state in
            guard state.down else { return false }
            state.down = false
            return down.withLock { count in count -= 1; return count == 0 }
        }
        if last { RelaydLog.info("relay reconnected") }
    }

    func closing(_ link: Link) {
        link.state.withLock { state in
            state.closing = true
            if state.down {
                state.down = false
                down.withLock { $0 -= 1 }
            }
        }
    }
}
