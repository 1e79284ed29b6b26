import Glibc

/// The daemon's open-file limit. systemd starts services with a soft limit of 1024 and a
/// hard one of 524288; the soft 1024 only protects programs that use `select()`, and the
/// daemon never does (its control socket is served by SwiftNIO on epoll), so it raises soft
/// to hard at start.
///
/// ```swift
/// let fileLimit = FileDescriptorLimit.raiseSoftToHard()   // 524288 under systemd
/// ```
enum FileDescriptorLimit {
    /// Raises the soft `RLIMIT_NOFILE` to the hard limit when it can; returns the soft limit
    /// now in force.
    @discardableResult
    static func raiseSoftToHard() -> Int {
        let resource = Int32(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(resource, &raised) == 0 { limit = raised }
        }
        return limit.rlim_cur > rlim_t(Int32.max) ? Int(Int32.max) : Int(limit.rlim_cur)
    }
}
