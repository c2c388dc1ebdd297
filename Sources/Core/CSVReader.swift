// RFC 4180 CSV, read strictly (station files).

import FoundationEssentials

/// A malformed CSV input. Each case carries the 1-based line (the header is line 1) and field number.
public enum CSVError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// A field opens with `"` and the input ends before its closing quote; `line` is where it opened.
    case unterminatedQuote(line: Int, field: Int)
    /// A `"` inside a field that is not quoted, or text right after a quoted field's closing quote.
    case strayQuote(line: Int, field: Int)
    /// The field's bytes are not UTF-8; `line` is where the field starts.
    case invalidUTF8(line: Int, field: Int)

    /// The 1-based line number the error refers to.
    public var line: Int {
        switch self {
        case .unterminatedQuote(let line, _), .strayQuote(let line, _), .invalidUTF8(let line, _): line
        }
    }

    /// The 1-based field (column) number the error refers to.
    public var field: Int {
        switch self {
        case .unterminatedQuote(_, let field), .strayQuote(_, let field), .invalidUTF8(_, let field): field
        }
    }

    /// A user-facing sentence that names the line and says how to fix it.
    public var description: String {
        switch self {
        case .unterminatedQuote(let line, let field):
            "Line \(line), field \(field): a quoted field is never closed. Add the missing closing \" or remove the opening one."
        case .strayQuote(let line, let field):
            "Line \(line), field \(field): a double quote appears in the middle of a field. Enclose the whole field in double quotes and write each quote inside it twice (\"\")."
        case .invalidUTF8(let line, let field):
            "Line \(line), field \(field): the text is not valid UTF-8. Save the file as UTF-8 and try again."
        }
    }

    public var errorDescription: String? { description }
}

/// Parses RFC 4180 CSV held in memory, one record at a time.
///
/// Accepts a UTF-8 byte order mark, CRLF, LF or lone CR line endings, and quoted fields with embedded
/// commas, doubled quotes and line breaks. Blank lines are skipped. It is strict about quotes, because
/// a lenient guess would silently shift a station's values into the wrong column.
///
/// ```swift
/// var reader = CSVReader(Array("time,temperature_2m\r\n2026-11-30T12:00Z,3.5\r\n".utf8))
/// while let record = try reader.next() { print(record.line, record.fields) }
/// ```
public struct CSVReader: Sendable {
    /// One record: its fields and the line on which it starts (the header is line 1).
    public struct Record: Sendable, Equatable {
        public var fields: [String]
        public var line: Int

        public init(fields: [String], line: Int) {
            self.fields = fields
            self.line = line
        }
    }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1

    /// A reader over UTF-8 bytes; a leading byte order mark is skipped.
    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
    }

    /// A reader over UTF-8 data; a leading byte order mark is skipped.
    public init(_ data: Data) {
        self.init([UInt8](data))
    }

    /// Every remaining record, in order.
    public func readAll() throws(CSVError) -> [Record] {
        var copy = self
        var records: [Record] = []
        while let record = try copy.next() { records.append(record) }
        return records
    }

    /// The next record, or `nil` at the end of the input.
    public mutating func next() throws(CSVError) -> Record? {
        while index < bytes.count, bytes[index] == .cr || bytes[index] == .lf { consumeLineBreak() }
        guard index < bytes.count else { return nil }
        let recordLine = line
        var fields: [String] = []
        var scratch: [UInt8] = []
        while true {
            let fieldNumber = fields.count + 1
            let fieldLine = line
            if index < bytes.count, bytes[index] == .quote {
                index += 1
                scratch.removeAll(keepingCapacity: true)
                while true {
                    guard index < bytes.count else { throw .unterminatedQuote(line: fieldLine, field: fieldNumber) }
                    let byte = bytes[index]
                    if byte == .quote {
                        if index + 1 < bytes.count, bytes[index + 1] == .quote {
                            scratch.append(.quote)
                            index += 2
                            continue
                        }
                        index += 1
                        break
                    }
                    // Line breaks inside quotes belong to the value but still count as lines of the file.
                    if byte == .lf || (byte == .cr && !(index + 1 < bytes.count && bytes[index + 1] == .lf)) {
                        line += 1
                    }
                    scratch.append(byte)
                    index += 1
                }
                if index < bytes.count, bytes[index] != .comma, bytes[index] != .cr, bytes[index] != .lf {
                    throw .strayQuote(line: line, field: fieldNumber)
                }
                fields.append(try Self.decode(scratch[...], line: fieldLine, field: fieldNumber))
            } else {
                let start = index
                while index < bytes.count {
                    let byte = bytes[index]
                    if byte == .comma || byte == .cr || byte == .lf { break }
                    if byte == .quote { throw .strayQuote(line: line, field: fieldNumber) }
                    index += 1
                }
                fields.append(try Self.decode(bytes[start..<index], line: fieldLine, field: fieldNumber))
            }
            if index < bytes.count, bytes[index] == .comma {
                index += 1
                continue
            }
            if index < bytes.count { consumeLineBreak() }
            return Record(fields: fields, line: recordLine)
        }
    }

    /// Steps over one CRLF, LF or CR and counts the line.
    private mutating func consumeLineBreak() {
        if bytes[index] == .cr, index + 1 < bytes.count, bytes[index + 1] == .lf { index += 1 }
        index += 1
        line += 1
    }

    private static func decode(_ slice: ArraySlice<UInt8>, line: Int, field: Int) throws(CSVError) -> String {
        let string = slice.withUnsafeBufferPointer { String(validating: $0, as: UTF8.self) }
        guard let string else { throw .invalidUTF8(line: line, field: field) }
        return string
    }
}
