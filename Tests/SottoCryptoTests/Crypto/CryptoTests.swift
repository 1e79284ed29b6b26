import SottoCrypto
import SottoWire
import Testing

@Suite("Crypto primitives")
struct CryptoTests {
    @Test func sha256KnownAnswer() {
        #expect(Hex.encode(SHA256.hash(Array("abc".utf8))) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test func hmacRFC4231Case1() {
        let tag = HMACSHA256.authenticate(Array("Hi There".utf8), key: [UInt8](repeating: 0x0b, count: 20))
        #expect(Hex.encode(tag) == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7")
    }

    @Test func hkdfRFC5869Case1() {
        let okm = HKDFSHA256.derive(ikm: [UInt8](repeating: 0x0b, count: 22), salt: Array(0x00...0x0c),
                                    info: Array(0xf0...0xf9), length: 42)
        #expect(Hex.encode(okm) == "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865")
    }

    @Test func chachaPolyRoundTripAndTamper() throws {
        let key = SecureRandom.bytes(32), nonce = SecureRandom.bytes(12), aad = Array("aad".utf8)
        let plain = Array("attack at dawn".utf8)
        let sealed = try ChaCha20Poly1305.seal(plain, key: key, nonce: nonce, aad: aad)
        #expect(sealed.count == plain.count + 16)
        #expect(try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, aad: aad) == plain)
        var flipped = sealed
        flipped[0] ^= 1
        #expect(throws: CryptoError.authenticationFailed) { try ChaCha20Poly1305.open(flipped, key: key, nonce: nonce, aad: aad) }
        #expect(throws: CryptoError.authenticationFailed) { try ChaCha20Poly1305.open(sealed, key: key, nonce: nonce, aad: []) }
        #expect(throws: CryptoError.authenticationFailed) { try ChaCha20Poly1305.open([1, 2], key: key, nonce: nonce, aad: aad) }
        #expect(try ChaCha20Poly1305.open(try ChaCha20Poly1305.seal([], key: key, nonce: nonce, aad: []), key: key, nonce: nonce, aad: []) == [])
    }

    @Test func signVerifyAndWrongKey() throws {
        let key = PrivateKey.generate(), other = PrivateKey.generate()
        let digest = SHA256.hash(Array("message".utf8))
        let signature = key.sign(digest: digest)
        #expect(signature.count == 64)
        #expect(key.publicKey.isValidSignature(signature, digest: digest))
        #expect(!other.publicKey.isValidSignature(signature, digest: digest))
        #expect(!key.publicKey.isValidSignature(signature, digest: SHA256.hash(Array("other".utf8))))
        #expect(!key.publicKey.isValidSignature([UInt8](repeating: 0xff, count: 64), digest: digest))
    }

    @Test func highSSignatureIsAccepted() {
        let key = PrivateKey.generate()
        let digest = SHA256.hash(Array("malleable".utf8))
        let low = key.sign(digest: digest)
        // s' = n - s: the same signature with high S.
        let n = Hex.decode("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141")!
        var high = Array(low[0..<32])
        var borrow = 0
        var s = [UInt8](repeating: 0, count: 32)
        for i in stride(from: 31, through: 0, by: -1) {
            let value = Int(n[i]) - Int(low[32 + i]) - borrow
            s[i] = UInt8((value + 256) % 256)
            borrow = value < 0 ? 1 : 0
        }
        high += s
        #expect(high != low)
        #expect(key.publicKey.isValidSignature(high, digest: digest))
    }

    @Test func ecdhIsSymmetricAndRawX() throws {
        let a = PrivateKey.generate(), b = PrivateKey.generate()
        let ab = try a.sharedSecretX(with: b.publicKey)
        #expect(ab == (try b.sharedSecretX(with: a.publicKey)))
        #expect(ab.count == 32)
    }

    @Test func keyValidation() throws {
        #expect(throws: CryptoError.invalidPrivateKey) { try PrivateKey(bytes: [UInt8](repeating: 0, count: 32)) }
        #expect(throws: CryptoError.invalidPrivateKey) { try PrivateKey(bytes: [UInt8](repeating: 0xff, count: 32)) }
        #expect(throws: CryptoError.invalidPrivateKey) { try PrivateKey(bytes: [1, 2, 3]) }
        let key = PrivateKey.generate()
        #expect(try PrivateKey(bytes: key.exportBytes()).publicKey == key.publicKey)
        var notOnCurve = key.publicKey.bytes
        notOnCurve[1...] = [UInt8](repeating: 0xff, count: 32)[...]
        #expect(throws: CryptoError.invalidPublicKey) { try PublicKey(compressed: notOnCurve) }
        #expect(throws: CryptoError.invalidPublicKey) { try PublicKey(compressed: [0x04] + key.publicKey.bytes.dropFirst()) }
        #expect(try PublicKey(hex: key.publicKey.hex) == key.publicKey)
    }
}
