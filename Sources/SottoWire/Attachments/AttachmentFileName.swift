/// The name an attachment is saved under (docs/protocol/attachments.md §6): the sender's
/// `name` made safe to put in a directory. Never a path, never hidden, never `.` or `..`, no
/// control or bidirectional character, at most 255 bytes (NAME_MAX), never empty.
///
/// ```swift
/// AttachmentFileName.safe("../../.bashrc")        // "_.._.bashrc"
/// AttachmentFileName.safe("evil\u{202E}gpj.exe")  // "evil_gpj.exe"
/// ```
public enum AttachmentFileName {
    public static let maxBytes = 255
    /// The longest extension kept when a long name is cut (the dot included).
    public static let maxSuffixBytes = 16
    public static let fallback = "attachment"

    // MARK: The algorithm

    public static func safe(_ name: String) -> String {
        // 1. Separators, controls and bidirectional formatting become "_".
        var scalars = name.unicodeScalars.map { isReplaced($0) ? "_" : $0 }
        // 2. No leading dots or spaces (hidden files, "." and ".."), no trailing spaces.
        while let first = scalars.first, first == "." || first == " " { scalars.removeFirst() }
        while scalars.last == " " { scalars.removeLast() }
        // 3. At most 255 bytes, keeping a short extension.
        if utf8Count(scalars[...]) > maxBytes {
            var suffix: ArraySlice<Unicode.Scalar> = []
            if let dot = scalars.lastIndex(of: "."), dot > 0 {
                let candidate = scalars[dot...]
                if (2...maxSuffixBytes).contains(utf8Count(candidate)) { suffix = candidate }
            }
            var stem = scalars[..<(scalars.count - suffix.count)]
            let budget = maxBytes - utf8Count(suffix)
            while utf8Count(stem) > budget { stem = stem.dropLast() }
            scalars = Array(stem) + Array(suffix)
            // A cut may end on a space.
            while scalars.last == " " { scalars.removeLast() }
        }
        // 4. Nothing left: a fixed name.
        guard !scalars.isEmpty else { return fallback }
        var out = String.UnicodeScalarView()
        out.append(contentsOf: scalars)
        return String(out)
    }

    /// C0, DEL, C1, `/`, `\` and the bidirectional controls InertText neutralises.
    static func isReplaced(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F, 0x80...0x9F, 0x2F, 0x5C: true
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }

    private static func utf8Count(_ scalars: ArraySlice<Unicode.Scalar>) -> Int {
        scalars.reduce(0) { $0 + UTF8.width($1) }
    }
}
