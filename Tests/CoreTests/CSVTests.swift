import Foundation
import TestSupport
import Testing

@testable import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A unique temporary path; the caller removes it.
private func temporaryPath(_ suffix: String = ".csv") -> String {
    Scratch.path("csv", suffix: suffix)
}

/// Runs `body` against a writer on a temporary file and returns what was written.
/// A small buffer by default, so that the tests also cross buffer boundaries.
private func render(bufferCapacity: Int = 16, _ body: (CSVWriter) -> Void) throws -> String {
    let path = temporaryPath()
    defer { unlink(path) }
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    try #require(fd >= 0)
    defer { close(fd) }
    let writer = CSVWriter(fileDescriptor: fd, bufferCapacity: bufferCapacity)
    body(writer)
    try writer.flush()
    return try String(contentsOfFile: path, encoding: .utf8)
}

@Suite("CSV writer")
struct CSVWriterTests {
    @Test(
        "text cells are quoted only when they must be",
        arguments: [
            ("plain", "plain"),
            ("", ""),
            ("a,b", "\"a,b\""),
            ("say \"hi\"", "\"say \"\"hi\"\"\""),
            ("two\nlines", "\"two\nlines\""),
            ("cr\rhere", "\"cr\rhere\""),
            ("crlf\r\n", "\"crlf\r\n\""),
            ("Zürich °C", "Zürich °C"),
            ("with space", "with space"),
            ("'quoted'", "'quoted'")
        ])
    func quoting(input: String, expected: String) throws {
        let output = try render {
            $0.text(input)
            $0.text("x")
            $0.endRow()
        }
        #expect(output == expected + ",x\r\n")
    }

