import Foundation
import Testing
import TestSupport

/// `sotto install --user --no-enable` and `sotto uninstall --user` without a service manager:
/// which files go where (under `$HOME`, not the password database's home), and what stays.
/// The real-manager flow is Tests/SystemdTests.
@Suite("Install files")
struct InstallFilesTests {
    @Test("install writes under $HOME with the group directory at 0700; uninstall keeps only the data")
    func filesUnderHome() throws {
        let home = try TemporaryDirectory(prefix: "sotto-inst")
        // No user manager reachable through these (a developer's real one must not be touched).
        let environment = ["HOME": home.path, "XDG_CONFIG_HOME": "", "XDG_RUNTIME_DIR": home.path + "/run",
                           "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(home.path)/no-bus"]
        let install = try ChildProcess.run(try builtExecutable("sotto"), ["install", "--user", "--no-enable"],
                                           environment: environment, directory: "/")
        #expect(install.status == 0, "\(install.stderr)")
        let bin = home.path + "/.local/bin"
        #expect(FileManager.default.isExecutableFile(atPath: bin + "/sotto"))
        #expect(FileManager.default.isExecutableFile(atPath: bin + "/sotto-notify"))
        let service = try String(contentsOfFile: home.path + "/.config/systemd/user/sotto.service", encoding: .utf8)
        #expect(service.contains("ExecStart=\(bin)/sotto daemon"))
        let group = home.path + "/.local/share/sotto"
        let mode = (try FileManager.default.attributesOfItem(atPath: group)[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o700, "group directory mode \(String(mode, radix: 8))")

        // The installed binary reinstalls itself, found through PATH from another directory.
        let again = try ChildProcess.run("/bin/sh", ["-c", "PATH=\(bin):$PATH exec sotto install --user --no-enable"],
                                         environment: environment, directory: "/")
        #expect(again.status == 0, "\(again.stderr)")

        let uninstall = try ChildProcess.run(bin + "/sotto", ["uninstall", "--user"],
                                             environment: environment.merging(["PATH": "/usr/bin:/bin"]) { $1 }, directory: "/")
        #expect(uninstall.stdout.contains("no systemd user manager reachable"), "\(uninstall.stdout)")
        #expect(uninstall.stdout.contains("kept your data in \(group)"), "\(uninstall.stdout) \(uninstall.stderr)")
        #expect(!FileManager.default.fileExists(atPath: bin + "/sotto"))
        #expect(!FileManager.default.fileExists(atPath: home.path + "/.config/systemd/user/sotto.service"))
        #expect(FileManager.default.fileExists(atPath: group))
    }
}
