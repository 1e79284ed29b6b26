import Glibc
import SottoWire

/// Posts `org.freedesktop.Notifications.Notify` on the user's session bus through sd-bus
/// (loaded on first use, see `SDBus`). Called after the ack is written, so the sender never
/// waits on it. The call is sent with no reply expected and only flushed to the bus: a slow
/// or absent notification server must never hold the worker (under Accept=no it would
/// throttle storage to one push per reply timeout; docs/adr/0013). A missing bus is
/// reported and otherwise ignored. The bus connection is opened on the first notification
/// and kept for the process (an Accept=no worker posts many).
///
/// The one call that waits is `GetCapabilities`, once per connection and for at most
/// `capabilitiesTimeoutUs`: whether the server reads markup decides whether the body is
/// escaped (`NotificationServerText`, docs/adr/0062); a server that does not answer in time
/// is taken to read it.
///
/// ```swift
/// let notifier = DesktopNotifier()
/// notifier.post(summary: "Book club", body: "see you at 7")
/// ```
final class DesktopNotifier {
    /// How long the capabilities may take: a server answers in a millisecond; a hung one
    /// costs this once per process, after the ack.
    static let capabilitiesTimeoutUs: UInt64 = 1_000_000

    private var sd: SDBus?
    private var bus: OpaquePointer?
    /// What the server on `bus` said it supports; asked on the connection's first post.
    private var capabilities: NotificationCapabilities?

    deinit {
        if let sd, let bus { _ = sd.flushCloseUnref(bus) }
    }

    enum Outcome: Equatable {
        /// Written to the bus; whether a server shows it is not waited for.
        case sent
        case noBus
        /// The session bus's socket does not exist: libsystemd was not loaded.
        case noBusSocket(String)
        case failed(String)
    }

    @discardableResult
    func post(summary: String, body: String, category: String = "im.received") -> Outcome {
        if sd == nil, let path = SessionBusAddress.missingSocket(getenv: { getenv($0).map { String(cString: $0) } }) {
            return .noBusSocket(path)
        }
        // A libsystemd that does not load (not installed; or, for this static worker, a libc6
        // upgraded since it was built: docs/adr/0055) is said, not taken for "no bus".
        guard let sd = sd ?? SDBus.load() else { return .failed("libsystemd not loaded: \(SDBus.loadError())") }
        self.sd = sd
        guard let bus = bus ?? openBus(sd) else { return .noBus }
        let capabilities = self.capabilities ?? askCapabilities(sd: sd, bus: bus)
        self.capabilities = capabilities
        let shown = NotificationServerText.make(summary: summary, body: body, capabilities: capabilities)
        let outcome = send(summary: shown.summary, body: shown.body, category: category, sd: sd, bus: bus)
        if outcome != .sent {   // a broken connection is not reused
            _ = sd.flushCloseUnref(bus)
            self.bus = nil
            self.capabilities = nil
        }
        return outcome
    }

    private func openBus(_ sd: SDBus) -> OpaquePointer? {
        var busPointer: OpaquePointer?
        guard sd.openUser(&busPointer) >= 0, let opened = busPointer else { return nil }
        bus = opened
        return opened
    }

    /// `org.freedesktop.Notifications.GetCapabilities`, waited for up to `capabilitiesTimeoutUs`.
    private func askCapabilities(sd: SDBus, bus: OpaquePointer) -> NotificationCapabilities {
        var messagePointer: OpaquePointer?
        guard sd.newMethodCall(bus, &messagePointer, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                               "org.freedesktop.Notifications", "GetCapabilities") >= 0,
              let message = messagePointer else { return .unanswered }
        defer { _ = sd.messageUnref(message) }
        var replyPointer: OpaquePointer?
        guard sd.call(bus, message, Self.capabilitiesTimeoutUs, nil, &replyPointer) >= 0, let reply = replyPointer else {
            return .unanswered
        }
        defer { _ = sd.messageUnref(reply) }
        return NotificationCapabilities(names: sd.readStrings(reply))
    }

    private func send(summary: String, body: String, category: String, sd: SDBus, bus: OpaquePointer) -> Outcome {

        var messagePointer: OpaquePointer?
        let created = sd.newMethodCall(bus, &messagePointer, "org.freedesktop.Notifications",
                                       "/org/freedesktop/Notifications", "org.freedesktop.Notifications", "Notify")
        guard created >= 0, let message = messagePointer else { return .failed("new_method_call: \(-created)") }
        defer { _ = sd.messageUnref(message) }

        // Notify(s app_name, u replaces_id, s app_icon, s summary, s body, as actions,
        //        a{sv} hints, i expire_timeout)
        let steps: [() -> Int32] = [
            { sd.append(message, string: "Sotto") },
            { sd.append(message, "u", UInt32(0)) },
            { sd.append(message, string: "") },
            { sd.append(message, string: summary) },
            { sd.append(message, string: body) },
            { sd.open(message, "a", "s") }, { sd.closeContainer(message) },
            { sd.open(message, "a", "{sv}") },
            { sd.open(message, "e", "sv") },
            { sd.append(message, string: "category") },
            { sd.open(message, "v", "s") },
            { sd.append(message, string: category) },
            { sd.closeContainer(message) }, { sd.closeContainer(message) }, { sd.closeContainer(message) },
            { sd.append(message, "i", Int32(-1)) },
        ]
        for step in steps {
            let result = step()
            guard result >= 0 else { return .failed("append: \(-result)") }
        }

        let noReply = sd.setExpectReply(message, 0)
        guard noReply >= 0 else { return .failed("set_expect_reply: \(-noReply)") }
        let sent = sd.send(bus, message, nil)
        guard sent >= 0 else { return .failed("send: \(-sent)") }
        // Written to the socket now: the process may exit right after.
        let flushed = sd.flush(bus)
        guard flushed >= 0 else { return .failed("flush: \(-flushed)") }
        return .sent
    }
}
