import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Observations read from a station CSV: header `time,<variable>,...`, Open-Meteo variable names,
/// metric units, times with a zone.
public struct StationCSV {
    public struct Row: Sendable, Equatable {
        public var line: Int
        public var time: Int64
        public var values: [Double?]
    }

    /// A problem in the file, with the line it is on (the header is line 1).
    public struct Problem: Error, Sendable, Equatable, CustomStringConvertible {
        public var line: Int
        public var message: String
        /// The whole file is unusable (its encoding), not one row that could be skipped.
        public var wholeFile = false
        public init(line: Int, message: String, wholeFile: Bool = false) {
            self.line = line
            self.message = message
            self.wholeFile = wholeFile
        }
        public var description: String { wholeFile ? message : "line \(line): \(message)" }
    }

    public var rows: [Row] = []
    /// Rows that could not be read (only collected when `skipBadRows`).
    public var skipped: [Problem] = []
    /// Values left empty because no weather can have them (`PhysicalRange`).
    public var outOfRange = RangeFilter()

    /// Parses `data`. Without `skipBadRows` the first bad row throws; with it, bad rows are
    /// collected in `skipped`. `timezone` reads times that have no offset (nil: such times are errors);
    /// it returns nil for a wall time the zone skips (the DST gap), which is that row's error.
    public static func parse(_ data: Data, timezone: ((Int64) -> Int64?)?, skipBadRows: Bool) throws -> StationCSV {
        // UTF-16 (what some spreadsheet programs save as "Unicode text") starts with a byte-order
        // mark or has a NUL beside every ASCII letter: say so, instead of an invalid-UTF-8 field.
        let head = Array(data.prefix(64))
        if head.starts(with: [0xFF, 0xFE]) || head.starts(with: [0xFE, 0xFF])
            || (head.count >= 4 && head.contains(0) && head.filter({ $0 == 0 }).count * 3 >= head.count)
        {
            throw Problem(
                line: 1,
                message:
                    "the file is UTF-16 (or another encoding with NUL bytes between letters), not UTF-8; save it as UTF-8 (\"CSV UTF-8\" in spreadsheet programs) and import it again",
                wholeFile: true)
        }
        let records: [CSVReader.Record]
        do {
            records = try CSVReader(data).readAll()
        } catch {
            // The reader's sentence starts with its own "Line N, " and ends with a full stop; the
            // problem adds its line and the caller its own sentence end.
            var message = error.description
            if message.hasPrefix("Line \(error.line), ") { message.removeFirst("Line \(error.line), ".count) }
            if message.hasSuffix(".") { message.removeLast() }
            throw Problem(line: error.line, message: message)
        }
        guard let header = records.first else {
            throw Problem(line: 1, message: "the file is empty; expected a header like time,temperature_2m")
        }
        guard header.fields.first?.trimmed(.whitespaces).lowercased() == "time" else {
            throw Problem(
                line: header.line,
                message: "the first column must be 'time' (found '\((header.fields.first ?? "").clippedForMessage())')")
        }
        var columns: [Int] = []
        var seen = Set<Int>()
        for name in header.fields.dropFirst() {
            let trimmed = name.trimmed(.whitespaces)
            guard let index = Variables.hourlyIndex(of: trimmed) else {
                throw Problem(
                    line: header.line,
                    message:
                        "unknown variable '\(trimmed.clippedForMessage())'; use Open-Meteo names: \(Variables.hourlyNames.joined(separator: ", "))"
                )
            }
            guard seen.insert(index).inserted else {
                throw Problem(line: header.line, message: "column '\(trimmed.clippedForMessage())' appears twice")
            }
            columns.append(index)
        }
        guard !columns.isEmpty else { throw Problem(line: header.line, message: "no variable columns after 'time'") }

        var result = StationCSV()
        var times: [Int64: Int] = [:]
        for record in records.dropFirst() {
            do {
                var filter = RangeFilter()
                let row = try parseRow(record, columns: columns, timezone: timezone, filter: &filter)
                if let earlier = times[row.time] {
                    throw Problem(
                        line: record.line,
                        message: "time \(CivilTime.isoUTC(row.time)) already given on line \(earlier)")
                }
                times[row.time] = record.line
                result.rows.append(row)
                result.outOfRange.merge(filter)
            } catch let problem as Problem {
                guard skipBadRows else { throw problem }
                result.skipped.append(problem)
            }
        }
        return result
    }

    public static func parseRow(
        _ record: CSVReader.Record, columns: [Int], timezone: ((Int64) -> Int64?)?, filter: inout RangeFilter
    ) throws -> Row {
        guard record.fields.count == columns.count + 1 else {
            throw Problem(
                line: record.line, message: "expected \(columns.count + 1) fields, found \(record.fields.count)")
        }
        let timeText = record.fields[0].trimmed(.whitespaces)
        guard let parsed = CivilTime.parse(timeText), parsed.hasTime else {
            throw Problem(
                line: record.line,
                message: "time '\(timeText.clippedForMessage())' is not ISO 8601 like 2026-11-30T12:00Z")
        }
        let time: Int64
        if let offset = parsed.offset {
            time = parsed.wallSeconds - Int64(offset)
        } else if let timezone {
            guard let instant = timezone(parsed.wallSeconds) else {
                throw Problem(
                    line: record.line,
                    message:
                        "time '\(timeText.clippedForMessage())' does not exist in the --timezone zone (the clocks skip that hour at the change to summer time); remove the row, or give the time with its UTC offset"
                )
            }
            time = instant
        } else {
            throw Problem(
                line: record.line,
                message:
                    "time '\(timeText.clippedForMessage())' has no zone; add Z or an offset like +01:00, or pass --timezone"
            )
        }
        var values = [Double?](repeating: nil, count: Variables.hourly.count)
        for (position, column) in columns.enumerated() {
            let text = record.fields[position + 1].trimmed(.whitespaces)
            if text.isEmpty { continue }
            // Double(String) stops at a NUL byte ("1\0" + "2" reads as 1), so refuse NUL first.
            guard !text.utf8.contains(0), let value = Double(text), value.isFinite else {
                throw Problem(
                    line: record.line,
                    message: "\(Variables.hourly[column].name) '\(text.clippedForMessage())' is not a number")
            }
            values[column] = filter.check(value, Variables.hourly[column])
        }
        return Row(line: record.line, time: time, values: values)
    }

    /// A value with every field given (engines build these from their rows).
    public init(rows: [Row] = [], skipped: [Problem] = [], outOfRange: RangeFilter = RangeFilter()) {
        self.outOfRange = outOfRange
        self.rows = rows
        self.skipped = skipped
    }
}
