// RFC 4180 CSV: a streaming writer for exports and a strict reader for station files.
//
// Every CSV wxdb writes follows the rules in shared/CLI.md: a missing value is an empty cell, and a text
// cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return gets a leading `'` so that a
// spreadsheet shows it instead of running it as a formula.

import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// MARK: - UTC time

/// Integer conversions between Unix seconds and proleptic Gregorian UTC dates.
///
/// Exports print one timestamp per cell on millions of rows, so this avoids `DateFormatter`,
/// `ISO8601DateFormatter` and `Calendar` (slow, allocating, and time-zone aware when we want none).
public enum UTCTime {
    /// The calendar date of a day counted from 1970-01-01 (day 0).
    ///
    /// Howard Hinnant's `civil_from_days`, exact for every `Int64` Unix time divided by 86 400.
    /// `UTCTime.civil(fromDays: 20_787)` is `(2026, 11, 30)`.
    public static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468  // count from 0000-03-01 so the leap day is the last day of a year
        let era = (z >= 0 ? z : z - 146_096) / 146_097  // floor division by 400 years
        let doe = z - era * 146_097  // day of era, 0...146096
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365  // year of era, 0...399
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)  // day of March-based year, 0...365
        let mp = (5 * doy + 2) / 153  // March = 0 ... February = 11
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        let year = yoe + era * 400 + (month <= 2 ? 1 : 0)
        return (Int(year), Int(month), Int(day))
    }

    /// The number of days from 1970-01-01 to a calendar date (negative before it).
    ///
    /// Howard Hinnant's `days_from_civil`; the inverse of ``civil(fromDays:)`` for valid dates.
    public static func days(fromCivil year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let m = Int64(month)
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// ISO 8601 UTC text for Unix seconds: `UTCTime.format(1_796_040_000)` is `"2026-11-30T12:00:00Z"`.
    ///
    /// Years outside 0...9999 are written with as many digits as they need and a leading `-`
    /// when negative (ISO 8601 expanded years); no weather data gets there.
    public static func format(_ unix: Int64) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(20)
        writeISO(unix) { bytes.append($0) }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Emits the ISO 8601 bytes of `unix` one at a time; shared by ``format(_:)`` and `CSVWriter`
    /// so that both print exactly the same text.
    @inline(__always)
    static func writeISO(_ unix: Int64, _ put: (UInt8) -> Void) {
        var days = unix / 86_400
        var seconds = unix % 86_400
        if seconds < 0 {  // Swift's `/` truncates; times before 1970 belong to the previous day
            seconds += 86_400
            days -= 1
        }
        let date = civil(fromDays: days)
        var year = date.year
        if year < 0 {
            put(UInt8(ascii: "-"))
            year = -year
        }
        if year > 9999 {
            writeUnsigned(UInt64(year), put)
        } else {
            put(digit(year / 1000))
            put(digit(year / 100 % 10))
            put(digit(year / 10 % 10))
            put(digit(year % 10))
        }
        let hms = Int(seconds)
        // Spelled out rather than looped over an array literal, which would allocate on every cell.
        put(UInt8(ascii: "-"))
        put(digit(date.month / 10))
        put(digit(date.month % 10))
        put(UInt8(ascii: "-"))
        put(digit(date.day / 10))
        put(digit(date.day % 10))
        put(UInt8(ascii: "T"))
        put(digit(hms / 36_000))
        put(digit(hms / 3600 % 10))
        put(UInt8(ascii: ":"))
        put(digit(hms / 600 % 6))
        put(digit(hms / 60 % 10))
        put(UInt8(ascii: ":"))
        put(digit(hms % 60 / 10))
        put(digit(hms % 10))
        put(UInt8(ascii: "Z"))
    }

    @inline(__always)
    private static func digit(_ value: Int) -> UInt8 { UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value) }
}

