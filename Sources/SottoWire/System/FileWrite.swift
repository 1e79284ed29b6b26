import Glibc

/// Writing a whole buffer to a file descriptor: `write(2)` may write less than asked or be
/// interrupted, so every caller that must not lose bytes loops; this is that loop, once.
///
/// ```swift
/// if let code = FileWrite.all(fd, buffer) { throw .io(String(cString: strerror(code))) }
/// ```
public enum FileWrite {
    /// Writes all of `bytes` at the descriptor's offset, retrying on EINTR and short writes.
    /// nil once written, else the errno (ENOSPC for a write that wrote nothing and said nothing).
    public static func all(_ fd: Int32, _ bytes: UnsafeRawBufferPointer) -> Int32? {
        var offset = 0
        while offset < bytes.count {
            let count = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
            if count > 0 {
                offset += count
            } else if count < 0, errno == EINTR {
                continue
            } else {
                return count < 0 ? errno : ENOSPC
            }
        }
        return nil
    }

    /// `all` for an array.
    public static func all(_ fd: Int32, _ bytes: [UInt8]) -> Int32? {
        bytes.withUnsafeBytes { all(fd, $0) }
    }
}
