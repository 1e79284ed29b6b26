import Foundation
import Testing
import TestSupport

/// `sotto` is the client; the daemon's side is `sotto-daemon` (docs/adr/0068). What a user
/// runs must not notice: the same verbs, the same help, the daemon keeping the pid systemd
/// started (DaemonTypedClientTests checks `status.pid` against the spawned pid).
@Suite("The client binary")
struct ClientBinaryTests {
    /// What a statically linked Swift program still needs from the system.
    static let allowedLibraries = ["linux-vdso", "ld-linux", "libc.so", "libm.so", "libstdc++.so", "libgcc_s.so",
                                   "libdl.so", "libpthread.so", "libutil.so", "librt.so"]

    @Test("sotto loads no shared library of the daemon's, nor the Swift runtime or Foundation")
    func linksOnlyTheSystemsC() throws {
        let sotto = try builtExecutable("sotto")
        // A static executable (docs/adr/0068): ldd says so and lists nothing.
        let ldd = try ChildProcess.run("/usr/bin/ldd", [sotto])
        #expect(ldd.status == 0 || (ldd.stdout + ldd.stderr).contains("not a dynamic executable"))
        // "libm.so.6 => /lib/…", "/lib64/ld-linux-x86-64.so.2 (…)": the name is the first word's last component.
        let loaded = ldd.stdout.split(separator: "\n").compactMap { $0.split(whereSeparator: { $0 == " " || $0 == "\t" }).first?.split(separator: "/").last.map(String.init) }
        let unexpected = loaded.filter { name in !Self.allowedLibraries.contains { name.hasPrefix($0) } }
        #expect(unexpected.isEmpty, "sotto loads \(unexpected)")
        // The daemon's binary is the one that links them: the check above can fail.
        let daemon = try ChildProcess.run("/usr/bin/ldd", [try builtExecutable("sotto-daemon")]).stdout
        #expect(daemon.contains("libsqlite3") && daemon.contains("libsecret") && daemon.contains("libnats"))
    }

    @Test("the daemon's verbs answer through sotto as before: help, options, usage errors")
    func daemonVerbsPassThrough() throws {
        let sotto = try builtExecutable("sotto")
        let overview = try ChildProcess.run(sotto, ["--help"])
        for verb in ["daemon", "install", "uninstall", "repair", "key", "ls", "send", "chat"] {
            #expect(overview.stdout.contains(" \(verb) "), "sotto --help lists \(verb)")
        }
        let install = try ChildProcess.run(sotto, ["install", "--help"])
        #expect(install.status == 0)
        #expect(install.stdout.contains("--bin-dir") && install.stdout.contains("USAGE: sotto install"))
        let key = try ChildProcess.run(sotto, ["key", "--help"])
        #expect(key.status == 0 && key.stdout.contains("export") && key.stdout.contains("import"))
        let bogus = try ChildProcess.run(sotto, ["daemon", "--capacity", "0"])
        #expect(bogus.status == 64 && bogus.stderr.contains("--capacity must be between 1 and 10000"))
    }

    @Test("without sotto-daemon beside it, sotto daemon says what is missing and exits 1")
    func missingDaemonBinary() throws {
        // A hard link beside the build, not a copy: a copy's write descriptor, inherited by a
        // child another test spawns meanwhile, makes exec fail with "Text file busy".
        let sotto = try builtExecutable("sotto")
        let directory = URL(fileURLWithPath: sotto).deletingLastPathComponent().appendingPathComponent("sotto-alone-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let alone = directory.appendingPathComponent("sotto").path
        #expect(link(sotto, alone) == 0)
        let run = try ChildProcess.run(alone, ["daemon"])
        #expect(run.status == 1)
        #expect(run.stderr.contains("sotto daemon: \(directory.path)/sotto-daemon is missing; build or install it first"))
        // A client verb does not need it.
        #expect(try ChildProcess.run(alone, ["--version"]).status == 0)
    }
}
