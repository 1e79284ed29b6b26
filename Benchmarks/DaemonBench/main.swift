// The daemon's in-memory and database benchmarks; `Benchmarks/daemon-bench.sh` builds
// release and runs them. `DaemonBench --database-only` skips the in-memory part.
DaemonBenchmarks.run(databaseOnly: CommandLine.arguments.contains("--database-only"))