    @Test(
        "text that a spreadsheet would run gets a leading apostrophe",
        arguments: [
            ("=1+2", "'=1+2"),
            ("+49 30", "'+49 30"),
            ("-3.5", "'-3.5"),  // text, not a number: neutralised
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\tindent", "'\tindent"),
            ("\rstart", "\"'\rstart\""),  // CR also forces quotes; the apostrophe goes inside them
            ("=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\""),
            ("=a,b", "\"'=a,b\""),
            ("a=b", "a=b"),
            ("x-1", "x-1")
        ])
    func neutralisation(input: String, expected: String) throws {
        #expect(
            try render {
                $0.text(input)
                $0.endRow()
            } == expected + "\r\n")
    }

    @Test("text(utf8:) writes the same as text(_:)")
    func utf8Bytes() throws {
        let samples = ["plain", "a,b", "=x", "say \"hi\"", "Köln"]
        let viaBytes = try render { writer in
            for sample in samples {
                Array(sample.utf8).withUnsafeBytes { writer.text(utf8: $0) }
            }
            writer.endRow()
        }
        let viaString = try render { writer in
            for sample in samples { writer.text(sample) }
            writer.endRow()
        }
        #expect(viaBytes == viaString)
    }

    @Test(
        "numbers print plainly, never neutralised, never with an exponent",
        arguments: [
            (84.0 as Double?, "84"),
            (-3, "-3"),
            (0, "0"),
            (-0.0, "0"),
            (18.3, "18.3"),
            (0.1, "0.1"),
            (-3.5, "-3.5"),
            (1013.25, "1013.25"),
            (0.30000000000000004, "0.30000000000000004"),
            (0.0001, "0.0001"),
            (0.00001, "0.00001"),
            (-0.00000015, "-0.00000015"),
            (123_456_789_012_345.5, "123456789012345.5"),
            (999_999_999_999_999, "999999999999999"),
            (1e15, "1000000000000000"),
            (1e16, "10000000000000000"),
            (-1.5e17, "-150000000000000000"),
            (nil, ""),
            (.nan, ""),
            (.infinity, ""),
            (-.infinity, "")
        ])
    func numbers(value: Double?, expected: String) throws {
        let output = try render {
            $0.number(value)
            $0.text("end")
            $0.endRow()
        }
        #expect(output == expected + ",end\r\n")
    }

    @Test(
        "printed numbers read back as the same Double",
        arguments: [18.3, 0.1, 1e-5, 2.5e-9, .greatestFiniteMagnitude, .leastNonzeroMagnitude, -273.15])
    func numberRoundTrip(value: Double) throws {
        let output = try render(bufferCapacity: 4096) {
            $0.number(value)
            $0.endRow()
        }
        #expect(output.hasSuffix("\r\n"))
        #expect(Double(output.dropLast()) == value)  // "\r\n" is one Character
        #expect(!output.contains("e"))
    }

    @Test(
        "integers",
        arguments: [
            (Int64(0) as Int64?, "0"), (7, "7"), (-42, "-42"), (1_000_000, "1000000"),
            (.max, "9223372036854775807"), (.min, "-9223372036854775808"),
            (nil, "\"\"")  // a row of one empty cell is written as "" so that it is not a blank line
        ])
    func integers(value: Int64?, expected: String) throws {
        #expect(
            try render {
                $0.integer(value)
                $0.endRow()
            } == expected + "\r\n")
    }

    @Test(
        "ISO 8601 UTC times",
        arguments: [
            (Int64(0), "1970-01-01T00:00:00Z"),
            (1_796_040_000, "2026-11-30T12:00:00Z"),
            (-1, "1969-12-31T23:59:59Z"),
            (951_782_400, "2000-02-29T00:00:00Z"),
            (1_709_251_199, "2024-02-29T23:59:59Z"),
            (4_102_444_800, "2100-01-01T00:00:00Z"),
            (-62_135_596_800, "0001-01-01T00:00:00Z"),
            (253_402_300_799, "9999-12-31T23:59:59Z")
        ])
    func isoTimes(unix: Int64, expected: String) throws {
        #expect(UTCTime.format(unix) == expected)
        #expect(
            try render {
                $0.isoUTC(unix)
                $0.endRow()
            } == expected + "\r\n")
    }

    @Test("UTCTime agrees with Foundation, and days(fromCivil:) inverts civil(fromDays:)")
    func utcAgreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            let unix = Int64.random(in: -5_000_000_000...10_000_000_000, using: &generator)
            #expect(UTCTime.format(unix) == formatter.string(from: Date(timeIntervalSince1970: TimeInterval(unix))))
        }
        for days in Int64(-800_000)...Int64(800_000) where days % 97 == 0 {
            let civil = UTCTime.civil(fromDays: days)
            #expect(UTCTime.days(fromCivil: civil.year, month: civil.month, day: civil.day) == days)
        }
    }

    @Test("cells are separated by commas, rows end in CRLF, a lone empty cell is kept")
    func rows() throws {
        let output = try render { writer in
            writer.header(["a", "b", "c"])
            writer.integer(1)
            writer.empty()
            writer.number(nil)
            writer.endRow()
            writer.empty()
            writer.endRow()
            writer.text("")
            writer.text("")
            writer.endRow()
        }
        #expect(output == "a,b,c\r\n1,,\r\n\"\"\r\n,\r\n")
    }

    @Test("a failing descriptor surfaces as a thrown error with a clear message")
    func badDescriptor() throws {
        let writer = CSVWriter(fileDescriptor: -1)
        writer.text("x")
        writer.endRow()
        #expect(throws: CSVWriteError(code: EBADF)) { try writer.flush() }
        #expect(writer.writeError?.description.contains("not open for writing") == true)
    }

    #if os(Linux)
        @Test("a full disk (/dev/full) fails with ENOSPC once the buffer spills")
        func diskFull() throws {
            let fd = open("/dev/full", O_WRONLY)
            try #require(fd >= 0)
            defer { close(fd) }
            let writer = CSVWriter(fileDescriptor: fd, bufferCapacity: 64)
            for i in 0..<100 {  // well past one buffer: the error is recorded mid-stream, not thrown
                writer.integer(Int64(i))
                writer.endRow()
            }
            #expect(writer.writeError == CSVWriteError(code: ENOSPC))
            let error = #expect(throws: CSVWriteError.self) { try writer.flush() }
            #expect(error?.description.contains("Free some disk space") == true)
        }
    #endif
}

@Suite("CSV round trip")
struct CSVRoundTripTests {
    /// Awkward text cells, cycled through the rows.
    static let texts = [
        "Berlin", "São Paulo", "a,b", "say \"hi\"", "two\nlines", "crlf\r\nend", "=SUM(A1)", "-minus", "", "東京"
    ]

    /// The rows the writer was asked for, as a reader should see them.
    static func expectedRow(_ i: Int) -> [String] {
        let text = texts[i % texts.count]
        let shown: String
        if let first = text.first, "=+-@\t\r".contains(first) { shown = "'" + text } else { shown = text }
        let value = Double(i % 500) / 10 - 20  // -20.0 ... 29.9
        var valueText = value.rounded() == value ? String(Int(value)) : "\(value)"
        if valueText == "-0" { valueText = "0" }
        return [String(i), shown, valueText, UTCTime.format(1_796_040_000 + Int64(i) * 3600), i % 7 == 0 ? "" : "x"]
    }

