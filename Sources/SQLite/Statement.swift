import CSQLite

/// A prepared statement. Cached statements are reused: `Database.cachedStatement` resets them.
public final class Statement {
    let handle: OpaquePointer
    unowned let database: Database
    /// The SQL text, for error messages.
    public let sql: String

    init(database: Database, sql: String, persistent: Bool) throws {
        var statement: OpaquePointer?
        let flags: UInt32 = persistent ? UInt32(SQLITE_PREPARE_PERSISTENT) : 0
        let rc = sqlite3_prepare_v3(database.handle, sql, -1, flags, &statement, nil)
        guard rc == SQLITE_OK, let statement else {
            throw database.error(rc, sql: sql)
        }
        self.handle = statement
        self.database = database
        self.sql = sql
    }

    deinit { sqlite3_finalize(handle) }

    /// Resets the statement and clears its bindings.
    public func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// The number of parameters the SQL takes (the highest index, for numbered ones like `?3`).
    public var parameterCount: Int { Int(sqlite3_bind_parameter_count(handle)) }

    /// Binds `values` to parameters 1...n; throws (`SQLITE_RANGE`) unless there is exactly one value
    /// per parameter, so a forgotten argument never silently becomes NULL (which `? IS NULL OR ...`
    /// would read as "no filter").
    public func bind(_ values: [SQLValue]) throws {
        guard values.count == parameterCount else {
            throw SQLiteError(
                extendedCode: SQLITE_RANGE,
                message: "\(values.count) argument(s) for \(parameterCount) parameter(s)", sql: sql)
        }
        for (index, value) in values.enumerated() {
            try bind(value, at: Int32(index + 1))
        }
    }

    /// Binds one value to the 1-based parameter `index`.
    public func bind(_ value: SQLValue, at index: Int32) throws {
        let rc: Int32
        switch value {
        case .null: rc = sqlite3_bind_null(handle, index)
        case .integer(let v): rc = sqlite3_bind_int64(handle, index, v)
        case .real(let v): rc = sqlite3_bind_double(handle, index, v)
        case .text(let v): rc = sqlite3_bind_text(handle, index, v, -1, wxdb_sqlite_transient())
        case .blob(let v):
            rc = v.withUnsafeBytes {
                sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), wxdb_sqlite_transient())
            }
        }
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    /// Binds a double, or NULL when absent, without building an `SQLValue` (the ingest hot path).
    @inline(__always)
    public func bind(_ value: Double?, at index: Int32) throws {
        let rc = if let value { sqlite3_bind_double(handle, index, value) } else { sqlite3_bind_null(handle, index) }
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    /// Binds an integer without building an `SQLValue` (the ingest hot path).
    @inline(__always)
    public func bind(_ value: Int64, at index: Int32) throws {
        let rc = sqlite3_bind_int64(handle, index, value)
        if rc != SQLITE_OK { throw database.error(rc, sql: sql) }
    }

    /// Steps once: a row, or nil when done.
    public func step() throws -> Row? {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return Row(handle: handle)
        case SQLITE_DONE: return nil
        default:
            let error = database.error(rc, sql: sql)
            sqlite3_reset(handle)
            throw error
        }
    }

    /// Steps to completion, ignoring rows, then resets (keeping bindings for a rerun).
    public func runToCompletion() throws {
        defer { sqlite3_reset(handle) }
        while try step() != nil {}
    }
}

/// The current row of a statement; valid until the statement steps again.
public struct Row {
    let handle: OpaquePointer

    public var columnCount: Int { Int(sqlite3_column_count(handle)) }
    public func columnName(_ i: Int) -> String { String(cString: sqlite3_column_name(handle, Int32(i))) }
    public func isNull(_ i: Int) -> Bool { sqlite3_column_type(handle, Int32(i)) == SQLITE_NULL }

    public func int64(_ i: Int) -> Int64 { sqlite3_column_int64(handle, Int32(i)) }
    public func int(_ i: Int) -> Int { Int(sqlite3_column_int64(handle, Int32(i))) }
    public func double(_ i: Int) -> Double { sqlite3_column_double(handle, Int32(i)) }
    public func string(_ i: Int) -> String {
        guard let text = sqlite3_column_text(handle, Int32(i)) else { return "" }
        return String(cString: text)
    }
    public func optionalInt64(_ i: Int) -> Int64? { isNull(i) ? nil : int64(i) }
    public func optionalInt(_ i: Int) -> Int? { isNull(i) ? nil : int(i) }
    public func optionalDouble(_ i: Int) -> Double? { isNull(i) ? nil : double(i) }
    public func optionalString(_ i: Int) -> String? { isNull(i) ? nil : string(i) }

    /// The column as a `SQLValue`, whatever its storage class.
    public func value(_ i: Int) -> SQLValue {
        let i32 = Int32(i)
        switch sqlite3_column_type(handle, i32) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(handle, i32))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(handle, i32))
        case SQLITE_TEXT: return .text(string(i))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(handle, i32))
            guard count > 0, let pointer = sqlite3_column_blob(handle, i32) else { return .blob([]) }
            return .blob(Array(UnsafeRawBufferPointer(start: pointer, count: count)))
        default: return .null
        }
    }

    /// The raw UTF-8 bytes of a text column, without making a String (for streaming exports).
    public func withUTF8<R>(_ i: Int, _ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        let i32 = Int32(i)
        let pointer = sqlite3_column_text(handle, i32)
        let count = Int(sqlite3_column_bytes(handle, i32))
        return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }
}

// A statement and a row belong to their connection's thread (see `Database`).
@available(*, unavailable)
extension Statement: Sendable {}

@available(*, unavailable)
extension Row: Sendable {}
