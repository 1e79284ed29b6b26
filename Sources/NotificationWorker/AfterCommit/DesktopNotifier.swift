import CSystemd
import Glibc

/// Posts `org.freedesktop.Notifications.Notify` on the user's session bus through sd-bus.
/// Called after the ack is written, so the sender never waits on it; a missing bus or
/// notification server is logged and otherwise ignored.
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
        var bus: OpaquePointer?
        guard sd_bus_open_user(&bus) >= 0, let bus else { return .noBus }
        defer { sd_bus_flush_close_unref(bus) }

        var message: OpaquePointer?
        var result = sd_bus_message_new_method_call(
            bus, &message, "org.freedesktop.Notifications", "/org/freedesktop/Notifications",
            "org.freedesktop.Notifications", "Notify")
        guard result >= 0, let message else { return .failed("new_method_call: \(-result)") }
        defer { sd_bus_message_unref(message) }

        result = sotto_append_notify_arguments(message, "Sotto", summary, body, category, -1)
        guard result >= 0 else { return .failed("append: \(-result)") }

        var error = sotto_sd_bus_error_null()
        var reply: OpaquePointer?
        result = sd_bus_call(bus, message, replyTimeoutUs, &error, &reply)
        defer {
            sd_bus_error_free(&error)
            if let reply { sd_bus_message_unref(reply) }
        }
        guard result >= 0, let reply else {
            let name = error.name.map { String(cString: $0) } ?? "errno \(-result)"
            return .failed(name)
        }
        var id: UInt32 = 0
        _ = sd_bus_message_read_basic(reply, CChar(UInt8(ascii: "u")), &id)
        return .posted(id: id)
    }
}
