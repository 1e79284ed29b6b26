import CSystemd
import DaemonLogging
import Foundation
import SharedStore
import SottoCrypto
import SottoWire

/// Posts the desktop notifications that workers hand over on `notifications.sock`, with a
/// "default" action: clicking one opens its conversation (``NotificationOpenCommand``).
///
/// The daemon posts them, not the worker, because most notification servers (dunst, KDE
/// Plasma, notification-daemon) send `ActionInvoked` to the peer that posted and no one else,
/// and a worker has exited long before anyone clicks (docs/adr/0046). The socket exists only
/// while this runs on a connected session bus: a worker that cannot hand a notification over
/// posts it itself, without the action.
///
/// One thread connects and then polls the bus, the datagram socket and a stop pipe: the bus
/// and everything marked below are touched on that thread only.
///
/// What a worker hands over is made inert here before it is posted, and the body
/// markup-escaped when the server reads markup (`NotificationServerText`, docs/adr/0062): the
/// server is asked `GetCapabilities` before the first post, and again after a Notify is
/// answered by another server than the one that answered it (the server was replaced).
///
/// ```swift
/// let notifications = DesktopNotifications(socketPath: runtime.notificationsSocketPath,
///                                          openCommand: NotificationOpenCommand(environment: env))
/// notifications.start()          // no session bus: it logs why, binds nothing, and ends
/// …
/// await notifications.stop()     // the socket is gone before this returns
/// ```
final class DesktopNotifications: @unchecked Sendable {
    /// How many posted notifications keep their conversation for a click, the oldest
    /// forgotten first (a server closes them long before).
    static let remembered = 256
    /// How long a Notify call may wait for its reply (the id a click names): sd-bus's own
    /// default. The call is asynchronous, so a slow server holds nothing up meanwhile, and a
    /// shorter wait on a loaded machine lost the id of a notification that was shown.
    static let replyTimeoutUs: UInt64 = 25_000_000
    /// How long GetCapabilities may hold the bus thread (once per server).
    static let capabilitiesTimeoutUs: UInt64 = 1_000_000

    let socketPath: String
    let openCommand: NotificationOpenCommand

    private var bus: OpaquePointer?
    private var socketFD: Int32 = -1
    private var stopReadFD: Int32 = -1
    private var stopWriteFD: Int32 = -1
    private var finished: [CheckedContinuation<Void, Never>] = []
    private var hasFinished = false
    private let lock = NSLock()

    // MARK: Bus thread only
    private var conversationById: [UInt32: String] = [:]
    private var postedOrder: [UInt32] = []
    /// The unique bus name of the server that answered our Notify calls: the only peer whose
    /// ActionInvoked is believed.
    private var serverName: String?
    private var droppedDatagrams = 0
    /// What the server said it supports, and which server (unique bus name) said it.
    private var capabilities: (server: String?, said: NotificationCapabilities)?

    init(socketPath: String, openCommand: NotificationOpenCommand) {
        self.socketPath = socketPath
        self.openCommand = openCommand
    }

    // MARK: Start and stop

    /// Starts the thread that connects to the session bus, binds the socket and serves;
    /// without a session bus it logs why and ends at once (nothing bound).
    func start() {
        var pipeFDs: [Int32] = [-1, -1]
        guard pipe(&pipeFDs) == 0 else {
            DaemonLog.error("desktop notifications: no pipe (errno \(errno)); workers post them")
            finish()
            return
        }
        for fd in pipeFDs {
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            _ = fcntl(fd, F_SETFL, O_NONBLOCK)
        }
        stopReadFD = pipeFDs[0]
        stopWriteFD = pipeFDs[1]
        let thread = Thread { [self] in
            if connect() { serve() }
            finish()
        }
        thread.name = "desktop-notifications"
        thread.start()
    }

