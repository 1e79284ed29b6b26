/// What a desktop notification server is given as a notification's summary and body, for
/// the daemon's and the worker's posts alike (docs/adr/0062): both made inert (`InertText.line`:
/// no control character, no bidirectional control), and the body markup-escaped (`&` `<` `>`
/// `"` `'`) when the server advertises `body-markup` or did not say what it supports. The
/// Desktop Notifications spec makes only the body markup; the summary is always plain.
///
/// ```swift
/// let capabilities = NotificationCapabilities(names: ["body", "body-markup", "actions"])
/// NotificationServerText.make(summary: "Trip", body: "Ann: <a href=\"x\">hi</a>", capabilities: capabilities)
/// // ("Trip", "Ann: &lt;a href=&quot;x&quot;&gt;hi&lt;/a&gt;")
/// ```
public enum NotificationServerText {
    public static func make(summary: String, body: String,
                            capabilities: NotificationCapabilities) -> (summary: String, body: String) {
        let inertBody = InertText.line(body)
        return (InertText.line(summary), capabilities.takesBodyMarkup ? markupEscaped(inertBody) : inertBody)
    }

    /// `text` with the five characters that markup reads written as entities.
    public static func markupEscaped(_ text: String) -> String {
        guard text.utf8.contains(where: { $0 == 0x26 || $0 == 0x3C || $0 == 0x3E || $0 == 0x22 || $0 == 0x27 }) else {
            return text
        }
        var out = ""
        out.reserveCapacity(text.utf8.count + 16)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}

/// What a notification server says it supports (`org.freedesktop.Notifications.GetCapabilities`),
/// asked once per bus connection. A server that did not answer is taken to read markup: an
/// escaped `&amp;` shown as such costs less than a live link (docs/adr/0062).
///
/// ```swift
/// NotificationCapabilities(names: ["body", "body-markup"]).takesBodyMarkup   // true
/// NotificationCapabilities(names: ["body"]).takesBodyMarkup                  // false
/// NotificationCapabilities.unanswered.takesBodyMarkup                        // true
/// ```
public struct NotificationCapabilities: Sendable, Equatable {
    /// The capability names the server gave; nil when it did not answer.
    public let names: [String]?

    public init(names: [String]?) {
        self.names = names
    }

    public static let unanswered = NotificationCapabilities(names: nil)

    /// Whether the body is sent markup-escaped.
    public var takesBodyMarkup: Bool {
        names?.contains("body-markup") ?? true
    }
}
