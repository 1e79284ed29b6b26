import SottoWire

extension JSONValue {
    /// Indented text with sorted keys, as `JSONSerialization` writes it: what `sotto --json`
    /// has always printed, so scripts that compare its output keep working (``SortedJSONText``).
    ///
    /// ```swift
    /// print(result.sortedPrettyText)   // {\n  "messageId" : "00ff",\n  "recipients" : 2\n}
    /// ```
    public var sortedPrettyText: String { SortedJSONText.text(self, pretty: true) }

    /// One line with sorted keys (`sotto watch --json`): strings are kept exactly, whatever
    /// spaces or line breaks they hold (JSON escapes the breaks).
    ///
    /// ```swift
    /// print(change.json.sortedCompactText)   // {"kind":"messageInserted","seq":12,…}
    /// ```
    public var sortedCompactText: String { SortedJSONText.text(self, pretty: false) }
}
