// COPY FROM STDIN, whatever the format: starting it, the rows' bytes sent in blocks of about 64 kB
// as they are written (never held whole), and its ending, where the error a caller hears is chosen.
// CopyWriter (text) and BinaryCopyWriter (binary) differ only in how a value is written.
import CLibPQ

/// libpq could not send COPY data (the connection is gone); the caller reads the reason.
struct CopySendError: Error {}

/// What both COPY writers share, whatever their format: the bytes not yet sent, sent in blocks of
/// about 64 kB, and the count of values in the row and of rows.
final class CopyBuffer {
    var bytes: [UInt8] = []
    /// Values a row.
    let columns: Int
    private var column = 0
    private(set) var rows = 0
    private let send: ([UInt8]) -> Bool
    static let blockSize = 64 * 1024

    init(columns: Int, send: @escaping ([UInt8]) -> Bool) {
        self.columns = columns
        self.send = send
        bytes.reserveCapacity(Self.blockSize + 4096)
    }

    /// Counts one value of the row; returns its column (0 for the row's first).
    func nextColumn() -> Int {
        precondition(column < columns, "a COPY row has more values than columns")
        defer { column += 1 }
        return column
    }

    /// Ends the row, sending the bytes when a block is full; every column must have had a value.
    func endRow() throws {
        precondition(column == columns, "a COPY row has fewer values than columns")
        column = 0
        rows += 1
        if bytes.count >= Self.blockSize { try flush() }
    }

    /// Ends a row whose values were all written at once (BinaryCopyWriter.appendRow), not counted one by one.
    func endWholeRow() throws {
        precondition(column == 0, "a COPY row was begun value by value")
        column = columns
        try endRow()
    }

    func flush() throws {
        guard !bytes.isEmpty else { return }
        guard send(bytes) else { throw CopySendError() }
        bytes.removeAll(keepingCapacity: true)
    }
}

extension PostgresConnection {
    /// Starts `sql`, a `COPY … FROM STDIN` (on a new session, as every statement, when the server ended
    /// the old one between transactions); throws the server's error when it does not enter COPY.
    func startCopy(_ sql: String) throws {
        try reconnectIfEnded()
        let start = wxdb_pq_exec(handle, sql)
        let status = start.map { wxdb_pq_result_status($0) }
        if status != PGRES_COPY_IN {
            defer { wxdb_pq_clear(start) }
            try check(start)
            throw connectionError()
        }
        wxdb_pq_clear(start)
    }

    /// A buffer of `columns` values a row that sends its blocks as COPY data on this connection.
    func copyBuffer(columns: Int) -> CopyBuffer {
        CopyBuffer(columns: columns) { [handle] bytes in
            bytes.withUnsafeBufferPointer { buffer in
                buffer.withMemoryRebound(to: CChar.self) {
                    wxdb_pq_put_copy_data(handle, $0.baseAddress, Int32($0.count)) == 1
                }
            }
        }
    }

    /// Ends the COPY in progress, aborting it on the server when the rows could not all be written
    /// (`failure`), and returns the number of rows stored. Which error is thrown: a failed send is
    /// explained by the server's reason (the connection went away), else the writer's own failure,
    /// else the server's refusal of the data.
    func finishCopy(failure: Error?) throws -> Int {
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
