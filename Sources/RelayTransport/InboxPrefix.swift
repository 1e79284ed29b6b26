/// A fresh inbox prefix for one relay connection: `_INBOX.` and 22 random base-62
/// characters (131 bits), so the reply subjects of two connections share nothing but the
/// `_INBOX.` every NATS client uses (docs/adr/0044).
///
/// ```swift
/// InboxPrefix.random()   // "_INBOX.4fQ0z…" (29 characters)
/// ```
enum InboxPrefix {
    static let randomCharacters = 22
    private static let alphabet = Array("0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")

    static func random() -> String {
        var generator = SystemRandomNumberGenerator()
        return "_INBOX." + String((0..<randomCharacters).map { _ in alphabet.randomElement(using: &generator)! })
    }

    /// `_INBOX.<user's public nkey>`: with a signing key (docs/adr/0051) a user may subscribe
    /// only under its own key; the key belongs to one identity, so it links nothing.
    static func ofUser(_ publicKey: String) -> String {
        "_INBOX." + publicKey
    }
}
