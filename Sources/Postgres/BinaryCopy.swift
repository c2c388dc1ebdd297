// COPY FROM STDIN in PostgreSQL's binary format (PostgreSQL docs, COPY, "Binary Format"): a
// signature and header, then per row a 16-bit field count and per field a 32-bit length (-1 for
// NULL) and the value in the type's binary form (int8 and float8 as 8 big-endian bytes), then a
// -1 trailer. A run's rows go in this way: no number is printed as text and read back (the text
// form cost most of a store's time on both sides), and a double arrives bit for bit. Rows are sent
// in blocks of about 64 kB, never held whole.
import CLibPQ
import FoundationEssentials

/// Appends rows to a binary COPY in progress; handed to the closure of `PostgresConnection.copyBinary`.
/// Each value must be of its column's exact type: Int64 for bigint, Double for double precision,
/// String for text.
public final class BinaryCopyWriter {
    private var buffer: [UInt8] = []
    private let columns: Int
    private var column = 0
    private let send: ([UInt8]) -> Bool
    /// Rows appended so far.
    public private(set) var rows = 0
    static let blockSize = 64 * 1024
    static let signature: [UInt8] = [0x50, 0x47, 0x43, 0x4F, 0x50, 0x59, 0x0A, 0xFF, 0x0D, 0x0A, 0x00]

    init(columns: Int, send: @escaping ([UInt8]) -> Bool) {
        self.columns = columns
        self.send = send
        buffer.reserveCapacity(Self.blockSize + 4096)
        buffer += Self.signature
        put(UInt32(0))  // flags
        put(UInt32(0))  // header extension length
    }

    private func put(_ value: UInt32) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    private func put(_ value: UInt64) {
        withUnsafeBytes(of: value.bigEndian) { buffer.append(contentsOf: $0) }
    }

    private func field() {
        precondition(column < columns, "a COPY row has more values than columns")
        if column == 0 { withUnsafeBytes(of: UInt16(columns).bigEndian) { buffer.append(contentsOf: $0) } }
        column += 1
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
        field()
        let bytes = Array(value.utf8)
        if bytes.contains(0) { throw CopyValueError(column: column - 1) }
        put(UInt32(bytes.count))
        buffer += bytes
    }

    public func append(_ value: String?) throws {
        if let value { try append(value) } else { appendNull() }
    }

    /// Ends the row; every column must have had a value.
    public func endRow() throws {
        precondition(column == columns, "a COPY row has fewer values than columns")
        column = 0
        rows += 1
        if buffer.count >= Self.blockSize { try flush() }
    }

    /// The bytes not yet sent (for tests of the format).
    var pending: [UInt8] { buffer }

    /// Appends the trailer.
    func finish() {
        withUnsafeBytes(of: Int16(-1).bigEndian) { buffer.append(contentsOf: $0) }
    }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        guard send(buffer) else { throw CopySendError() }
        buffer.removeAll(keepingCapacity: true)
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
        let start = wxdb_pq_exec(
            handle, "COPY " + table + " (" + columns.joined(separator: ", ") + ") FROM STDIN (FORMAT binary)")
        let status = start.map { wxdb_pq_result_status($0) }
        if status != PGRES_COPY_IN {
            defer { wxdb_pq_clear(start) }
            try check(start)
            throw connectionError()
        }
        wxdb_pq_clear(start)
        let writer = BinaryCopyWriter(columns: columns.count) { [handle] bytes in
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    wxdb_pq_put_copy_data(handle, $0.baseAddress, Int32($0.count)) == 1
                }
            }
        }
        var failure: Error?
        do {
            try fill(writer)
            writer.finish()
            try writer.flush()
        } catch {
            failure = error
        }
        let ended = wxdb_pq_put_copy_end(handle, failure == nil ? nil : "wxdb stopped the COPY")
        var serverFailure: Error?
        var stored = 0
        while let result = wxdb_pq_get_result(handle) {
            defer { wxdb_pq_clear(result) }
            let status = wxdb_pq_result_status(result)
            if status == PGRES_COMMAND_OK {
                stored = Int(String(cString: wxdb_pq_cmd_tuples(result))) ?? 0
            } else if serverFailure == nil {
                serverFailure = error(from: result)
            }
        }
        if failure is CopySendError { throw serverFailure ?? connectionError() }
        if let failure { throw failure }
        if let serverFailure { throw serverFailure }
        guard ended == 1 else { throw connectionError() }
        return stored
    }
}
