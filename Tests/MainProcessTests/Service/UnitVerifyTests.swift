import Foundation
@testable import DaemonProcess
@testable import SottoDaemon
import Testing
import TestSupport

/// `systemd-analyze verify --user` on every shipped unit, both push-socket variants, rendered
/// with ExecStart pointing at the built binaries. Any stderr fails: verify exits 0 on
/// unknown keys and only warns.
@Suite("Systemd units")
struct UnitVerifyTests {
    @Test("systemd-analyze verify accepts every unit without a word on stderr",
          arguments: [("", ["sotto.service", "sotto-push.socket", "sotto-push@.service", "sotto-relayd.service"]),
                      ("accept-no", ["sotto-push.socket", "sotto-push.service"])])
    func verify(variant: String, units: [String]) throws {
        let binDirectory = URL(fileURLWithPath: try builtExecutable("sotto-notify")).deletingLastPathComponent().path
        #expect(FileManager.default.isExecutableFile(atPath: binDirectory + "/sotto"))
        var source = PackagePaths.root.appendingPathComponent("systemd").path
        if !variant.isEmpty { source += "/" + variant }
        let installer = UnitInstaller(unitsDirectory: source)
        let tmp = try TemporaryDirectory(prefix: "sotto-units")
        let runtime = tmp.path + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        var written: [String] = []
        for name in units {
            let text = try installer.render(unitNamed: name, binDirectory: binDirectory)
            if name.hasSuffix(".service") { #expect(text.contains("ExecStart=\(binDirectory)/"), "\(name) not rendered") }
            try text.write(toFile: tmp.path + "/" + name, atomically: true, encoding: .utf8)
            written.append(name)
        }
        let result = try ChildProcess.run("/usr/bin/systemd-analyze", ["verify", "--user"] + written,
                                          environment: ["XDG_RUNTIME_DIR": runtime], directory: tmp.path)
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.isEmpty, "\(variant.isEmpty ? "accept-yes" : variant): \(result.stderr)")
    }

    @Test("The units compiled into sotto are the files in systemd/ (run scripts/embed-units.sh)",
          arguments: UnitInstaller.unitNames)
    func embeddedUnitsMatchTheRepository(name: String) throws {
        let file = try String(contentsOf: PackagePaths.root.appendingPathComponent("systemd/\(name)"), encoding: .utf8)
        #expect(UnitTemplates.byName[name] == file, "\(name) differs from systemd/\(name): run scripts/embed-units.sh")
    }
}
