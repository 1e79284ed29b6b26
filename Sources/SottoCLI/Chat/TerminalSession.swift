import Glibc

/// The controlling terminal in raw mode on the alternate screen with bracketed paste on, given
/// back exactly as it was found (its termios, the main screen, the cursor, bracketed paste
/// off) by `restore()`, which the chat calls on every way out: Ctrl-C, SIGTERM, SIGINT,
/// SIGHUP, an error.
///
/// ```swift
/// let terminal = try TerminalSession.enter()
/// defer { terminal.restore() }
/// terminal.write("\u{1b}[H hello")
/// ```
final class TerminalSession {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    let input: Int32 = STDIN_FILENO
    let output: Int32 = STDOUT_FILENO
    private var original = termios()
    private var raw = termios()
    private var restored = false

    private init() {}

    /// Raw mode (no echo, no line editing, no signals from keys: Ctrl-C arrives as a byte),
    /// the alternate screen, the cursor hidden while drawing, bracketed paste (a paste comes
    /// between ESC[200~ and ESC[201~, so its line breaks are not Enter).
    static func enter() throws -> TerminalSession {
        let session = TerminalSession()
        guard isatty(session.input) == 1, tcgetattr(session.input, &session.original) == 0 else {
            throw Failure(description: "sotto chat needs a terminal (stdin is not one)")
        }
        var raw = session.original
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_oflag &= ~tcflag_t(OPOST)
        raw.c_cflag |= tcflag_t(CS8)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        session.raw = raw
        guard tcsetattr(session.input, TCSAFLUSH, &raw) == 0 else {
            throw Failure(description: "cannot put the terminal in raw mode: errno \(errno)")
        }
        session.write(Self.taken)
        return session
    }

    // MARK: Modes

    /// The alternate screen, cleared, and bracketed paste on.
    static let taken = "\u{1b}[?1049h\u{1b}[H\u{1b}[2J\u{1b}[?2004h"
    /// Bracketed paste off, attributes reset, the cursor shown, the main screen.
    static let givenBack = "\u{1b}[?2004l\u{1b}[0m\u{1b}[?25h\u{1b}[?1049l"

    // MARK: Lending the terminal to another program

    /// The terminal as it was found (main screen, cursor, termios) for a program the chat
    /// runs in the foreground ($EDITOR); `resume()` takes it back.
    func suspend() {
        write(Self.givenBack)
        _ = tcsetattr(input, TCSAFLUSH, &original)
    }

    /// Raw mode and the alternate screen again, cleared: the caller redraws in full.
    func resume() {
        _ = tcsetattr(input, TCSAFLUSH, &raw)
        write(Self.taken)
    }

    /// Columns and rows (80×24 when the terminal does not say).
    var size: (columns: Int, rows: Int) {
        var window = winsize()
        guard ioctl(output, UInt(TIOCGWINSZ), &window) == 0, window.ws_col > 0, window.ws_row > 0 else { return (80, 24) }
        return (Int(window.ws_col), Int(window.ws_row))
    }

    func write(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeMutableBytes { Glibc.write(output, $0.baseAddress! + offset, $0.count - offset) }
            if written < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                return
            }
            offset += written
        }
        bytes.removeAll()
    }

    /// The main screen, the cursor and the termios as they were. Idempotent.
    func restore() {
        guard !restored else { return }
        restored = true
        write(Self.givenBack)
        _ = tcsetattr(input, TCSAFLUSH, &original)
    }

    deinit { restore() }
}
