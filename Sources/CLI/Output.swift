import Foundation
import WxCore

/// An aligned text table for people: numbers right-aligned, text left-aligned.
struct Table {
    var headers: [String]
    var rows: [[String]] = []
    /// Columns to right-align (numbers).
    var rightAligned: Set<Int> = []

    func render() -> String {
        var widths = headers.map(\.count)
        for row in rows {
            for (i, cell) in row.enumerated() where i < widths.count { widths[i] = max(widths[i], cell.count) }
        }
        func line(_ cells: [String]) -> String {
            var parts: [String] = []
            for (i, cell) in cells.enumerated() {
                let pad = String(repeating: " ", count: max(0, widths[i] - cell.count))
                parts.append(rightAligned.contains(i) ? pad + cell : cell + pad)
            }
            return parts.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression) + "\n"
        }
        var out = line(headers)
        out += line(widths.map { String(repeating: "-", count: $0) })
        for row in rows { out += line(row) }
        return out
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
            throw CLIError("--\(option) '\(text)' has no UTC offset and the location's time zone is not known yet (\(timezone)); write it with Z or an offset (e.g. \(text.count == 10 ? text + "T00:00Z" : text + "Z")), or set it with 'wxdb locations set NAME --timezone TZ' (an ingest also learns it)")
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
