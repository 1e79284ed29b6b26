import Foundation

/// Installs Sotto for the current user: the two binaries into a bin directory and the unit
/// files from `systemd/` into `~/.config/systemd/user`, with `ExecStart=` pointing at the
/// installed binaries; then, where a user manager runs, reloads and enables them.
///
/// ```swift
/// let installer = try UnitInstaller(unitsDirectory: nil)   // finds systemd/ near the binary
/// let text = installer.render(unitNamed: "sotto.service", binDirectory: "/opt/sotto/bin")
/// ```
struct UnitInstaller {
    /// The units of the default (Accept=yes) installation.
    static let unitNames = ["sotto.service", "sotto-push.socket", "sotto-push@.service"]
    /// What the shipped units say; replaced by the real bin directory when rendering.
    static let placeholderBinDirectory = "%h/.local/bin"

    let unitsDirectory: URL

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Uses `unitsDirectory`, else the first of `<exe>/../share/sotto/systemd` (an installed
    /// prefix) and `systemd/` of the source checkout the binary was built in.
    init(unitsDirectory: String?) throws {
        if let unitsDirectory {
            self.unitsDirectory = URL(fileURLWithPath: unitsDirectory)
            return
        }
        let executable = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        var candidates = [executable.deletingLastPathComponent().appendingPathComponent("../share/sotto/systemd")]
        var directory = executable.deletingLastPathComponent()
        for _ in 0..<5 {
            candidates.append(directory.appendingPathComponent("systemd"))
            directory.deleteLastPathComponent()
        }
        guard let found = candidates.first(where: {
            FileManager.default.fileExists(atPath: $0.appendingPathComponent("sotto.service").path)
        }) else {
            throw Failure(description: "unit files not found; pass --units-dir PATH (the repository's systemd/ folder)")
        }
        self.unitsDirectory = found.standardized
    }

    func render(unitNamed name: String, binDirectory: String) throws -> String {
        let text = try String(contentsOf: unitsDirectory.appendingPathComponent(name), encoding: .utf8)
        return text.replacingOccurrences(of: Self.placeholderBinDirectory + "/", with: binDirectory + "/")
    }

    /// Copies binaries and writes rendered units. Returns the paths written.
    func install(binaries: [URL], binDirectory: URL, unitDirectory: URL) throws -> [String] {
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
        return written
    }
}
