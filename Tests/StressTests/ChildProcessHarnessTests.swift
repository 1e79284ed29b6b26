import Foundation
import Testing
import TestSupport

/// The harness's way of starting children (`Spawn`, `ChildProcess`), tested on itself: what
/// the other tests rely on when they wait for a child's output to end.
@Suite("Harness: children and their pipes")
struct ChildProcessHarnessTests {
    @Test("a child that writes 256 KiB to stderr before 256 KiB to stdout finishes: both streams are read at once (stdout first would wait forever on a full stderr pipe)")
    func bothStreamsDrain() throws {
        let result = try ChildProcess.run("/bin/sh", ["-c", "head -c 262144 /dev/zero | tr '\\\\0' e >&2; head -c 262144 /dev/zero | tr '\\\\0' o"])
        #expect(result.status == 0)
        #expect(result.stderr.utf8.count == 262_144)
        #expect(result.stdout.utf8.count == 262_144)
    }

    @Test("a child started while another child's pipes are open holds none of them (close-on-exec from birth), and the first child's output ends when it exits")
    func pipesAreNotInherited() throws {
        let first = try ChildProcess.launch("/bin/cat")
        let second = try ChildProcess.launch("/bin/sleep", ["30"])
        // The first child's three pipes (one inode for both ends of each): the second holds none.
        let firstPipes = Set([0, 1, 2].compactMap { Self.pipeInode(pid: first.pid, fd: $0) })
        #expect(firstPipes.count == 3)
        let held = Self.pipeInodes(of: second.pid).intersection(firstPipes)
        #expect(held.isEmpty, "the second child holds the first's pipes \(held)")
        second.terminate()  // before the first's end of file, which a holder would delay
        first.write("last line\n")
        #expect(first.finish().stdout == "last line\n")
    }

    @Test("exit statuses: a code as the child gave it, a signal's death as the signal's number")
    func statuses() throws {
        #expect(try ChildProcess.run("/bin/sh", ["-c", "exit 3"]).status == 3)
        let child = try ChildProcess.launch("/bin/sleep", ["30"])
        child.kill(SIGKILL)
        #expect(child.waitForExit() == SIGKILL)
        #expect(!child.isRunning)
    }

    private static func pipeInodes(of pid: pid_t) -> Set<String> {
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        return Set(fds.compactMap { Int32($0).flatMap { pipeInode(pid: pid, fd: $0) } })
    }

    private static func pipeInode(pid: pid_t, fd: Int32) -> String? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(fd)"),
              target.hasPrefix("pipe:") else { return nil }
        return target
    }
}
