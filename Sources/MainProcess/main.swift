import Foundation
// Temporary hook until the lead exposes `sotto benchmark`.
if ProcessInfo.processInfo.environment["SOTTO_RUN_BENCHMARK"] == "1" { DaemonBenchmarks.run(); exit(0) }
print("sotto")
