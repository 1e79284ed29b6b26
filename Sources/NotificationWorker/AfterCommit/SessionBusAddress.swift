import Glibc

/// Where sd-bus would find the user's session bus, checked before libsystemd is loaded: when
/// every address is a `unix:path=` socket and none of them exists, there is no bus, and
/// loading libsystemd (and, into the static worker, a second libc: 1.7 MB of its peak RSS,
/// docs/adr/0055) would buy nothing. Any other address (abstract, tcp, escaped) may be a bus.
///
/// ```swift
/// if let path = SessionBusAddress.missingSocket(getenv: { getenv($0).map { String(cString: $0) } }) {
///     WorkerLog.info("notification not shown: no session bus at \(path)")
/// }
/// ```
enum SessionBusAddress {
    /// The first missing socket path when no address can be a bus; nil when one may be.
    static func missingSocket(getenv: (String) -> String?) -> String? {
        let addresses: [Substring]
        if let variable = getenv("DBUS_SESSION_BUS_ADDRESS") {
            addresses = variable.split(separator: ";")
        } else if let runtime = getenv("XDG_RUNTIME_DIR") {
            addresses = ["unix:path=" + runtime + "/bus"]   // sd_bus_open_user's default
        } else {
            return nil   // sd-bus reports this itself
        }
        var missing: String?
        for address in addresses {
            guard address.hasPrefix("unix:"), !address.contains("%") else { return nil }
            let keys = address.dropFirst("unix:".count).split(separator: ",")
            guard let path = keys.first(where: { $0.hasPrefix("path=") })?.dropFirst("path=".count) else { return nil }
            if access(String(path), F_OK) == 0 { return nil }
            missing = missing ?? String(path)
        }
        return missing
    }
}
