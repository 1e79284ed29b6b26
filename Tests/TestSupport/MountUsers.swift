import Foundation

/// The processes that still use a mount: an open file, a working directory or a mapping
/// under it. A worker acks before it closes the database, and `systemd-socket-activate`
/// does not wait for its children when stopped, so a power cycle must wait for these to go
/// before it unmounts (`fusermount3 -u` fails with EBUSY while any is left).
///
/// ```swift
/// try MountUsers.waitUntilNone(under: disk.mountpoint, timeout: 30)
/// ```
public enum MountUsers {
    public struct StillInUse: Error, CustomStringConvertible {
        public let description: String
    }

    /// "pid (comm)" of every process with a file, directory or mapping under `mountpoint`.
    public static func holders(under mountpoint: String) -> [String] {
        let prefix = mountpoint.hasSuffix("/") ? mountpoint : mountpoint + "/"
        let isUnder = { (path: String) in path == mountpoint || path.hasPrefix(prefix) }
        let pids = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { Int32($0) }
        return pids.compactMap { pid -> String? in
            let base = "/proc/\(pid)"
            var paths = [readLink(base + "/cwd"), readLink(base + "/root")].compactMap { $0 }
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: base + "/fd")) ?? [] {
                if let target = readLink(base + "/fd/" + fd) { paths.append(target) }
            }
            let maps = (try? String(contentsOfFile: base + "/maps", encoding: .utf8)) ?? ""
            paths += maps.split(separator: "\n").compactMap { line in line.firstIndex(of: "/").map { String(line[$0...]) } }
            guard paths.contains(where: isUnder) else { return nil }
            let name = (try? String(contentsOfFile: base + "/comm", encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? "?"
            return "\(pid) (\(name))"
        }
    }

    /// Returns once no process uses the mount; throws naming the users after `timeout` seconds.
    public static func waitUntilNone(under mountpoint: String, timeout: TimeInterval) throws {
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let users = holders(under: mountpoint)
            if users.isEmpty { return }
            guard Date() < deadline else {
                throw StillInUse(description: "\(mountpoint) still in use after \(Int(timeout)) s by \(users.joined(separator: ", "))")
            }
            usleep(10_000)
        }
    }

    private static func readLink(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
