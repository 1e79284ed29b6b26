import Glibc

/// A path the user typed, as the daemon must be given it: absolute (the daemon has another
/// working directory), with a leading `~/` made `$HOME/` (`sotto chat`'s `/file` has no shell
/// to expand it).
///
/// ```swift
/// LocalPath.absolute("photo.jpg")      // "/home/ann/trip/photo.jpg" (in /home/ann/trip)
/// LocalPath.absolute("~/a.pdf")        // "/home/ann/a.pdf"
/// ```
enum LocalPath {
    static func absolute(_ path: String) -> String {
        if path.hasPrefix("/") { return path }
        if path.hasPrefix("~/"), let home = getenv("HOME").map({ String(cString: $0) }), home.hasPrefix("/") {
            return (home.hasSuffix("/") ? home : home + "/") + path.dropFirst(2)
        }
        guard let cwd = getcwd(nil, 0) else { return path }
        defer { free(cwd) }
        let directory = String(cString: cwd)
        return (directory.hasSuffix("/") ? directory : directory + "/") + path
    }
}
