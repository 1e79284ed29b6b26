import Glibc

/// The process environment as a dictionary, read from `environ` without Foundation, so
/// resolvers like ``GroupDirectory/resolve(explicit:environment:)`` stay pure functions.
///
/// ```swift
/// let env = ProcessEnvironment.current()
/// env["HOME"]
/// ```
public enum ProcessEnvironment {
    public static func current() -> [String: String] {
        var out: [String: String] = [:]
        var cursor = environ
        while let entry = cursor.pointee {
            let text = String(cString: entry)
            if let eq = text.firstIndex(of: "=") {
                let key = String(text[..<eq])
                if out[key] == nil { out[key] = String(text[text.index(after: eq)...]) }
            }
            cursor += 1
        }
        return out
    }

    /// Only the named variables, each read with getenv(3): what a process on the hot path
    /// uses instead of copying its whole environment into a dictionary.
    public static func current(only names: [String]) -> [String: String] {
        var out: [String: String] = [:]
        for name in names {
            if let value = getenv(name) { out[name] = String(cString: value) }
        }
        return out
    }
}
