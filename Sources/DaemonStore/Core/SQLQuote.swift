/// Quoting for the few names SQL cannot take as bound values (a table in `PRAGMA
/// quick_check(…)`, a file in `ATTACH`), without Foundation.
///
/// ```swift
/// SQLQuote.identifier("odd\"name")   // "\"odd\"\"name\""
/// SQLQuote.literal("/tmp/it's.db")   // "'/tmp/it''s.db'"
/// ```
public enum SQLQuote {
    /// A double-quoted identifier, inner double quotes doubled.
    public static func identifier(_ name: String) -> String {
        "\"" + doubling(name, "\"") + "\""
    }

    /// A single-quoted string literal, inner single quotes doubled.
    public static func literal(_ text: String) -> String {
        "'" + doubling(text, "'") + "'"
    }

    private static func doubling(_ text: String, _ quote: Character) -> String {
        var out = ""
        for character in text {
            out.append(character)
            if character == quote { out.append(quote) }
        }
        return out
    }
}