/// Writes the decimal digits of `value` (no sign) most significant first, without allocating.
@inline(__always)
func writeUnsigned(_ value: UInt64, _ put: (UInt8) -> Void) {
    // UInt64.max has 20 digits; find the largest power of ten not above the value, then walk down.
    var divisor: UInt64 = 1
    while divisor <= value / 10 { divisor *= 10 }
    var rest = value
    while divisor > 0 {
        put(UInt8(ascii: "0") + UInt8(truncatingIfNeeded: rest / divisor))
        rest %= divisor
        divisor /= 10
    }
}

// MARK: - Writer

/// A failed `write(2)` while emitting CSV (disk full, closed pipe, bad descriptor, ...).
public struct CSVWriteError: Error, Equatable, Sendable, CustomStringConvertible, LocalizedError {
    /// The `errno` value reported by the system.
    public let code: Int32

    public init(code: Int32) { self.code = code }

    /// A user-facing sentence: what went wrong and what to do about it.
    public var description: String {
        let reason = String(cString: strerror(code))
        switch code {
        case ENOSPC, EDQUOT:
            return "Could not write the CSV output: \(reason). Free some disk space or write the output elsewhere."
        case EPIPE:
            return "Could not write the CSV output: \(reason). The program reading the output stopped before the end."
        case EBADF:
            return "Could not write the CSV output: \(reason). The output is not open for writing."
        default:
            return "Could not write the CSV output: \(reason) (errno \(code))."
        }
    }

    public var errorDescription: String? { description }
}

/// Streams RFC 4180 CSV to a file descriptor through a fixed buffer.
///
/// Memory stays at the buffer size however many rows are written. Cells are appended left to right
/// and separated by commas automatically; ``endRow()`` ends a row with CRLF, the line ending RFC 4180
/// prescribes (Python's `csv` module, spreadsheets and `verif`'s reader all accept it).
///
/// ```swift
/// let csv = CSVWriter(fileDescriptor: STDOUT_FILENO)
/// csv.text("Berlin"); csv.isoUTC(1_796_040_000); csv.number(18.3); csv.endRow()
/// try csv.flush()  // Berlin,2026-11-30T12:00:00Z,18.3\r\n
/// ```
///
/// The cell methods do not throw, so that export loops stay simple and allocation-free. The first
/// write error is kept in ``writeError``; from then on output is discarded, and ``flush()`` throws it.
/// Always call ``flush()`` at the end: `deinit` does not write, because it could not report a failure.
/// The writer does not own the descriptor and never closes it. Writing to a closed pipe raises
/// SIGPIPE unless the process ignores it; only then does `EPIPE` reach ``writeError``.
public final class CSVWriter {
    /// The descriptor bytes are written to.
    public let fileDescriptor: Int32
    /// The first write error, if any; output is discarded once it is set.
    public private(set) var writeError: CSVWriteError?

    private let buffer: UnsafeMutablePointer<UInt8>
    private let capacity: Int
    private var count = 0
    private var cellsInRow = 0
    private var bytesInCell = 0  // lets endRow() tell a lone empty cell from a blank line

    /// Creates a writer on an open descriptor, e.g. `STDOUT_FILENO` or the result of `open(2)`.
    /// - Parameter bufferCapacity: bytes held before a `write(2)`; 64 KiB by default.
    public init(fileDescriptor: Int32, bufferCapacity: Int = 64 * 1024) {
        precondition(bufferCapacity >= 16, "CSVWriter needs a buffer of at least 16 bytes")
        self.fileDescriptor = fileDescriptor
        self.capacity = bufferCapacity
        self.buffer = .allocate(capacity: bufferCapacity)
    }

    deinit { buffer.deallocate() }

    /// Writes a header row: one text cell per name, then ``endRow()``.
    public func header(_ names: [String]) {
        for name in names { text(name) }
        endRow()
    }

