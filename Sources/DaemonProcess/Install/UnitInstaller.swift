import Foundation
import SottoWire
import SottoClient
import SottoDaemon

/// Installs Sotto for one user: the two binaries into a bin directory and the user units
/// into the unit directory, with `ExecStart=` pointing at the installed binaries, and the
/// group directory the units name (it must exist before the sandbox is set up, docs/adr/0012).
/// The units come from `UnitTemplates` (compiled in), so an installed `sotto` can reinstall
/// and upgrade itself; `unitsDirectory` reads them from a folder instead (tests, variants).
///
/// ```swift
/// let installer = UnitInstaller(unitsDirectory: nil)
/// let text = try installer.render(unitNamed: "sotto.service", binDirectory: "/opt/sotto/bin")
/// ```
struct UnitInstaller {
    /// The units of the default (Accept=yes) installation. sotto-relayd.service is written but
    /// not enabled: it is for a device that uses a relay (docs/relay.md).
    static let unitNames = ["sotto.service", "sotto-push.socket", "sotto-push@.service", "sotto-relayd.service"]
    /// Units `install` restarts only when they run (`try-restart`), so that an upgrade reaches
    /// them too: sotto-relayd.service is enabled by the user, not by `install`.
    static let restartedIfRunning = ["sotto-relayd.service"]
    /// Every unit name Sotto has shipped (the Accept=no variant too): what uninstall removes.
    static let allUnitNames = unitNames + ["sotto-push.service"]
    static let binaryNames = ["sotto", "sotto-daemon", "sotto-notify", "sotto-relayd"]
    /// What the shipped units say; replaced by the real bin directory when rendering.
    static let placeholderBinDirectory = "%h/.local/bin"
    /// The group directory the units name (`SOTTO_GROUP_DIR=%h/.local/share/sotto`).
    static let groupDirectoryInHome = ".local/share/sotto"
    /// The relay settings both sotto.service and sotto-relayd.service read
    /// (`EnvironmentFile=%h/.config/sotto/relay.env`); the user writes it, uninstall keeps it.
    static let relaySettingsInHome = ".config/sotto/relay.env"

    let unitsDirectory: URL?

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    init(unitsDirectory: String?) {
        self.unitsDirectory = unitsDirectory.map { URL(fileURLWithPath: $0) }
    }

    /// The user's home: `$HOME` when it is an absolute path (what the user's manager expands
    /// `%h` to), else the password database's.
    static func home(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let home = environment["HOME"], home.hasPrefix("/") { return URL(fileURLWithPath: home) }
        return FileManager.default.homeDirectoryForCurrentUser
    }

    /// The directory of the running executable, where the binaries to install are.
    static func executableDirectory() -> URL {
        URL(fileURLWithPath: SiblingExecutable.directory).resolvingSymlinksInPath()
    }

    func template(named name: String) throws -> String {
        if let unitsDirectory {
            return try String(contentsOf: unitsDirectory.appendingPathComponent(name), encoding: .utf8)
        }
        guard let text = UnitTemplates.byName[name] else { throw Failure(description: "no unit named \(name)") }
        return text
    }

    func render(unitNamed name: String, binDirectory: String) throws -> String {
        try template(named: name).replacingOccurrences(of: Self.placeholderBinDirectory + "/", with: binDirectory + "/")
    }

    /// Copies binaries (each through a temporary file and a rename, so a running binary,
    /// this one included, is replaced, not overwritten), writes rendered units and creates
    /// the group directory (0700) when missing. Returns the paths written.
    func install(binaries: [URL], binDirectory: URL, unitDirectory: URL, groupDirectory: URL) throws -> [String] {
        let fileManager = FileManager.default
        try fileManager.createDirectory(at: binDirectory, withIntermediateDirectories: true)
        try fileManager.createDirectory(at: unitDirectory, withIntermediateDirectories: true)
        var written: [String] = []
        for binary in binaries {
            let target = binDirectory.appendingPathComponent(binary.lastPathComponent)
            let temporary = binDirectory.appendingPathComponent(".\(binary.lastPathComponent).new")
            try? fileManager.removeItem(at: temporary)
            try fileManager.copyItem(at: binary, to: temporary)
            chmod(temporary.path, 0o755)
            guard rename(temporary.path, target.path) == 0 else {
                throw Failure(description: "cannot install \(target.path): errno \(errno)")
            }
            written.append(target.path)
        }
        for name in Self.unitNames {
            let target = unitDirectory.appendingPathComponent(name)
            try render(unitNamed: name, binDirectory: binDirectory.path).write(to: target, atomically: true, encoding: .utf8)
            written.append(target.path)
        }
        if !fileManager.fileExists(atPath: groupDirectory.path) {
            try fileManager.createDirectory(at: groupDirectory.deletingLastPathComponent(), withIntermediateDirectories: true)
            try fileManager.createDirectory(at: groupDirectory, withIntermediateDirectories: false,
                                            attributes: [.posixPermissions: 0o700])
            written.append(groupDirectory.path)
        }
        return written
    }
}
