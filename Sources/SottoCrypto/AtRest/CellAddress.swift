/// Where a sealed cell lives: its table, its column and the id of its row, all bound into the
/// cell's AAD so a cell copied to another row, column or conversation does not open
/// (docs/adr/0052).
///
/// ```swift
/// let address = CellAddress(table: "message", column: "content", rowId: messageId)
/// ```
public struct CellAddress: Sendable, Hashable {
    public var table: String
    public var column: String
    /// The row's stable id: a message id, a conversation id, a member's inbox id…
    public var rowId: String

    public init(table: String, column: String, rowId: String) {
        self.table = table
        self.column = column
        self.rowId = rowId
    }
}
