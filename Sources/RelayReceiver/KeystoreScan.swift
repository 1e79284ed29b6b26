import Glibc
import SottoWire

/// The clientIds of the identities in a keystore directory, read without its master key:
/// `<clientId>.identity` names, plus the clientId in the unused slot's header (the slot's
/// identity is the next inbox, and an invite answered before its first message must already
/// reach it). sotto-relayd never opens an identity: it needs no key.
///
/// ```swift
/// switch KeystoreScan.clientIds(in: group.keystorePath) {
/// case .found(let ids): …
/// case .unreadable(let why): …     // keep the last known set
/// }
/// ```
enum KeystoreScan {
    enum Result: Equatable {
        case found(Set<String>)
        case unreadable(String)
    }

    static let unusedName = "unused.identity"
    /// `IdentityRecord`'s header: "SOTTOKS1", then the clientId in ASCII.
    static let magic = Array("SOTTOKS1".utf8)

    static func clientIds(in directory: String) -> Result {
        guard let dir = opendir(directory) else {
            return .unreadable("cannot open \(directory): \(String(cString: strerror(errno)))")
        }
        defer { closedir(dir) }
        var ids = Set<String>()
        var sawUnused = false
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name == unusedName { sawUnused = true; continue }
            guard name.hasSuffix(".identity") else { continue }
            let clientId = String(name.dropLast(".identity".count))
            if ProtocolIds.isClientId(clientId) { ids.insert(clientId) }
        }
        if sawUnused, let unused = unusedClientId(path: directory + "/" + unusedName) {
            ids.insert(unused)
        }
        return .found(ids)
    }

    /// The clientId the unused slot's header claims (unauthenticated: the worst a forged one
    /// can do is make this device also fetch another mailbox, whose pushes it cannot open).
    static func unusedClientId(path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var header = [UInt8](repeating: 0, count: 44)
        let n = header.withUnsafeMutableBytes { read(fd, $0.baseAddress, 44) }
        guard n == 44, Array(header[0..<8]) == magic,
              let clientId = String(validating: header[8..<44], as: UTF8.self), ProtocolIds.isClientId(clientId)
        else { return nil }
        return clientId
    }
}
