import Glibc

/// inotify on a directory the daemon writes: a file created, renamed or deleted there makes
/// the fd readable, so the receiver reads it again at once instead of polling
/// (docs/adr/0026). Watched: the keystore (an identity saved, the unused slot claimed, an
/// inbox wiped) and the awake marks (an inbox woke or went to sleep, docs/adr/0056). The
/// directory may not exist yet (the daemon creates it): `rearm()` retries the watch.
///
/// ```swift
/// let watcher = DirectoryWatcher(directory: group.keystorePath)
/// poll([watcher.fd, …]) …; if watcher.drain() { rescan() }
/// ```
final class DirectoryWatcher {
    let directory: String
    let fd: Int32
    private var watch: Int32 = -1

    init(directory: String) {
        self.directory = directory
        fd = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        rearm()
    }

    deinit { close(fd) }

    var isWatching: Bool { watch >= 0 }

    /// Adds the watch if it is not in place (the directory appeared, or was replaced).
    func rearm() {
        guard fd >= 0, watch < 0 else { return }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_CLOSE_WRITE
                          | IN_DELETE_SELF | IN_MOVE_SELF)
        watch = inotify_add_watch(fd, directory, mask)
    }

    /// Reads every pending event; true if any arrived (a rescan is due). A watch that ended
    /// (the directory was removed or moved) is dropped so the next `rearm` re-adds it.
    func drain() -> Bool {
        guard fd >= 0 else { return false }
        var any = false
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n <= 0 { break }
            any = true
            var offset = 0
            while offset + MemoryLayout<inotify_event>.size <= n {
                let (mask, length) = buffer.withUnsafeBytes { raw -> (UInt32, Int) in
                    let event = raw.loadUnaligned(fromByteOffset: offset, as: inotify_event.self)
                    return (event.mask, Int(event.len))
                }
                if mask & UInt32(IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF) != 0 {
                    if watch >= 0 { inotify_rm_watch(fd, watch) }
                    watch = -1
                }
                offset += MemoryLayout<inotify_event>.size + length
            }
        }
        return any
    }
}
