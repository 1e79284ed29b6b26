import CSodium

/// A fixed-size buffer for key material that is zeroed (with `sodium_memzero`, which the
/// compiler cannot elide) when the last reference goes away. Arrays cannot promise that:
/// copy-on-write may leave copies behind.
///
/// ```swift
/// let key = SecretBytes(SecureRandom.bytes(32))
/// key.withUnsafeBytes { buffer in use(buffer) }
/// ```
public final class SecretBytes: @unchecked Sendable {
    // @unchecked: the buffer is written only in `init` and zeroed only in `deinit`; in between
    // it is read-only, so sharing across threads is safe.
    private let buffer: UnsafeMutableRawBufferPointer

    public init<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 16)
        buffer.initializeMemory(as: UInt8.self, repeating: 0)
        buffer.copyBytes(from: bytes)
        count = bytes.count
    }

    /// Takes `bytes`, then zeroes the caller's array.
    public convenience init(consuming bytes: inout [UInt8]) {
        self.init(bytes)
        Self.zero(&bytes)
    }

    deinit {
        sodium_memzero(buffer.baseAddress, buffer.count)
        buffer.deallocate()
    }

    public let count: Int

    public func withUnsafeBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[0..<count]))
    }

    /// A copy as an array, for serialisation. The caller owns zeroing it.
    public func copyBytes() -> [UInt8] {
        withUnsafeBytes { Array($0) }
    }

    /// Constant-time comparison.
    public func isEqual(to other: SecretBytes) -> Bool {
        guard count == other.count else { return false }
        return withUnsafeBytes { mine in
            other.withUnsafeBytes { theirs in sodium_memcmp(mine.baseAddress, theirs.baseAddress, count) == 0 }
        }
    }

    /// Zeroes an array in place (best effort: earlier copies made by copy-on-write are out of reach).
    public static func zero(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) }
    }
}
