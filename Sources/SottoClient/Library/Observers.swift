import Synchronization

/// Handlers waiting for a value, each called (on the library's own thread, never the
/// caller's) with every new value until its `Observation` is cancelled.
///
/// ```swift
/// let observers = Observers<Int>()
/// let observation = observers.add { print($0) }
/// observers.notify(1)      // prints 1
/// observation.cancel()
/// ```
public final class Observers<Value: Sendable>: Sendable {
    private let handlers = Mutex<(next: Int, byId: [Int: @Sendable (Value) -> Void])>((0, [:]))

    public init() {}

    /// Registers `handler`; it is called until the returned observation is cancelled.
    public func add(_ handler: @escaping @Sendable (Value) -> Void) -> Observation {
        let id = handlers.withLock { state in
            state.next += 1
            state.byId[state.next] = handler
            return state.next
        }
        return Observation { [weak self] in self?.remove(id) }
    }

    /// Calls every handler with `value`, outside the lock (a handler may add or cancel).
    public func notify(_ value: Value) {
        let current = handlers.withLock { Array($0.byId.values) }
        for handler in current { handler(value) }
    }

    private func remove(_ id: Int) {
        _ = handlers.withLock { $0.byId.removeValue(forKey: id) }
    }
}

/// A registration with `Observers`, ended by `cancel()` (or by being dropped).
///
/// ```swift
/// let observation = timeline.observe { snapshot in redraw(snapshot) }
/// observation.cancel()
/// ```
public final class Observation: Sendable {
    private let onCancel: Mutex<(@Sendable () -> Void)?>

    init(_ onCancel: @escaping @Sendable () -> Void) { self.onCancel = Mutex(onCancel) }

    public func cancel() {
        let action = onCancel.withLock { action in
            defer { action = nil }
            return action
        }
        action?()
    }

    deinit { cancel() }
}