    /// Writes a text cell, quoting and neutralising it as needed.
    public func text(_ string: String) {
        var string = string  // withUTF8 needs a var; native strings are not copied
        string.withUTF8 { text(utf8: UnsafeRawBufferPointer($0)) }
    }

    /// Writes a text cell from UTF-8 bytes (for example straight from SQLite), without creating a `String`.
    ///
    /// The bytes are written as given; callers pass valid UTF-8.
    /// Cells containing `,` `"` CR or LF are enclosed in quotes with inner quotes doubled. A cell that
    /// begins with `=`, `+`, `-`, `@`, tab or CR is prefixed with `'` (inside the quotes when quoted),
    /// so `=HYPERLINK("x")` becomes `"'=HYPERLINK(""x"")"`.
    public func text(utf8 bytes: UnsafeRawBufferPointer) {
        beginCell()
        guard let first = bytes.first else { return }
        var needsQuotes = false
        for byte in bytes where byte == .comma || byte == .quote || byte == .cr || byte == .lf {
            needsQuotes = true
            break
        }
        let neutralise =
            first == UInt8(ascii: "=") || first == UInt8(ascii: "+") || first == UInt8(ascii: "-")
            || first == UInt8(ascii: "@") || first == .tab || first == .cr
        if needsQuotes { put(.quote) }
        if neutralise { put(UInt8(ascii: "'")) }
        if needsQuotes {
            for byte in bytes {
                if byte == .quote { put(.quote) }
                put(byte)
            }
            put(.quote)
        } else {
            append(bytes)
        }
    }

    /// Writes a number cell; `nil`, NaN and infinities give an empty cell.
    ///
    /// Integral values below 1e15 in magnitude print without a decimal point (`84`, `-3`); others
    /// print Swift's shortest round-trip digits in positional notation (`18.3`, `0.1`, `0.00001`),
    /// never with an exponent. Numbers are never formula-neutralised: `-3.5` stays `-3.5`.
    public func number(_ value: Double?) {
        beginCell()
        guard let value, value.isFinite else { return }
        if value.rounded(.towardZero) == value, abs(value) < 1e15 {
            writeInteger(Int64(value))  // also turns -0.0 into "0"
        } else {
            writeShortest(value)
        }
    }

    /// Writes an integer cell; `nil` gives an empty cell.
    public func integer(_ value: Int64?) {
        beginCell()
        guard let value else { return }
        writeInteger(value)
    }

    /// Writes Unix seconds as an ISO 8601 UTC cell: `2026-11-30T12:00:00Z`.
    public func isoUTC(_ unixSeconds: Int64) {
        beginCell()
        UTCTime.writeISO(unixSeconds) { put($0) }
    }

    /// Writes text as it is, outside the cell structure (for line-based formats such as verif's
    /// that share the writer's buffering). Call between rows only.
    public func raw(_ text: String) {
        var text = text
        text.withUTF8 { append(UnsafeRawBufferPointer($0)) }
    }

    /// Writes an empty cell (a missing value).
    public func empty() {
        beginCell()
    }

    /// Ends the current row with CRLF.
    public func endRow() {
        // A row made of one empty cell would be a blank line, which readers skip; write `""` as Python does.
        if cellsInRow == 1 && bytesInCell == 0 {
            put(.quote)
            put(.quote)
        }
        put(.cr)
        put(.lf)
        cellsInRow = 0
        bytesInCell = 0
    }

    /// Writes out everything buffered and throws the first write error, if any has happened.
    public func flush() throws(CSVWriteError) {
        drain()
        if let writeError { throw writeError }
    }

    // MARK: Internals

    @inline(__always)
    private func beginCell() {
        if cellsInRow > 0 { put(.comma) }
        cellsInRow += 1
        bytesInCell = 0
    }

    @inline(__always)
    private func put(_ byte: UInt8) {
        if count == capacity { drain() }
        buffer[count] = byte
        count += 1
        bytesInCell += 1
    }

