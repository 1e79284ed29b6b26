import Foundation

/// `SOTTO_STRESS_PROFILE`: `full` under `make stress`, else the short profile of `make test`.
/// Read here for the stress suite's `StressProfile` and for the power-cut tests of other
/// suites (`PowerCutRound.plan`).
public enum StressProfileVariable {
    public static let name = "SOTTO_STRESS_PROFILE"
    public static var isFull: Bool { ProcessInfo.processInfo.environment[name] == "full" }
}

/// One round of a test that kills a process at a named step with the power cut at the same
/// moment: the step (a crash point, or a case naming one) and the kind of cut.
///
/// ```swift
/// let rounds = PowerCutRound.plan(steps: ["receipts.sealed", "notice.delivered"], tornAt: "receipts.sealed", seed: 23)
/// // short: each step with `.all`, then receipts.sealed torn (one cut more than `.all` alone)
/// // full: each step with `.all`, then each with a random half kept, then each torn
/// ```
public struct PowerCutRound<Step: Sendable>: Sendable, CustomStringConvertible {
    public let step: Step
    public let cut: PowerCutFileSystem.Cut

    public init(step: Step, cut: PowerCutFileSystem.Cut) {
        self.step = step
        self.cut = cut
    }

    public var description: String { "\(step), cut \(cut)" }

    /// Every step with all unsynced writes lost; then, in the short profile (`make test`, which
    /// must stay fast), one round more: `tornAt` with the last write torn; under the full
    /// profile (`make stress`) every step again with a seeded random half kept (50 %), and
    /// every step with the last write torn. Directory changes are lost in each kind
    /// (docs/adr/0037).
    public static func plan(steps: [Step], tornAt: Step, seed: UInt32,
                            full: Bool = StressProfileVariable.isFull) -> [PowerCutRound] {
        let all = steps.map { PowerCutRound(step: $0, cut: .all) }
        guard full else { return all + [PowerCutRound(step: tornAt, cut: .torn(seed: seed))] }
        return all + steps.map { PowerCutRound(step: $0, cut: .subset(seed: seed, keepPercent: 50)) }
            + steps.map { PowerCutRound(step: $0, cut: .torn(seed: seed)) }
    }
}
