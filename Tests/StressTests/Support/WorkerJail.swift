import Foundation

/// Runs each socket-activated worker under the unit's limits (sotto-push@.service:
/// MemoryMax=24M, 30 s) and records how it ended. systemd would put each worker in its own
/// cgroup; here a small bash wrapper does the same with a cgroup-v1 memory controller when
/// one is writable (root on this machine): it makes `w<pid>` under a per-run parent, sets
/// `memory.limit_in_bytes`, joins it, starts the real `sotto-notify` with the socket still
/// on fd 3 (re-pointing `LISTEN_PID` at it, as systemd does), closes its own copy of the
/// connection, waits, and appends `status peakBytes oomKills durationMs label` to a stats file.
///
/// ```swift
/// let jail = try WorkerJail(directory: tmp.path)
/// let command = jail.command(["/path/sotto-notify"])
/// … after the run …
/// let stats = try jail.stats()       // one entry per worker process
/// jail.remove()
/// ```
final class WorkerJail: @unchecked Sendable {
    static let memoryLimitBytes: Int64 = 24 * 1024 * 1024
    static let deadlineMs: Int64 = 30_000

    let scriptPath: String
    let statsPath: String
    /// The per-run parent cgroup, or nil when no memory cgroup can be created here.
    let cgroupParent: String?

    struct Exit: Sendable {
        let status: Int32
        /// memory.max_usage_in_bytes of the worker's cgroup (anonymous memory and the page
        /// cache it touched, as MemoryMax counts it); -1 without a cgroup.
        let peakBytes: Int64
        let oomKills: Int
        let durationMs: Int64
        let label: String
    }

    init(directory: String) throws {
        scriptPath = directory + "/worker-jail.sh"
        statsPath = directory + "/worker-exits.txt"
        try Self.script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        chmod(scriptPath, 0o700)
        FileManager.default.createFile(atPath: statsPath, contents: nil)
        cgroupParent = Self.makeParentCgroup()
    }

    /// The command line to hand `systemd-socket-activate` instead of the bare worker.
    /// `label` names the run mode in the stats (`yes`: one push per process, `no`: many).
    func command(_ worker: [String], label: String) -> [String] {
        ["/bin/bash", scriptPath, cgroupParent ?? "-", statsPath, String(Self.memoryLimitBytes), label] + worker
    }

    func stats() throws -> [Exit] {
        let text = try String(contentsOfFile: statsPath, encoding: .utf8)
        return text.split(separator: "\n").compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count == 5, let status = Int32(fields[0]), let peak = Int64(fields[1]),
                  let oom = Int(fields[2]), let duration = Int64(fields[3]) else { return nil }
            return Exit(status: status, peakBytes: peak, oomKills: oom, durationMs: duration, label: String(fields[4]))
        }
    }

    /// Peak resident set (VmHWM) of the live workers in this jail, in bytes: how much of the
    /// limit a long-lived Accept=no worker's own memory uses, page cache aside.
    func liveWorkerPeakRSS() -> [Int64] {
        guard let parent = cgroupParent,
              let children = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return [] }
        var peaks: [Int64] = []
        for child in children where child.hasPrefix("w") {
            guard let procs = try? String(contentsOfFile: "\(parent)/\(child)/cgroup.procs", encoding: .utf8) else { continue }
            for pid in procs.split(separator: "\n") {
                guard let comm = try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8),
                      comm.hasPrefix("sotto-notify"),
                      let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
                      let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
                      let kb = Int64(line.split(separator: " ").dropFirst().first ?? "") else { continue }
                peaks.append(kb * 1024)
            }
        }
        return peaks
    }

    /// Removes the parent cgroup (every worker cgroup is removed by its wrapper).
    func remove() {
        if let parent = cgroupParent { rmdir(parent) }
    }

    private static func makeParentCgroup() -> String? {
        guard let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
              let line = membership.split(separator: "\n").first(where: { $0.split(separator: ":").dropFirst().first == "memory" })
        else { return nil }
        let own = line.split(separator: ":", maxSplits: 2).last.map(String.init) ?? "/"
        let parent = "/sys/fs/cgroup/memory" + (own == "/" ? "" : own) + "/sotto-stress-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        guard mkdir(parent, 0o755) == 0 else { return nil }
        // Probe: a limit must be settable, or there is no enforcement to speak of.
        guard (try? "\(memoryLimitBytes)".write(toFile: parent + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)) != nil else {
            rmdir(parent)
            return nil
        }
        // The parent itself stays unlimited: with use_hierarchy the workers' usage adds up in it.
        _ = try? "-1".write(toFile: parent + "/memory.limit_in_bytes", atomically: false, encoding: .utf8)
        return parent
    }

    private static let script = #"""
        #!/bin/bash
        # worker-jail.sh PARENT_CGROUP|- STATS_FILE LIMIT_BYTES LABEL COMMAND...
        parent=$1 stats=$2 limit=$3 label=$4
        shift 4
        cg=
        if [ "$parent" != - ]; then
          cg=$parent/w$$
          if mkdir "$cg" 2>/dev/null && echo "$limit" > "$cg/memory.limit_in_bytes" && echo $$ > "$cg/cgroup.procs"; then :; else
            rmdir "$cg" 2>/dev/null; cg=
          fi
        fi
        start=${EPOCHREALTIME/./}
        ( export LISTEN_PID=$BASHPID; exec "$@" ) &
        child=$!
        exec 3>&-
        wait $child
        status=$?
        end=${EPOCHREALTIME/./}
        peak=-1 oom=0
        if [ -n "$cg" ]; then
          echo $$ > "$parent/cgroup.procs"
          peak=$(cat "$cg/memory.max_usage_in_bytes")
          oom=$(while read -r key value; do [ "$key" = oom_kill ] && echo "$value"; done < "$cg/memory.oom_control")
          rmdir "$cg"
        fi
        echo "$status $peak ${oom:-0} $(( (end - start) / 1000 )) $label" >> "$stats"
        """#
}

extension WorkerJail {
    static func fileSize(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_size) : 0
    }
}