    private func append(_ bytes: UnsafeRawBufferPointer) {
        guard var source = bytes.baseAddress else { return }
        var remaining = bytes.count
        bytesInCell += remaining
        while remaining > 0 {
            if count == capacity { drain() }
            let chunk = min(remaining, capacity - count)
            (buffer + count).update(from: source.assumingMemoryBound(to: UInt8.self), count: chunk)
            count += chunk
            source += chunk
            remaining -= chunk
        }
    }

    private func writeInteger(_ value: Int64) {
        if value < 0 { put(UInt8(ascii: "-")) }
        writeUnsigned(value.magnitude) { put($0) }
    }

    /// Prints `value.description` with any exponent expanded, so `1e-05` becomes `0.00001`
    /// and `1e+16` becomes `10000000000000000`; a trailing `.0` is dropped.
    private func writeShortest(_ value: Double) {
        let text = value.description  // up to 15 bytes live inline in the String: no heap allocation
        var utf8 = text.utf8[...]
        if utf8.first == UInt8(ascii: "-") {
            put(UInt8(ascii: "-"))
            utf8 = utf8.dropFirst()
        }
        guard let e = utf8.firstIndex(of: UInt8(ascii: "e")) else {
            // Positional already; only integral values of 1e15 and more end in ".0".
            var body = utf8
            if body.last == UInt8(ascii: "0"), body.dropLast().last == UInt8(ascii: ".") {
                body = body.dropLast(2)
            }
            for byte in body { put(byte) }
            return
        }
        // Rare path (|x| < 1e-4 or >= 2^53): digits d1.d2d3... times 10^exponent.
        var digits: [UInt8] = []
        var integerDigits = 0
        var seenPoint = false
        for byte in utf8[..<e] {
            if byte == UInt8(ascii: ".") {
                seenPoint = true
            } else {
                digits.append(byte)
                if !seenPoint { integerDigits += 1 }
            }
        }
        let exponent = Int(String(decoding: utf8[utf8.index(after: e)...], as: UTF8.self)) ?? 0
        let point = integerDigits + exponent  // digits before the decimal point
        if point <= 0 {
            put(UInt8(ascii: "0"))
            put(UInt8(ascii: "."))
            for _ in 0..<(-point) { put(UInt8(ascii: "0")) }
            for digit in digits { put(digit) }
        } else if point >= digits.count {
            for digit in digits { put(digit) }
            for _ in 0..<(point - digits.count) { put(UInt8(ascii: "0")) }
        } else {
            for digit in digits[..<point] { put(digit) }
            put(UInt8(ascii: "."))
            for digit in digits[point...] { put(digit) }
        }
    }

    /// Writes the buffer out, retrying short writes, EINTR and EAGAIN; records the first failure.
    private func drain() {
        defer { count = 0 }  // after a failure the bytes are dropped, so memory stays bounded
        guard writeError == nil else { return }
        var offset = 0
        while offset < count {
            let written = write(fileDescriptor, buffer + offset, count - offset)
            if written > 0 {
                offset += written
                continue
            }
            let code = written < 0 ? errno : EIO  // write(2) returning 0 for a non-empty buffer: no progress
            if code == EINTR { continue }
            if code == EAGAIN || code == EWOULDBLOCK {  // non-blocking descriptor: wait until writable
                var descriptor = pollfd(fd: fileDescriptor, events: Int16(POLLOUT), revents: 0)
                if poll(&descriptor, 1, -1) >= 0 || errno == EINTR { continue }
                writeError = CSVWriteError(code: errno)
                return
            }
            writeError = CSVWriteError(code: code)
            return
        }
    }
}

extension UInt8 {
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let quote = UInt8(ascii: "\"")
    fileprivate static let cr = UInt8(ascii: "\r")
    fileprivate static let lf = UInt8(ascii: "\n")
    fileprivate static let tab = UInt8(ascii: "\t")
}

// MARK: - Reader

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
