// COPY FROM STDIN in PostgreSQL's binary format (PostgreSQL docs, COPY, "Binary Format"): a
// signature and header, then per row a 16-bit field count and per field a 32-bit length (-1 for
// NULL) and the value in the type's binary form (int8 and float8 as 8 big-endian bytes), then a
// -1 trailer. A run's rows go in this way: no number is printed as text and read back (the text
// form cost most of a store's time on both sides), and a double arrives bit for bit. Rows are sent
// in blocks of about 64 kB, never held whole.
import FoundationEssentials

/// Appends rows to a binary COPY in progress; handed to the closure of `PostgresConnection.copyBinary`.
/// Each value must be of its column's exact type: Int64 for bigint, Double for double precision,
/// String for text.
public final class BinaryCopyWriter {
    private let out: CopyBuffer
    /// Rows appended so far.
    public var rows: Int { out.rows }
    static let signature: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00]

    init(_ out: CopyBuffer) {
        self.out = out
        out.bytes += Self.signature
        put(UInt32(0))  // flags
        put(UInt32(0))  // header extension length
    }

    private func put(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { out.bytes.append(contentsOf: $0) }
    }

    private func put(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { out.bytes.append(contentsOf: $0) }
    }

    @discardableResult
    private func field() -> Int {
        let column = out.nextColumn()
        if column == 0 { withUnsafeBytes(of: UInt16(out.columns).bigEndian) { out.bytes.append(contentsOf: $0) } }
        return column
    }

    /// Appends NULL.
    public func appendNull() {
        field()
        put(UInt32(bitPattern: -1))
    }

    /// Appends a bigint.
    public func append(_ value: Int64) {
        field()
        put(UInt32(8))
        put(UInt64(bitPattern: value))
    }

    public func append(_ value: Int64?) {
        if let value { append(value) } else { appendNull() }
    }

    /// Appends a double precision value, bit for bit.
    public func append(_ value: Double) {
        field()
        put(UInt32(8))
        put(value.bitPattern)
    }

    public func append(_ value: Double?) {
        if let value { append(value) } else { appendNull() }
    }

    /// Appends a real (float4) value, bit for bit (NULL for nil).
    public func append(_ value: Float?) {
        guard let value else { return appendNull() }
        field()
        put(UInt32(4))
        put(value.bitPattern)
    }

    /// Appends text (UTF-8); throws when it holds a NUL byte, which PostgreSQL's text cannot hold.
    public func append(_ value: String) throws {
        let column = field()
        let bytes = Array(value.utf8)
        if bytes.contains(0) { throw CopyValueError(column: column) }
        put(UInt32(bytes.count))
        out.bytes += bytes
    }

    public func append(_ value: String?) throws {
        if let value { try append(value) } else { appendNull() }
    }

    /// Ends the row; every column must have had a value.
    public func endRow() throws { try out.endRow() }

    /// Appends a whole row of fixed-width values (bigint, double precision, real, NULL), which
    /// `body` writes straight into the block: one capacity check a row instead of one growth check,
    /// one column count and one Optional per value (a run's hourly rows are most of a store). Every
    /// column must get a value; text goes value by value.
    public func appendRow(_ body: (inout BinaryCopyRow) -> Void) throws {
        let start = out.bytes.count
        let columns = out.columns
        let room = BinaryCopyRow.room(columns: columns)
        out.bytes.append(contentsOf: repeatElement(0, count: room))
        let (written, values) = out.bytes.withUnsafeMutableBytes { raw in
            var row = BinaryCopyRow(raw.baseAddress! + start, columns: columns)
            body(&row)
            return (row.written, row.values)
        }
        precondition(values == columns, "a COPY row has fewer values than columns")
        out.bytes.removeLast(room - written)
        try out.endWholeRow()
    }

    /// The bytes not yet sent (for tests of the format).
    var pending: [UInt8] { out.bytes }

    /// Appends the trailer.
    func finish() {
        withUnsafeBytes(of: Int16(-1).bigEndian) { out.bytes.append(contentsOf: $0) }
    }

    func flush() throws { try out.flush() }
}

/// One row of a binary COPY being written in place (`BinaryCopyWriter.appendRow`): the field count,
/// then per value its length (-1 for NULL) and its big-endian bytes, at most 12 bytes a value.
public struct BinaryCopyRow {
    private let base: UnsafeMutableRawPointer
    private let columns: Int
    private(set) var written = 0
    private(set) var values = 0

    static func room(columns: Int) -> Int { 2 + 12 * columns }

    init(_ base: UnsafeMutableRawPointer, columns: Int) {
        self.base = base
        self.columns = columns
        put(UInt16(columns))
    }

    private mutating func put<T: FixedWidthInteger>(_ value: T) {
        base.storeBytes(of: value.bigEndian, toByteOffset: written, as: T.self)
        written += MemoryLayout<T>.size
    }

    /// Counts a value, refusing one more than the row has columns (it would not fit its room).
    private mutating func next() {
        precondition(values < columns, "a COPY row has more values than columns")
        values += 1
    }

    /// Appends NULL.
    public mutating func appendNull() {
        next()
        put(UInt32(bitPattern: -1))
    }

    /// Appends a bigint.
    public mutating func append(_ value: Int64) {
        next()
        put(UInt32(8))
        put(UInt64(bitPattern: value))
    }

    /// Appends a double precision value bit for bit (NULL for nil).
    public mutating func append(_ value: Double?) {
        guard let value else { return appendNull() }
        next()
        put(UInt32(8))
        put(value.bitPattern)
    }

    /// Appends a real (float4) value bit for bit (NULL for nil).
    public mutating func append(_ value: Float?) {
        guard let value else { return appendNull() }
        next()
        put(UInt32(4))
        put(value.bitPattern)
    }
}

extension PostgresConnection {
    /// Loads rows into `table` with `COPY … FROM STDIN (FORMAT binary)`: `fill` appends them to the
    /// writer it is given. Returns the number of rows the server stored. When `fill` throws, the
    /// COPY is aborted on the server (nothing of it stays) and the error is rethrown. `table` and
    /// `columns` are identifiers from code, checked to be plain lower-case names.
    @discardableResult
    public func copyBinary(into table: String, columns: [String], _ fill: (BinaryCopyWriter) throws -> Void) throws
        -> Int
    {
        precondition(
            ([table] + columns).allSatisfy(Self.isPlainIdentifier), "COPY takes identifiers from code only")
        try startCopy("COPY " + table + " (" + columns.joined(separator: ", ") + ") FROM STDIN (FORMAT binary)")
        let writer = BinaryCopyWriter(copyBuffer(columns: columns.count))
        var failure: Error?
        do {
            try fill(writer)
            writer.finish()
            try writer.flush()
        } catch {
            failure = error
        }
        return try finishCopy(failure: failure)
    }
}
