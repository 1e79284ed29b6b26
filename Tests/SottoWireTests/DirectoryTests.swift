import Foundation
import SottoWire
import TestSupport
import Testing

@Suite("Group and runtime directories")
struct DirectoryTests {
    @Test func resolutionOrder() {
        let env = ["SOTTO_GROUP_DIR": "/g", "XDG_DATA_HOME": "/data", "HOME": "/home/u"]
        #expect(GroupDirectory.resolve(explicit: "/x", environment: env).path == "/x")
        #expect(GroupDirectory.resolve(explicit: nil, environment: env).path == "/g")
        #expect(GroupDirectory.resolve(explicit: nil, environment: ["XDG_DATA_HOME": "/data", "HOME": "/home/u"]).path == "/data/sotto")
        #expect(GroupDirectory.resolve(explicit: nil, environment: ["HOME": "/home/u"]).path == "/home/u/.local/share/sotto")
        let dir = GroupDirectory(path: "/g")
        #expect(dir.databasePath == "/g/shared.sqlite" && dir.keystorePath == "/g/keystore")
        let run = RuntimeDirectory.resolve(environment: ["XDG_RUNTIME_DIR": "/run/user/7"])
        #expect(run.path == "/run/user/7/sotto")
        #expect(RuntimeDirectory.resolve(environment: ["SOTTO_RUNTIME_DIR": "/r", "XDG_RUNTIME_DIR": "/q"]).path == "/r")
        #expect(run.controlSocketPath == "/run/user/7/sotto/control.sock")
        #expect(run.eventsSocketPath.hasSuffix("/events.sock") && run.pushSocketPath.hasSuffix("/push.sock"))
    }

    @Test func createMakesPrivateDirectoriesAndRefusesUnsafeOnes() throws {
        let tmp = try TemporaryDirectory()
        let dir = GroupDirectory(path: tmp.path + "/a/b/sotto")
        try dir.create()
        let attrs = try FileManager.default.attributesOfItem(atPath: dir.path)
        #expect((attrs[.posixPermissions] as? Int) == 0o700)
        try dir.create()   // again: fine

        let open = tmp.path + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        #expect(throws: DirectoryError.self) { try GroupDirectory(path: open).create() }

        let link = tmp.path + "/link"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: dir.path)
        #expect(throws: DirectoryError.self) { try GroupDirectory(path: link).create() }
    }

    @Test func processEnvironmentReadsEnviron() {
        let env = ProcessEnvironment.current()
        #expect(env["PATH"] == ProcessInfo.processInfo.environment["PATH"])
    }
}
