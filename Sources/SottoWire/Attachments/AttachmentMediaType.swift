/// The media type a sender claims for a file it attaches, from its name's extension: a short
/// table of what people send, else `application/octet-stream`. A claim only
/// (docs/protocol/attachments.md §3): a recipient never trusts the bytes because of it.
///
/// ```swift
/// AttachmentMediaType.guess(fileName: "IMG_0042.JPG")   // "image/jpeg"
/// AttachmentMediaType.guess(fileName: "notes")          // "application/octet-stream"
/// AttachmentMediaType.isImage("image/png")              // true: "sent a photo"
/// ```
public enum AttachmentMediaType {
    /// What a file of no known extension is.
    public static let unknown = "application/octet-stream"

    static let byExtension: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "heif": "image/heif", "avif": "image/avif", "bmp": "image/bmp", "tif": "image/tiff",
        "tiff": "image/tiff", "svg": "image/svg+xml",
        "mp4": "video/mp4", "mov": "video/quicktime", "webm": "video/webm", "mkv": "video/x-matroska",
        "mp3": "audio/mpeg", "m4a": "audio/mp4", "ogg": "audio/ogg", "opus": "audio/opus", "wav": "audio/wav",
        "flac": "audio/flac",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "txt": "text/plain", "md": "text/markdown", "csv": "text/csv", "html": "text/html", "json": "application/json",
        "odt": "application/vnd.oasis.opendocument.text", "ods": "application/vnd.oasis.opendocument.spreadsheet",
        "docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
        "xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ]

    /// The type for `fileName`'s last extension, lowercased; `unknown` without one.
    public static func guess(fileName: String) -> String {
        guard let dot = fileName.lastIndex(of: "."), dot != fileName.startIndex else { return unknown }
        let ext = fileName[fileName.index(after: dot)...].lowercased()
        return byExtension[ext] ?? unknown
    }

    /// An `image/…` type: what a notification calls a photo.
    public static func isImage(_ mediaType: String) -> Bool { mediaType.hasPrefix("image/") }
}
