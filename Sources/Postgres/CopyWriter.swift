// Rows for COPY FROM STDIN in PostgreSQL's text format: columns separated by a tab, rows ended
// by a newline, NULL as \N, and in values a backslash, tab, newline and carriage return written
// as backslash escapes (PostgreSQL docs, COPY, "Text Format"), so no stored text can end a
// field, a row or the data early. Rows are sent in blocks of about 64 kB, never held whole.
import FoundationEssentials

/// Why a row cannot go into COPY.
public struct CopyValueError: Error, CustomStringConvertible, Sendable {
    public let column: Int
    public var description: String {
        "a text value for column \(column + 1) holds a NUL byte, which PostgreSQL cannot store; nothing was stored"
    }
}

/// Appends rows to a COPY in progress; handed to the closure of `PostgresConnection.copy`.
public final class CopyWriter {
    private var buffer: [UInt8] = []
    private let columns: Int
    private var column = 0
    private let send: ([UInt8]) -> Bool
    /// Rows appended so far.
    public private(set) var rows = 0
    static let blockSize = 64 * 1024

    init(columns: Int, send: @escaping ([UInt8]) -> Bool) {
        self.columns = columns
        self.send = send
        buffer.reserveCapacity(Self.blockSize + 4096)
    }

    private func separate() {
        precondition(column < columns, "a COPY row has more values than columns")
        if column > 0 { buffer.append(0x09) }
        column += 1
    }

    /// Appends NULL.
    public func appendNull() {
        separate()
        buffer.append(contentsOf: [0x5C, 0x4E])  // \N
    }

    public func append(_ value: Int64) {
        separate()
        buffer.append(contentsOf: String(value).utf8)
    }

    public func append(_ value: Int64?) {
        if let value { append(value) } else { appendNull() }
    }

    public func append(_ value: Int) { append(Int64(value)) }

    public func append(_ value: Double) {
        separate()
        buffer.append(contentsOf: PostgresValue.text(of: value).utf8)
    }

    public func append(_ value: Double?) {
        if let value { append(value) } else { appendNull() }
    }

    /// Appends text, escaped; throws when it holds a NUL byte.
    public func append(_ value: String) throws {
        separate()
        for byte in value.utf8 {
            switch byte {
            case 0x5C: buffer.append(contentsOf: [0x5C, 0x5C])
            case 0x09: buffer.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x0A: buffer.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: buffer.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x08: buffer.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: buffer.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0B: buffer.append(contentsOf: [0x5C, UInt8(ascii: "v")])
            case 0x00: throw CopyValueError(column: column - 1)
            default: buffer.append(byte)
            }
        }
    }

    public func append(_ value: String?) throws {
        if let value { try append(value) } else { appendNull() }
    }

    /// Ends the row; every column must have had a value.
    public func endRow() throws {
        precondition(column == columns, "a COPY row has fewer values than columns")
        buffer.append(0x0A)
        column = 0
        rows += 1
        if buffer.count >= Self.blockSize { try flush() }
    }

    /// The text of the rows not yet sent (for tests of the escaping).
    var pending: [UInt8] { buffer }

    func flush() throws {
        guard !buffer.isEmpty else { return }
        guard send(buffer) else { throw CopySendError() }
        buffer.removeAll(keepingCapacity: true)
    }
}

/// libpq could not send COPY data (the connection is gone); the caller reads the reason.
struct CopySendError: Error {}
