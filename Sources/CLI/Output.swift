import Foundation
import WxCore

/// An aligned text table for people: numbers right-aligned, text left-aligned.
struct Table {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns to right-align (numbers).
    var rightAligned: Set<Int> = []

    /// Linear in the size of the table: each cell's width is counted once and each line is
    /// built in one buffer (a regex per line was quadratic in a long cell's padding).
    func render() -> String {
        let counted = rows.map { $0.map(\.count) }
        var widths = headers.map(\.count)
        for row in counted {
            for (i, width) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], width) }
        }
        var out: [UInt8] = []
        func line(_ cells: [String], _ cellWidths: [Int]) {
            let start = out.count
            for (i, cell) in cells.enumerated() where i < widths.count {
                if i > 0 { out.append(contentsOf: [0x20, 0x20]) }
                let pad = max(0, widths[i] - cellWidths[i])
                if rightAligned.contains(i) { out.append(contentsOf: repeatElement(0x20, count: pad)) }
                out.append(contentsOf: cell.utf8)
                if !rightAligned.contains(i) { out.append(contentsOf: repeatElement(0x20, count: pad)) }
            }
            // No trailing blanks (padding of a last column, or a cell that ends in them).
            while out.count > start, let last = out.last, last == 0x20 || last == 0x09 || last == 0x0A || last == 0x0D { out.removeLast() }
            out.append(0x0A)
        }
        line(headers, headers.map(\.count))
        line(widths.map { String(repeating: "-", count: $0) }, widths)
        for (row, cellWidths) in zip(rows, counted) { line(row, cellWidths) }
        return String(decoding: out, as: UTF8.self)
    }
}

/// Turns command-line times into UTC instants.
enum TimeInput {
    /// ISO 8601 with `Z` or an offset is absolute; a bare date or a time without offset is read in
    /// `timezone` (a tz-database name). `now` is also accepted.
    static func resolve(_ text: String, timezone: String, now: Int64, option: String) throws -> Int64 {
        if text == "now" { return now }
        guard let parsed = CivilTime.parse(text) else {
            throw UsageError("--\(option) '\(text)' is not a time; use ISO 8601 like 2026-11-30, 2026-11-30T12:00Z or 2026-11-30T13:00+01:00")
        }
        if let offset = parsed.offset { return parsed.wallSeconds - Int64(offset) }
        guard TimeZone(identifier: timezone) != nil else {
            // `auto` until the first fetch tells wxdb the zone: guessing would shift times by hours.
            throw CLIError("--\(option) '\(text)' has no UTC offset and the location's time zone is not known yet (\(timezone.clippedForMessage())); write it with Z or an offset (e.g. \(text.count == 10 ? text + "T00:00Z" : text + "Z")), or set it with 'wxdb locations set NAME --timezone TZ' (an ingest also learns it)")
        }
        return localToUTC(parsed.wallSeconds, timezone: timezone)
    }

    /// `--from` (inclusive) and `--to` (inclusive; a bare date includes its whole local day) as a
    /// half-open `[from, to)` span of instants, the same for every command.
    static func range(_ args: ParsedArguments, timezone: String, now: Int64) throws -> (from: Int64?, to: Int64?) {
        var from: Int64?
        var to: Int64?
        if let text = args.value("from") {
            from = try resolve(text, timezone: timezone, now: now, option: "from")
        }
        if let text = args.value("to") {
            let end = try resolve(text, timezone: timezone, now: now, option: "to")
            if let parsed = CivilTime.parse(text), !parsed.hasTime {
                to = localToUTC(parsed.wallSeconds + 86400, timezone: timezone)
            } else {
                to = end + 1
            }
        }
        if let from, let to, from >= to {
            throw UsageError("--from must be before --to")
        }
        return (from, to)
    }

    static func localToUTC(_ wall: Int64, timezone: String) -> Int64 {
        ZoneTime.instant(ofWall: wall, timezone: timezone)
    }

    /// Local wall time for display: `2026-11-30 13:00` in the zone (falls back to UTC).
    static func local(_ instant: Int64, timezone: String) -> String {
        CivilTime.localString(instant, offset: ZoneTime.offset(at: instant, timezone: timezone))
    }
}

/// Formats a number for a table: up to `places` decimals, no trailing zeros.
func formatNumber(_ value: Double?, places: Int = 2) -> String {
    guard let value, value.isFinite else { return "" }
    var text = String(format: "%.\(places)f", value)
    if text.contains(".") {
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
    }
    return text == "-0" ? "0" : text
}