    @Test("written rows parse back with CSVReader and with Python's csv module")
    func roundTrip() throws {
        let rowCount = 20_000
        let path = temporaryPath()
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        try #require(fd >= 0)
        let writer = CSVWriter(fileDescriptor: fd, bufferCapacity: 1000)
        writer.header(["i", "name", "value", "valid_time", "flag"])
        for i in 0..<rowCount {
            writer.integer(Int64(i))
            writer.text(Self.texts[i % Self.texts.count])
            writer.number(Double(i % 500) / 10 - 20)
            writer.isoUTC(1_796_040_000 + Int64(i) * 3600)
            if i % 7 == 0 { writer.empty() } else { writer.text("x") }
            writer.endRow()
        }
        try writer.flush()
        close(fd)

        let expected = [["i", "name", "value", "valid_time", "flag"]] + (0..<rowCount).map(Self.expectedRow)
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        let records = try CSVReader(data).readAll()
        #expect(records.count == rowCount + 1)
        #expect(records.map(\.fields) == expected)

        // Python's csv module is the reference reader most users will point at an export.
        let searchPath = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(separator: ":")
        guard
            let python = searchPath.map({ "\($0)/python3" }).first(where: FileManager.default.isExecutableFile(atPath:))
        else { return }  // no Python on this machine: CSVReader's check above still stands
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = [
            "-c",
            "import csv, json, sys\nwith open(sys.argv[1], newline='', encoding='utf-8') as f: json.dump(list(csv.reader(f)), sys.stdout)",
            path
        ]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let json = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0)
        let pythonRows = try JSONDecoder().decode([[String]].self, from: json)
        #expect(pythonRows.count == rowCount + 1)
        #expect(pythonRows == expected)
    }
}

@Suite("CSV reader")
struct CSVReaderTests {
    private func read(_ text: String) throws(CSVError) -> [CSVReader.Record] {
        try CSVReader(Array(text.utf8)).readAll()
    }

    @Test("records carry the line they start on, counting line breaks inside quotes")
    func lineNumbers() throws {
        let records = try read(
            "time,note\r\n2026-11-30T12:00Z,\"two\nlines\"\r\n2026-11-30T13:00Z,plain\r\n\r\nlast,\"a\r\nb\r\nc\"")
        #expect(records.map(\.line) == [1, 2, 4, 6])
        #expect(records[1].fields == ["2026-11-30T12:00Z", "two\nlines"])
        #expect(records[3].fields == ["last", "a\r\nb\r\nc"])
    }

    @Test(
        "line endings, BOM, empty fields",
        arguments: [
            ("a,b\nc,d\n", [["a", "b"], ["c", "d"]]),
            ("a,b\r\nc,d", [["a", "b"], ["c", "d"]]),
            ("a,b\rc,d\r", [["a", "b"], ["c", "d"]]),
            ("\u{FEFF}time,x\n1,2\n", [["time", "x"], ["1", "2"]]),
            ("a,,\n,b,\n", [["a", "", ""], ["", "b", ""]]),
            ("\"\"\n\"a\"\"b\",\"c,d\"\n", [[""], ["a\"b", "c,d"]]),
            ("\n\na\n\n", [["a"]]),
            ("", [])
        ])
    func shapes(text: String, expected: [[String]]) throws {
        #expect(try read(text).map(\.fields) == expected)
    }

    @Test("the header is line 1 even after a BOM")
    func bomLine() throws {
        let records = try CSVReader([0xEF, 0xBB, 0xBF] + Array("time,t\n2026-11-30T12:00Z,3\n".utf8)).readAll()
        #expect(records.map(\.line) == [1, 2])
        #expect(records[0].fields[0] == "time")
    }

    @Test(
        "malformed input names the line and field",
        arguments: [
            ("time,t\n1,2\n3,\"open\n4,5\n", CSVError.unterminatedQuote(line: 3, field: 2)),
            ("time,t\n1,2\n3,4\"5\n", .strayQuote(line: 3, field: 2)),
            ("time,t\n\"a\nb\"x,1\n", .strayQuote(line: 3, field: 1)),
            ("time,t\n1, \"2\"\n", .strayQuote(line: 2, field: 2))
        ])
    func errors(text: String, expected: CSVError) {
        #expect(throws: expected) { try read(text) }
        #expect(expected.description.hasPrefix("Line \(expected.line), field \(expected.field):"))
    }

    @Test("invalid UTF-8 is reported with its line")
    func invalidUTF8() {
        let bytes = Array("time,t\n1,2\n3,".utf8) + [0xFF, 0xFE] + Array("\n".utf8)
        #expect(throws: CSVError.invalidUTF8(line: 3, field: 2)) { try CSVReader(bytes).readAll() }
        #expect(CSVError.invalidUTF8(line: 3, field: 2).description.contains("not valid UTF-8"))
    }

    @Test("next() streams records one at a time")
    func streaming() throws {
        var reader = CSVReader(Data("a\nb\n".utf8))
        #expect(try reader.next()?.fields == ["a"])
        #expect(try reader.next() == CSVReader.Record(fields: ["b"], line: 2))
        #expect(try reader.next() == nil)
    }
}
