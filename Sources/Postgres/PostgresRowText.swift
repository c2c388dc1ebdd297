// A column's bytes without making a String: the typed rows of a stream (WxStore's RowText) point
// into libpq's result while the visitor runs, so a stream of millions of rows makes no String a row.
import CLibPQ

extension PostgresRow {
    /// The column's UTF-8 bytes (empty for NULL), valid only inside `body`.
    public func withUTF8<T>(_ column: Int, _ body: (UnsafeRawBufferPointer) throws -> T) rethrows -> T {
        let length = Int(wxdb_pq_getlength(result, row, Int32(column)))
        guard let text = wxdb_pq_getvalue(result, row, Int32(column)), length > 0 else {
            return try body(UnsafeRawBufferPointer(start: nil, count: 0))
        }
        return try body(UnsafeRawBufferPointer(start: UnsafeRawPointer(text), count: length))
    }
}
