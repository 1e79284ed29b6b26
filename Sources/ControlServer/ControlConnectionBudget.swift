/// The bytes of unfinished requests the control socket holds, all connections together
/// (docs/adr/0010): each connection may buffer `smallBufferBytes` freely (a normal request is
/// far smaller); what it holds beyond that is charged to one pool of `sharedBufferBytes`.
/// A connection that holds more than its free part while the pool is over is refused.
///
/// ```swift
/// var budget = ControlConnectionBudget(smallBufferBytes: 16 * 1024, sharedBufferBytes: 16 * 1024 * 1024)
/// var share = ControlConnectionBudget.Share()
/// budget.update(&share, holding: 250 * 1024)   // true while the pool allows; share.charged == 234 KB
/// budget.update(&share, holding: 0)            // everything given back
/// ```
struct ControlConnectionBudget {
    /// What one connection holds and how much of it the pool carries.
    struct Share {
        var held = 0
        var charged = 0
    }

    let smallBufferBytes: Int
    let sharedBufferBytes: Int
    /// What all connections hold beyond their free parts.
    private(set) var chargedBytes = 0
    /// What all connections hold, free parts included (`sotto status`: `control.bufferedBytes`).
    private(set) var heldBytes = 0

    init(smallBufferBytes: Int, sharedBufferBytes: Int) {
        self.smallBufferBytes = smallBufferBytes
        self.sharedBufferBytes = sharedBufferBytes
    }

    /// Records that a connection now holds `held` bytes. False when it holds more than its
    /// free part while the pool is over: that connection must be refused.
    @discardableResult
    mutating func update(_ share: inout Share, holding held: Int) -> Bool {
        let charged = max(0, held - smallBufferBytes)
        heldBytes += held - share.held
        chargedBytes += charged - share.charged
        share = Share(held: held, charged: charged)
        return charged == 0 || chargedBytes <= sharedBufferBytes
    }
}
