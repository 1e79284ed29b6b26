import CSecp256k1

/// The one libsecp256k1 context of the process, created with `SECP256K1_CONTEXT_NONE` and
/// randomized once (blinding against side channels) the first time it is used.
///
/// ```swift
/// let ok = secp256k1_ec_seckey_verify(Secp256k1.context.pointer, key) == 1
/// ```
public enum Secp256k1 {
    /// A global `let` is initialised lazily, exactly once, thread-safely.
    public static let context = Secp256k1Context()
}

/// Owns a randomized libsecp256k1 context for the whole process lifetime.
///
/// ```swift
/// let ctx = Secp256k1.context.pointer
/// ```
public final class Secp256k1Context: @unchecked Sendable {
    // @unchecked: libsecp256k1 documents that a context may be used concurrently from many
    // threads by every function except `secp256k1_context_randomize` (and destroy/clone).
    // Randomize runs once, here in `init`, before the context is published through a global
    // `let`, and the context is never destroyed; afterwards it is only read.
    public let pointer: OpaquePointer

    init() {
        guard let context = secp256k1_context_create(UInt32(SECP256K1_CONTEXT_NONE)) else {
            fatalError("secp256k1_context_create failed")
        }
        var seed = SecureRandom.bytes(32)
        let randomized = secp256k1_context_randomize(context, seed)
        SecretBytes.zero(&seed)
        precondition(randomized == 1, "secp256k1_context_randomize failed")
        pointer = context
    }
}
