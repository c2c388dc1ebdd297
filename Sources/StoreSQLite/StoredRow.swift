import WxSQLite
import WxStore

/// One row a `Store` method streams to a visitor: read its columns by position while the visitor
/// runs (it is only valid until the next row). The accessors are inlined into the caller, so a
/// visitor reads SQLite's memory directly, as if it held the statement (the zero-copy exports).
public struct StoredRow {
    @usableFromInline let row: Row

    @inlinable init(_ row: Row) { self.row = row }

    @inlinable public func int64(_ i: Int) -> Int64 { row.int64(i) }
    @inlinable public func int(_ i: Int) -> Int { row.int(i) }
    @inlinable public func double(_ i: Int) -> Double { row.double(i) }
    @inlinable public func string(_ i: Int) -> String { row.string(i) }
    @inlinable public func optionalInt64(_ i: Int) -> Int64? { row.optionalInt64(i) }
    @inlinable public func optionalInt(_ i: Int) -> Int? { row.optionalInt(i) }
    @inlinable public func optionalDouble(_ i: Int) -> Double? { row.optionalDouble(i) }
    @inlinable public func optionalString(_ i: Int) -> String? { row.optionalString(i) }
    /// The raw UTF-8 bytes of a text column, without making a String.
    @inlinable public func withUTF8<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try row.withUTF8(i, body)
    }
}

// A row belongs to the statement stepping it, on the store's thread.
@available(*, unavailable)
extension StoredRow: Sendable {}
