import Glibc

/// The few sd-bus calls the desktop notification needs, loaded with `dlopen` only when a
/// notification is posted, after the ack: linking libsystemd would put it and six more
/// shared objects on every push's start-up path (docs/adr/0001). `nil` when libsystemd does
/// not load (`loadError()` says why).
///
/// ```swift
/// guard let bus = SDBus.load() else { return .noBus }
/// var connection: OpaquePointer?
/// bus.openUser(&connection)
/// ```
struct SDBus {
    typealias OpenUser = @convention(c) (UnsafeMutablePointer<OpaquePointer?>) -> Int32
    typealias NewMethodCall = @convention(c) (OpaquePointer, UnsafeMutablePointer<OpaquePointer?>, UnsafePointer<CChar>,
                                              UnsafePointer<CChar>, UnsafePointer<CChar>, UnsafePointer<CChar>) -> Int32
    typealias AppendBasic = @convention(c) (OpaquePointer, CChar, UnsafeRawPointer) -> Int32
    typealias OpenContainer = @convention(c) (OpaquePointer, CChar, UnsafePointer<CChar>) -> Int32
    typealias CloseContainer = @convention(c) (OpaquePointer) -> Int32
    typealias Send = @convention(c) (OpaquePointer, OpaquePointer, UnsafeMutablePointer<UInt64>?) -> Int32
    typealias SetExpectReply = @convention(c) (OpaquePointer, Int32) -> Int32
    typealias Unref = @convention(c) (OpaquePointer) -> OpaquePointer?
    typealias Flush = @convention(c) (OpaquePointer) -> Int32
    typealias Call = @convention(c) (OpaquePointer, OpaquePointer, UInt64, UnsafeMutableRawPointer?,
                                     UnsafeMutablePointer<OpaquePointer?>) -> Int32
    typealias ReadBasic = @convention(c) (OpaquePointer, CChar, UnsafeMutableRawPointer?) -> Int32

    let openUser: OpenUser
    let newMethodCall: NewMethodCall
    let appendBasic: AppendBasic
    let openContainer: OpenContainer
    let closeContainer: CloseContainer
    let send: Send
    let setExpectReply: SetExpectReply
    let flush: Flush
    let messageUnref: Unref
    let flushCloseUnref: Unref
    let call: Call
    let enterContainer: OpenContainer
    let exitContainer: CloseContainer
    let readBasic: ReadBasic

    static func load() -> SDBus? {
        guard let library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL) else { return nil }
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            dlsym(library, name).map { unsafeBitCast($0, to: type) }
        }
        guard let openUser = symbol("sd_bus_open_user", as: OpenUser.self),
              let newMethodCall = symbol("sd_bus_message_new_method_call", as: NewMethodCall.self),
              let appendBasic = symbol("sd_bus_message_append_basic", as: AppendBasic.self),
              let openContainer = symbol("sd_bus_message_open_container", as: OpenContainer.self),
              let closeContainer = symbol("sd_bus_message_close_container", as: CloseContainer.self),
              let send = symbol("sd_bus_send", as: Send.self),
              let setExpectReply = symbol("sd_bus_message_set_expect_reply", as: SetExpectReply.self),
              let flush = symbol("sd_bus_flush", as: Flush.self),
              let messageUnref = symbol("sd_bus_message_unref", as: Unref.self),
              let flushCloseUnref = symbol("sd_bus_flush_close_unref", as: Unref.self),
              let call = symbol("sd_bus_call", as: Call.self),
              let enterContainer = symbol("sd_bus_message_enter_container", as: OpenContainer.self),
              let exitContainer = symbol("sd_bus_message_exit_container", as: CloseContainer.self),
              let readBasic = symbol("sd_bus_message_read_basic", as: ReadBasic.self) else { return nil }
        return SDBus(openUser: openUser, newMethodCall: newMethodCall, appendBasic: appendBasic,
                     openContainer: openContainer, closeContainer: closeContainer, send: send,
                     setExpectReply: setExpectReply, flush: flush, messageUnref: messageUnref, flushCloseUnref: flushCloseUnref,
                     call: call, enterContainer: enterContainer, exitContainer: exitContainer, readBasic: readBasic)
    }

    /// Why the last `load()` failed, in dlerror's words.
    static func loadError() -> String {
        dlerror().map { String(cString: $0) } ?? "a symbol is missing"
    }

    /// Appends a string argument (type `s`).
    func append(_ message: OpaquePointer, string: String) -> Int32 {
        string.withCString { appendBasic(message, CChar(UInt8(ascii: "s")), $0) }
    }

    /// Appends a fixed-size argument (`u`, `i`) from a value.
    func append<T>(_ message: OpaquePointer, _ type: Character, _ value: T) -> Int32 {
        withUnsafePointer(to: value) { appendBasic(message, CChar(type.asciiValue!), $0) }
    }

    func open(_ message: OpaquePointer, _ type: Character, _ contents: String) -> Int32 {
        contents.withCString { openContainer(message, CChar(type.asciiValue!), $0) }
    }

    /// Reads an `as` argument (GetCapabilities' reply); nil when it is not one.
    func readStrings(_ message: OpaquePointer) -> [String]? {
        guard "s".withCString({ enterContainer(message, CChar(UInt8(ascii: "a")), $0) }) > 0 else { return nil }
        var strings: [String] = []
        while true {
            var item: UnsafePointer<CChar>?
            let read = readBasic(message, CChar(UInt8(ascii: "s")), &item)
            if read < 0 { return nil }
            guard read > 0, let item else { break }
            strings.append(String(cString: item))
        }
        return exitContainer(message) >= 0 ? strings : nil
    }
}
