import Glibc

/// Posts `org.freedesktop.Notifications.Notify` on the user's session bus through sd-bus
/// (loaded on first use, see `SDBus`). Called after the ack is written, so the sender never
/// waits on it. The call is sent with no reply expected and only flushed to the bus: a slow
/// or absent notification server must never hold the worker (under Accept=no it would
/// throttle storage to one push per reply timeout; docs/adr/0013). A missing bus is
/// reported and otherwise ignored.
///
/// ```swift
/// DesktopNotifier().post(summary: "Book club", body: "see you at 7")
/// ```
struct DesktopNotifier {
    enum Outcome: Equatable {
        /// Written to the bus; whether a server shows it is not waited for.
        case sent
        case noBus
        case failed(String)
    }

    @discardableResult
    func post(summary: String, body: String, category: String = "im.received") -> Outcome {
        guard let sd = SDBus.load() else { return .noBus }
        var busPointer: OpaquePointer?
        guard sd.openUser(&busPointer) >= 0, let bus = busPointer else { return .noBus }
        defer { _ = sd.flushCloseUnref(bus) }

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
        // Queued here; flushed to the socket by flush_close_unref (deferred above).
        let sent = sd.send(bus, message, nil)
        guard sent >= 0 else { return .failed("send: \(-sent)") }
        return .sent
    }
}
