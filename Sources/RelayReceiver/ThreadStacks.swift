import Glibc

/// The stack size of every thread started after it, chiefly nats.c's (one read loop per
/// identity connection, docs/adr/0044): glibc's default is the 8 MiB stack limit, and each
/// idle read loop touches two pages of it, but its 8 MiB of address space costs a page of page
/// tables of its own: 4.2 MB of them at 1,000 identities, kernel memory that counts against the
/// unit's memory limit. 512 KiB stacks share page-table pages; the deepest frame nats.c puts on
/// a thread's stack is the 32 KiB line buffer of a (re)connect.
///
/// ```swift
/// ThreadStacks.setDefault(bytes: ThreadStacks.relaydBytes)   // before the first connection
/// ```
enum ThreadStacks {
    static let relaydBytes = 512 * 1_024

    // MARK: - Setting it

    /// false when glibc refused it (the old default stays).
    @discardableResult
    static func setDefault(bytes: Int) -> Bool {
        var attributes = pthread_attr_t()
        guard pthread_attr_init(&attributes) == 0 else { return false }
        defer { pthread_attr_destroy(&attributes) }
        guard pthread_attr_setstacksize(&attributes, bytes) == 0 else { return false }
        // A GNU extension the Glibc module does not declare (no _GNU_SOURCE): from libc itself.
        guard let symbol = dlsym(nil, "pthread_setattr_default_np") else { return false }
        let setDefault = unsafeBitCast(symbol, to: (@convention(c) (UnsafePointer<pthread_attr_t>) -> Int32).self)
        return setDefault(&attributes) == 0
    }
}
