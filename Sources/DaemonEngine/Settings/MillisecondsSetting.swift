/// A duration the daemon reads from its environment (a `SOTTO_…_MS` knob): absent is the
/// default; anything but a whole number of milliseconds within `range` stops the daemon at
/// start with exit 78 and a line that names the variable, the value and the range.
///
/// ```swift
/// let setting = MillisecondsSetting(variable: "SOTTO_REBALANCE_MS", defaultMs: 60_000, range: 100...86_400_000)
/// let ms = try setting.read(ProcessInfo.processInfo.environment)
/// ```
public struct MillisecondsSetting: Sendable, Equatable {
    public struct Invalid: Error, CustomStringConvertible, Equatable {
        let variable: String
        let value: String
        let range: ClosedRange<Int64>
        public var description: String {
            "\(variable)=\(value) is not a number of milliseconds from \(range.lowerBound) to \(range.upperBound)"
        }
    }

    public let variable: String
    public let defaultMs: Int64
    public let range: ClosedRange<Int64>

    public init(variable: String, defaultMs: Int64, range: ClosedRange<Int64>) {
        self.variable = variable
        self.defaultMs = defaultMs
        self.range = range
    }

    public func read(_ environment: [String: String]) throws(Invalid) -> Int64 {
        guard let text = environment[variable] else { return defaultMs }
        guard let value = Int64(text), range.contains(value) else { throw Invalid(variable: variable, value: text, range: range) }
        return value
    }
}
