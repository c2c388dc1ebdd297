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
    private let out: CopyBuffer
    /// Rows appended so far.
    public var rows: Int { out.rows }

    init(_ out: CopyBuffer) { self.out = out }

    /// A writer whose full blocks go to `send` (tests read `pending` instead).
    convenience init(columns: Int, send: @escaping ([UInt8]) -> Bool) {
        self.init(CopyBuffer(columns: columns, send: send))
    }

    @discardableResult
    private func separate() -> Int {
        let column = out.nextColumn()
        if column > 0 { out.bytes.append(0x09) }
        return column
    }

    /// Appends NULL.
    public func appendNull() {
        separate()
        out.bytes.append(contentsOf: [0x5C, 0x4E])  // \N
    }

    public func append(_ value: Int64) {
        separate()
        out.bytes.append(contentsOf: String(value).utf8)
    }

    public func append(_ value: Int64?) {
        if let value { append(value) } else { appendNull() }
    }

    public func append(_ value: Int) { append(Int64(value)) }

    public func append(_ value: Double) {
        separate()
        out.bytes.append(contentsOf: PostgresValue.text(of: value).utf8)
    }

    public func append(_ value: Double?) {
        if let value { append(value) } else { appendNull() }
    }

    /// Appends text, escaped; throws when it holds a NUL byte.
    public func append(_ value: String) throws {
        let column = separate()
        for byte in value.utf8 {
            switch byte {
            case 0x5C: out.bytes.append(contentsOf: [0x5C, 0x5C])
            case 0x09: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "t")])
            case 0x0A: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "n")])
            case 0x0D: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "r")])
            case 0x08: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "b")])
            case 0x0C: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "f")])
            case 0x0B: out.bytes.append(contentsOf: [0x5C, UInt8(ascii: "v")])
            case 0x00: throw CopyValueError(column: column)
            default: out.bytes.append(byte)
            }
        }
    }

    public func append(_ value: String?) throws {
        if let value { try append(value) } else { appendNull() }
    }

    /// Ends the row; every column must have had a value.
    public func endRow() throws {
        out.bytes.append(0x0A)
        try out.endRow()
    }

    /// The text of the rows not yet sent (for tests of the escaping).
    var pending: [UInt8] { out.bytes }

    func flush() throws { try out.flush() }
}