    /// Ends the loop; returns once the socket is gone and the bus closed.
    func stop() async {
        if stopWriteFD >= 0 {
            var byte: UInt8 = 1
            _ = write(stopWriteFD, &byte, 1)
        }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if hasFinished {
                lock.unlock()
                continuation.resume()
            } else {
                finished.append(continuation)
                lock.unlock()
            }
        }
        if stopReadFD >= 0 { close(stopReadFD) }
        if stopWriteFD >= 0 { close(stopWriteFD) }
    }

    private func finish() {
        lock.lock()
        hasFinished = true
        let waiting = finished
        finished = []
        lock.unlock()
        for continuation in waiting { continuation.resume() }
    }

    private func connect() -> Bool {
        var bus: OpaquePointer?
        let opened = sd_bus_open_user(&bus)
        guard opened >= 0, let bus else {
            DaemonLog.info("desktop notifications: no session bus (\(String(cString: strerror(-opened)))); workers post them, without an open action")
            return false
        }
        let userdata = Unmanaged.passUnretained(self).toOpaque()
        var ok = sd_bus_match_signal(bus, nil, nil, "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
                                     "ActionInvoked", Self.onActionInvoked, userdata) >= 0
        ok = ok && sd_bus_match_signal(bus, nil, nil, "/org/freedesktop/Notifications", "org.freedesktop.Notifications",
                                       "NotificationClosed", Self.onClosed, userdata) >= 0
        let socketFD = ok ? UnixSocket.bind(socketPath, type: UnixSocket.nonBlockingDatagramType) : -1
        guard ok, socketFD >= 0 else {
            DaemonLog.error("desktop notifications: cannot listen on the session bus or \(socketPath) (errno \(errno)); workers post them")
            sd_bus_flush_close_unref(bus)
            return false
        }
        self.bus = bus
        self.socketFD = socketFD
        DaemonLog.info("desktop notifications: posted by the daemon, clicking one opens its conversation")
        return true
    }

    /// sd-bus's own loop shape: process until idle, then poll the bus (for what it asks and
    /// until its next timeout), the datagram socket and the stop pipe.
    private func serve() {
        var disconnected = false
        loop: while true {
            while true {
                let processed = sd_bus_process(bus, nil)
                if processed < 0 { disconnected = true; break loop }
                if processed == 0 { break }
            }
            var timeoutUs: UInt64 = 0
            _ = sd_bus_get_timeout(bus, &timeoutUs)
            var descriptors = [
                pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
                pollfd(fd: socketFD, events: Int16(POLLIN), revents: 0),
                pollfd(fd: stopReadFD, events: Int16(POLLIN), revents: 0),
            ]
            let ready = poll(&descriptors, 3, Self.pollTimeoutMs(untilMonotonicUs: timeoutUs))
            if ready < 0 && errno != EINTR { break }
            if descriptors[2].revents != 0 { break }
            if descriptors[1].revents != 0 { receiveDatagrams() }
        }
        // Gone before anything else: a worker from now on posts its own.
        unlink(socketPath)
        close(socketFD)
        if disconnected || sd_bus_is_open(bus) <= 0 {
            DaemonLog.info("desktop notifications: the session bus went away; workers post them")
        }
        sd_bus_flush_close_unref(bus)
        bus = nil
    }

    /// sd-bus gives an absolute CLOCK_MONOTONIC time in µs, or UINT64_MAX for none.
    static func pollTimeoutMs(untilMonotonicUs deadline: UInt64) -> Int32 {
        guard deadline != UInt64.max else { return -1 }
        let now = MonotonicClock.nowNs() / 1_000
        guard deadline > now else { return 0 }
        return Int32(min((deadline - now + 999) / 1_000, UInt64(Int32.max)))
    }

    // MARK: Posting

    private func receiveDatagrams() {
        var buffer = [UInt8](repeating: 0, count: NotificationDatagram.maxBytes + 1)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(socketFD, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if n < 0 { return }  // EAGAIN: all read
            guard let datagram = NotificationDatagram.parse(buffer[0..<n]) else {
                droppedDatagrams += 1
                if droppedDatagrams == 1 || droppedDatagrams % 1000 == 0 {
                    DaemonLog.info("desktop notifications: \(droppedDatagrams) datagram(s) that were not a notification dropped")
                }
                continue
            }
            post(datagram)
        }
    }

    private func post(_ datagram: NotificationDatagram) {
        guard let bus else { return }
        let said = capabilities?.said ?? askCapabilities(bus)
        let shown = NotificationServerText.make(summary: datagram.summary, body: datagram.body, capabilities: said)
        var messagePointer: OpaquePointer?
        guard sd_bus_message_new_method_call(bus, &messagePointer, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                                             "org.freedesktop.Notifications", "Notify") >= 0, let message = messagePointer else { return }
        defer { sd_bus_message_unref(message) }
        guard sotto_append_notify_with_action(message, "Sotto", shown.summary, shown.body, "im.received",
                                              "default", "Open") >= 0 else { return }
        let box = Unmanaged.passRetained(PendingNotify(owner: self, conversationId: datagram.conversationId)).toOpaque()
        let called = sd_bus_call_async(bus, nil, message, Self.onNotifyReply, box, Self.replyTimeoutUs)
        if called < 0 {
            Unmanaged<PendingNotify>.fromOpaque(box).release()
            DaemonLog.info("desktop notifications: not shown (\(String(cString: strerror(-called))))")
        }
    }

    /// GetCapabilities, waited for on this thread; remembered with the server that answered.
    private func askCapabilities(_ bus: OpaquePointer) -> NotificationCapabilities {
        var messagePointer: OpaquePointer?
        var replyPointer: OpaquePointer?
        var error = sotto_sd_bus_error_null()
        defer { sd_bus_error_free(&error) }
        guard sd_bus_message_new_method_call(bus, &messagePointer, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
                                             "org.freedesktop.Notifications", "GetCapabilities") >= 0,
              let message = messagePointer else { return .unanswered }
        defer { sd_bus_message_unref(message) }
        guard sd_bus_call(bus, message, Self.capabilitiesTimeoutUs, &error, &replyPointer) >= 0, let reply = replyPointer else {
            let name = error.name.map { String(cString: $0) } ?? "no answer"
            DaemonLog.info("desktop notifications: the server did not say what it supports (\(name)); bodies are sent markup-escaped")
            capabilities = (nil, .unanswered)
            return .unanswered
        }
        defer { sd_bus_message_unref(reply) }
        let said = NotificationCapabilities(names: Self.readStrings(reply))
        capabilities = (sd_bus_message_get_sender(reply).map { String(cString: $0) }, said)
        return said
    }

    /// An `as` argument; nil when the reply is not one.
    private static func readStrings(_ message: OpaquePointer) -> [String]? {
        guard sd_bus_message_enter_container(message, CChar(UInt8(ascii: "a")), "s") > 0 else { return nil }
        var strings: [String] = []
        while true {
            var item: UnsafePointer<CChar>?
            let read = sd_bus_message_read_basic(message, CChar(UInt8(ascii: "s")), &item)
            if read < 0 { return nil }
            guard read > 0, let item else { break }
            strings.append(String(cString: item))
        }
        return sd_bus_message_exit_container(message) >= 0 ? strings : nil
    }

    private func posted(id: UInt32, conversationId: String, server: String?) {
        if let server { serverName = server }
        // Another server answered than the one whose capabilities are known: ask it next time.
        if let server, let known = capabilities, known.server != server { capabilities = nil }
        conversationById[id] = conversationId
        postedOrder.append(id)
        if postedOrder.count > Self.remembered {
            conversationById[postedOrder.removeFirst()] = nil
        }
    }

    private func actionInvoked(id: UInt32, key: String, sender: String?) {
        guard key == "default" else { return }
        guard let serverName, sender == serverName else {
            DaemonLog.info("desktop notifications: a click from a peer that is not the notification server ignored")
            return
        }
        guard let conversationId = conversationById[id] else {
            DaemonLog.info("desktop notifications: a click on notification \(id), which this daemon does not know (not posted, or forgotten), ignored")
            return
        }
        openCommand.open(conversationId)
    }

    private func closed(id: UInt32) {
        conversationById[id] = nil
    }

    // MARK: C callbacks (userdata: this object, unretained; it outlives the loop)

    private final class PendingNotify {
        let owner: DesktopNotifications
        let conversationId: String
        init(owner: DesktopNotifications, conversationId: String) {
            self.owner = owner
            self.conversationId = conversationId
        }
    }

    private static let onNotifyReply: sd_bus_message_handler_t = { reply, userdata, _ in
        guard let userdata else { return 0 }
        let pending = Unmanaged<PendingNotify>.fromOpaque(userdata).takeRetainedValue()
        guard let reply else { return 0 }
        if sd_bus_message_is_method_error(reply, nil) != 0 {
            let name = sd_bus_message_get_error(reply)?.pointee.name.map { String(cString: $0) } ?? "an error"
            DaemonLog.info("desktop notifications: not shown (\(name))")
            return 0
        }
        var id: UInt32 = 0
        guard sotto_read_notification_id(reply, &id) >= 0 else { return 0 }
        let server = sd_bus_message_get_sender(reply).map { String(cString: $0) }
        pending.owner.posted(id: id, conversationId: pending.conversationId, server: server)
        return 0
    }

    private static let onActionInvoked: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        var id: UInt32 = 0
        var key: UnsafePointer<CChar>?
        guard sotto_read_action_invoked(message, &id, &key) >= 0, let key else { return 0 }
        let sender = sd_bus_message_get_sender(message).map { String(cString: $0) }
        Unmanaged<DesktopNotifications>.fromOpaque(userdata).takeUnretainedValue()
            .actionInvoked(id: id, key: String(cString: key), sender: sender)
        return 0
    }

    private static let onClosed: sd_bus_message_handler_t = { message, userdata, _ in
        guard let message, let userdata else { return 0 }
        var id: UInt32 = 0
        guard sd_bus_message_read_basic(message, CChar(UInt8(ascii: "u")), &id) >= 0 else { return 0 }
        Unmanaged<DesktopNotifications>.fromOpaque(userdata).takeUnretainedValue().closed(id: id)
        return 0
    }
}
