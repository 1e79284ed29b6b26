import ControlProtocol
import SottoWire
import FoundationEssentials

/// A command typed in the composer: a line that starts with `/`. `//text` sends `/text`;
/// an unknown `/word` is refused rather than sent, so a mistyped command never goes to the
/// members as a message.
///
/// ```swift
/// SlashCommand.parse("/new Weekend trip")   // .command(.new(name: "Weekend trip"))
/// SlashCommand.parse("//shrug")             // .message("/shrug")
/// SlashCommand.parse("hello")               // .message("hello")
/// ```
enum SlashCommand: Equatable {
    case help
    case new(name: String?)
    case invite(expiresInMs: Int64?)
    case join(code: String)
    case mute(Bool)
    /// Sends the file at this path (made absolute) to the open conversation.
    case file(path: String)
    /// Saves the selected message's file (or the newest file) into this directory or new path
    /// (nil: the current directory).
    case save(destination: String?)
    case leave
    case remove(member: String)
    /// nil: now; a time: scheduled; `cancel`: calls a scheduled one off.
    case explode(inMs: Int64?, cancel: Bool)

    enum Parsed: Equatable {
        case message(String)
        case command(SlashCommand)
        case invalid(String)
    }

    // MARK: The table (shown by /help and on the status line while a command is typed)

    static let summary = "/new NAME · /invite · /join CODE · /file PATH · /save · /mute · /unmute · /leave · /remove MEMBER · /explode · /help"

    /// At most 79 columns each, so 80×24 shows them unwrapped.
    static let helpLines: [String] = [
        "Commands (typed in the composer, then Enter):",
        "  /new NAME        create a conversation with an identity of its own; open it",
        "  /invite [1h]     show an invite code for the open conversation (also copied",
        "                   to the clipboard where the terminal allows it)",
        "  /join CODE       paste an invite code (sotto1:…) to ask to join",
        "  /file PATH       send a file (up to 100 MiB) to the open conversation",
        "  /save [DEST]     save the selected file (Ctrl-P), or the newest, into DEST",
        "  /mute, /unmute   no desktop notifications for it on this device",
        "  /leave           leave the open conversation (asks you to type its name)",
        "  /remove MEMBER   remove a member (asks you to type the member's name)",
        "  /explode [1h]    delete it on every device, now or later (asks for its name);",
        "                   /explode cancel calls a scheduled explosion off",
        "  //text           sends /text as a message",
        "Keys:",
        "  Enter send · Alt+Enter new line · ↑↓ Tab conversation · PgUp/PgDn scroll",
        "  Ctrl-P/Ctrl-N select a message · Ctrl-R reply · Ctrl-T react · Ctrl-F search",
        "  Ctrl-O compose in $EDITOR · Esc cancel · Ctrl-C quit",
    ]

    // MARK: Parsing

    static func parse(_ line: String) -> Parsed {
        guard line.hasPrefix("/") else { return .message(line) }
        if line.hasPrefix("//") { return .message(String(line.dropFirst())) }
        let trimmed = line.dropFirst().trimmingWhitespace()
        let word = trimmed.prefix { !$0.isWhitespace }
        let rest = trimmed.dropFirst(word.count).trimmingWhitespace()
        switch word {
        case "help", "?": return .command(.help)
        case "new": return .command(.new(name: rest.isEmpty ? nil : rest))
        case "invite":
            if rest.isEmpty { return .command(.invite(expiresInMs: nil)) }
            guard let ms = DurationParser.milliseconds(rest) else { return .invalid("/invite takes a time such as 1h or 7d") }
            return .command(.invite(expiresInMs: ms))
        case "join":
            guard !rest.isEmpty else { return .invalid("/join needs the invite code: /join sotto1:…") }
            return .command(.join(code: rest.filter { !$0.isWhitespace }))
        case "file":
            guard !rest.isEmpty else { return .invalid("/file needs the file's path: /file ~/photo.jpg") }
            return .command(.file(path: rest))
        case "save": return .command(.save(destination: rest.isEmpty ? nil : rest))
        case "mute": return .command(.mute(true))
        case "unmute": return .command(.mute(false))
        case "leave": return .command(.leave)
        case "remove":
            guard !rest.isEmpty else { return .invalid("/remove needs the member's name: /remove bob") }
            return .command(.remove(member: rest))
        case "explode":
            if rest.isEmpty { return .command(.explode(inMs: nil, cancel: false)) }
            if rest == "cancel" { return .command(.explode(inMs: nil, cancel: true)) }
            guard let ms = DurationParser.milliseconds(rest) else { return .invalid("/explode takes a time such as 1h, or cancel") }
            return .command(.explode(inMs: ms, cancel: false))
        default:
            return .invalid("no command /\(word); /help lists them (//text sends /text)")
        }
    }
}
