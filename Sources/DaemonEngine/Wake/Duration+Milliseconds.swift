extension Duration {
    /// Whole milliseconds, at least 1: what `WakeSignal.sleep` takes.
    ///
    /// ```swift
    /// Duration.microseconds(100_500).wholeMilliseconds   // 100
    /// ```
    public var wholeMilliseconds: Int64 {
        max(1, components.seconds * 1000 + components.attoseconds / 1_000_000_000_000_000)
    }
}
