import SottoCrypto

/// Sealing and opening content cells (docs/adr/0052). A connection with `contentKeys` seals
/// every content value it writes and opens every one it reads, and refuses to write one whose
/// key it cannot get (never plaintext in its place). A connection without (the SQL's own unit
/// tests, `sotto repair` copying rows) passes values through as they are.
///
/// ```swift
/// let value = try conn.sealedCell(text: name, .conversationName, conversationId: cid, rowId: cid)
/// try conn.run("UPDATE conversation SET name = ? WHERE id = ?", [value, .text(cid)])
/// let name = try conn.openedText(row.value(4), .conversationName, conversationId: cid, rowId: cid)
/// ```
extension SQLiteConnection {
    /// The value to bind for `plain` in `column`; `.null` for nil.
    public func sealedCell(_ plain: [UInt8]?, _ column: SealedColumn, conversationId: String,
                           rowId: String, inboxId: String? = nil) throws(StoreError) -> SQLiteValue {
        guard let plain else { return .null }
        guard let keys = contentKeys else { return .blob(plain) }
        let key: ConversationContentKey?
        if let inboxId {
            key = keys.key(conversationId: conversationId, inboxId: inboxId)
        } else {
            key = try keys.key(conversationId: conversationId, on: self)
        }
        guard let key else {
            throw .sqlite(code: SQLiteResultCode.error,
                          message: "the content key of the conversation is not available; nothing written")
        }
        return .blob(key.seal(plain, at: column.address(rowId: rowId)))
    }

    /// As `sealedCell` for a text column (stored as text on a connection without keys).
    public func sealedCell(text: String?, _ column: SealedColumn, conversationId: String,
                           rowId: String, inboxId: String? = nil) throws(StoreError) -> SQLiteValue {
        guard let text else { return .null }
        guard contentKeys != nil else { return .text(text) }
        return try sealedCell(Array(text.utf8), column, conversationId: conversationId, rowId: rowId, inboxId: inboxId)
    }

    /// The plaintext of a stored cell; nil for NULL. `.unreadable` when it does not open (or,
    /// with keys, is not sealed at all): the caller reports it and never shows its bytes.
    public func openedCell(_ value: SQLiteValue, _ column: SealedColumn, conversationId: String,
                           rowId: String) throws(StoreError) -> OpenedCell {
        guard let keys = contentKeys else {
            switch value {
            case .null: return .absent
            case .blob(let bytes): return .plain(bytes)
            case .text(let text): return .plain(Array(text.utf8))
            default: return .unreadable(.truncated)
            }
        }
        switch value {
        case .null: return .absent
        case .blob(let cell):
            guard let key = try keys.key(conversationId: conversationId, on: self) else {
                return .unreadable(.authenticationFailed)
            }
            do { return .plain(try key.open(cell, at: column.address(rowId: rowId))) } catch { return .unreadable(error) }
        case .text(let text):
            return .unreadable(text.utf8.first.map(SealedCellError.unknownVersion) ?? .truncated)
        default:
            return .unreadable(.truncated)
        }
    }

    /// A text cell's plaintext; nil for NULL, for a cell that does not open, or for bytes that
    /// are not UTF-8.
    public func openedText(_ value: SQLiteValue, _ column: SealedColumn, conversationId: String,
                           rowId: String) throws(StoreError) -> String? {
        guard case .plain(let bytes) = try openedCell(value, column, conversationId: conversationId, rowId: rowId) else {
            return nil
        }
        return String(validating: bytes, as: UTF8.self)
    }
}

/// A content cell as read.
public enum OpenedCell: Sendable, Equatable {
    case absent
    case plain([UInt8])
    case unreadable(SealedCellError)

    /// The plaintext; nil when absent or unreadable.
    public var bytes: [UInt8]? { if case .plain(let bytes) = self { bytes } else { nil } }
    public var isUnreadable: Bool { if case .unreadable = self { true } else { false } }
}

extension SealedColumn {
    public func address(rowId: String) -> CellAddress {
        CellAddress(table: table, column: column, rowId: rowId)
    }
}
