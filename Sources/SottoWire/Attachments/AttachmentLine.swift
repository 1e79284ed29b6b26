/// The one line every client shows for an attachment message: `📎 NAME (SIZE, STATE)`, and
/// its caption on the lines after. The name is the sender's and untrusted: this text is
/// shown through `InertText` like any text a member sent (docs/adr/0062), never as is.
///
/// ```swift
/// AttachmentLine.text(name: "photo.jpg", size: 1_258_291, state: .waiting, caption: nil)
/// // "📎 photo.jpg (1.2 MiB, waiting)"
/// AttachmentLine.text(name: "photo.jpg", size: 1_258_291, state: .fetching, caption: nil, percentDone: 40)
/// // "📎 photo.jpg (1.2 MiB, fetching 40%)"
/// AttachmentLine.size(4_096)   // "4.0 KiB"
/// ```
public enum AttachmentLine {
    // MARK: The line

    /// `📎 NAME (SIZE, STATE)`, then a line break and the caption when there is one. STATE is
    /// `fetching N%` while a fetch has a figure, and `failed: REASON` with its reason.
    public static func text(name: String, size: Int, state: AttachmentState, caption: String?,
                            percentDone: Int? = nil, failure: String? = nil) -> String {
        var stateText = state.rawValue
        if state == .fetching, let percentDone { stateText += " \(min(max(percentDone, 0), 100))%" }
        if state == .failed, let failure, !failure.isEmpty { stateText += ": " + failure }
        let line = "📎 \(name) (\(Self.size(size)), \(stateText))"
        guard let caption, !caption.isEmpty else { return line }
        return line + "\n" + caption
    }

    // MARK: Sizes

    /// A size as people read it, in powers of 1,024 with one decimal: `0 B`, `999 B`,
    /// `1.0 KiB`, `1.2 MiB`, `100.0 MiB`. Integer arithmetic, rounded half up.
    public static func size(_ bytes: Int) -> String {
        let units = ["KiB", "MiB", "GiB"]
        guard bytes >= 1024 else { return "\(max(0, bytes)) B" }
        var unit = 0
        var scale = 1024
        while unit + 1 < units.count, bytes >= scale * 1024 {
            scale *= 1024
            unit += 1
        }
        let tenths = (bytes * 10 + scale / 2) / scale
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }
}
