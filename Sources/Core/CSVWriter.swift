// RFC 4180 CSV, written. Every CSV wxdb writes follows the rules in docs/CLI.md: a missing value is an
// empty cell, and a text cell that begins with `=`, `+`, `-`, `@`, a tab or a carriage return gets a
// leading `'` so that a spreadsheet shows it instead of running it as a formula.

import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Musl)
    import Musl
#elseif canImport(Darwin)
    import Darwin
#endif

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
    private var headerPending = false

    /// When set, a header written before any row is dropped if no row follows (`wxdb export` that
    /// matched nothing prints nothing and fails, as a query does).
    public var withholdsHeaderUntilFirstRow = false

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
        headerPending = withholdsHeaderUntilFirstRow
    }

    /// Writes a header of a line-based format (see ``raw(_:)``), withheld like ``header(_:)``.
    public func header(text: String) {
        raw(text)
        headerPending = withholdsHeaderUntilFirstRow
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
        headerPending = false
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
        headerPending = false
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
        guard writeError == nil, !headerPending else { return }
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

/// The bytes CSV is made of, shared by the writer and the reader.
extension UInt8 {
    static let comma = UInt8(ascii: ",")
    static let quote = UInt8(ascii: "\"")
    static let cr = UInt8(ascii: "\r")
    static let lf = UInt8(ascii: "\n")
    static let tab = UInt8(ascii: "\t")
}
