/// A number the daemon reads from its environment (a `SOTTO_…_MS` or `SOTTO_…_BYTES` knob):
/// absent is the default; anything but a whole number within `range` stops the daemon at start
/// with exit 78 and a line that names the variable, the value, the unit and the range.
///
/// ```swift
/// let setting = NumberSetting(variable: "SOTTO_REBALANCE_MS", default: 60_000, range: 100...86_400_000)
/// let ms = try setting.read(ProcessInfo.processInfo.environment)
/// ```
public struct NumberSetting: Sendable, Equatable {
    public enum Unit: String, Sendable {
        case milliseconds
        case bytes
    }

    public struct Invalid: Error, CustomStringConvertible, Equatable {
        let variable: String
        let value: String
        let range: ClosedRange<Int64>
        let unit: Unit
        public var description: String {
            "\(variable)=\(value) is not a number of \(unit.rawValue) from \(range.lowerBound) to \(range.upperBound)"
        }
    }

    public let variable: String
    public let defaultValue: Int64
    public let range: ClosedRange<Int64>
    public let unit: Unit

    public init(variable: String, default defaultValue: Int64, range: ClosedRange<Int64>, unit: Unit = .milliseconds) {
        self.variable = variable
        self.defaultValue = defaultValue
        self.range = range
        self.unit = unit
    }

    public func read(_ environment: [String: String]) throws(Invalid) -> Int64 {
        guard let text = environment[variable] else { return defaultValue }
        guard let value = Int64(text), range.contains(value) else {
            throw Invalid(variable: variable, value: text, range: range, unit: unit)
        }
        return value
    }
}
