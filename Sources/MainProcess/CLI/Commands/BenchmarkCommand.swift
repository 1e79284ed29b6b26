import ArgumentParser

/// `sotto benchmark` (hidden): the daemon's in-memory benchmarks, run in the real binary
/// because an executable's code cannot be imported by a separate benchmark target.
/// `Benchmarks/daemon-bench.sh` builds release and runs it.
struct BenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "benchmark", abstract: "Run the daemon's in-memory benchmarks and print figures.",
        shouldDisplay: false)

    @Flag(name: .long, help: "Only the rebalance on a real database (10,000 inboxes, 10,000 and 1,000,000 messages).")
    var databaseOnly = false

    func run() {
        DaemonBenchmarks.run(databaseOnly: databaseOnly)
    }
}
