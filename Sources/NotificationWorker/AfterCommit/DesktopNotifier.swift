import Glibc

/// Posts `org.freedesktop.Notifications.Notify` on the user's session bus through sd-bus
/// (loaded on first use, see `SDBus`). Called after the ack is written, so the sender never
/// waits on it; a missing bus or notification server is logged and otherwise ignored.
///
/// ```swift
/// DesktopNotifier().post(summary: "Book club", body: "see you at 7")
/// ```
struct DesktopNotifier {
    /// How long the worker waits for the notification server's reply.
    var replyTimeoutUs: UInt64 = 500_000

    enum Outcome: Equatable {
        case posted(id: UInt32)
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

        var error = SDBus.Error()
        var replyPointer: OpaquePointer?
        let called = withUnsafeMutablePointer(to: &error) { sd.call(bus, message, replyTimeoutUs, $0, &replyPointer) }
        defer {
            withUnsafeMutablePointer(to: &error) { sd.errorFree($0) }
            if let reply = replyPointer { _ = sd.messageUnref(reply) }
        }
        guard called >= 0, let reply = replyPointer else {
            return .failed(error.name.map { String(cString: $0) } ?? "errno \(-called)")
        }
        var id: UInt32 = 0
        _ = sd.readBasic(reply, CChar(UInt8(ascii: "u")), &id)
        return .posted(id: id)
    }
}
