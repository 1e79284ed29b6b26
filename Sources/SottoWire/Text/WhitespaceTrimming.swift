/// Whitespace and line breaks (Unicode's, as `Character.isWhitespace` says) taken off both
/// ends, without Foundation.
///
/// ```swift
/// "  👍\n".trimmingWhitespace()   // "👍"
/// ```
extension StringProtocol {
    public func trimmingWhitespace() -> String {
        guard let first = firstIndex(where: { !$0.isWhitespace }),
              let last = lastIndex(where: { !$0.isWhitespace }) else { return "" }
        return String(self[first...last])
    }
}
