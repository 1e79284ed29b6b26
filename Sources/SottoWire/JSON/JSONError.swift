/// Why `JSONParser.parse` rejected its input. `offset` is the byte index where it stopped.
///
/// ```swift
/// do { _ = try JSONParser.parse(Array("[1,".utf8)) }
/// catch { print(error) }   // "JSON: unexpected end of input at byte 3"
/// ```
public struct JSONError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        case tooLarge
        case tooDeep
        case unexpectedEnd
        case unexpectedByte
        case invalidNumber
        case invalidString
        case invalidUTF8
        case invalidEscape
        case duplicateKey
        case trailingData
    }

    public let kind: Kind
    public let offset: Int

    public init(_ kind: Kind, at offset: Int) {
        self.kind = kind
        self.offset = offset
    }

    public var description: String {
        let what: String
        switch kind {
        case .tooLarge: what = "input too large"
        case .tooDeep: what = "nesting too deep"
        case .unexpectedEnd: what = "unexpected end of input"
        case .unexpectedByte: what = "unexpected character"
        case .invalidNumber: what = "invalid number"
        case .invalidString: what = "invalid string"
        case .invalidUTF8: what = "invalid UTF-8"
        case .invalidEscape: what = "invalid escape"
        case .duplicateKey: what = "duplicate object key"
        case .trailingData: what = "data after the value"
        }
        return "JSON: \(what) at byte \(offset)"
    }
}
