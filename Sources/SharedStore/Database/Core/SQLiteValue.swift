/// One value bound to or read from SQLite: exactly the four storage classes Sotto uses.
///
/// ```swift
/// try conn.query("SELECT id FROM message WHERE conversationId = ?", [.text(id)])
/// let v: SQLiteValue = .blob([0x01, 0x02])
/// ```
public enum SQLiteValue: Sendable, Equatable {
    case integer(Int64)
    case text(String)
    case blob([UInt8])
    case null

    // MARK: Conveniences for optional binds

    public static func optional(_ value: String?) -> SQLiteValue {
        value.map(SQLiteValue.text) ?? .null
    }

    public static func optional(_ value: Int64?) -> SQLiteValue {
        value.map(SQLiteValue.integer) ?? .null
    }

    public static func bool(_ value: Bool) -> SQLiteValue {
        .integer(value ? 1 : 0)
    }
}
