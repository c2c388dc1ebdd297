import FoundationEssentials
import WxCore

/// Meteostat's hourly station files: the new dumps (`data.meteostat.net/hourly/{year}/{station}.csv.gz`,
/// a header row, each parameter with a `<name>_source` partner) and the legacy bulk files (no header:
/// date, hour, temp, dwpt, rhum, prcp, snow, wdir, wspd, wpgt, pres, tsun, coco). Times are UTC;
/// units °C, %, mm, degrees, km/h, hPa.
public enum Meteostat {
    static let parameters: [(name: String, slot: Int)] = [
        ("temp", Slot.temperature), ("dwpt", Slot.dewPoint), ("rhum", Slot.humidity), ("prcp", Slot.precipitation),
        ("wdir", Slot.windDirection), ("wspd", Slot.windSpeed), ("wpgt", Slot.gusts), ("pres", Slot.pressure)
    ]
    static let legacyColumns = [
        "date", "hour", "temp", "dwpt", "rhum", "prcp", "snow", "wdir", "wspd", "wpgt", "pres", "tsun", "coco"
    ]

    /// Whether a `_source` value names a model rather than an observing network: Meteostat fills
    /// gaps from its `model` provider and from forecasts (DWD MOSMIX, MET Norway's forecast).
    public static func isModel(_ source: Substring) -> Bool {
        let s = source.lowercased()
        return ["model", "mosmix", "forecast", "nwp", "gfs", "icon", "ecmwf", "era5", "reanalysis"].contains {
            s.contains($0)
        }
    }

    /// The station id in a file name such as `10147.csv.gz`.
    public static func stationID(fileName: String) -> String? {
        let base = fileName.split(separator: "/").last.map(String.init) ?? fileName
        guard let id = base.split(separator: ".").first, (4...6).contains(id.count),
            id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) })
        else { return nil }
        return String(id)
    }

    /// Reads either format. A value whose `_source` is a model is left out and counted unless
    /// `includeModel`; the legacy format cannot say, so its rows after `now` (forecasts) are dropped.
    public static func read(
        _ data: Data, includeModel: Bool, now: Int64, into result: inout OfficialImport
    ) throws -> [StationReport] {
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.byteLines()
        while let last = lines.last, last.allSatisfy(\.isWhitespace) { lines.removeLast() }
        guard let first = lines.first else { throw StationFormatError("the file is empty; nothing was stored") }
        let firstCells = cellsOf(first)
        let legacy = firstCells.first.map { ISD.isoDate($0) != nil } ?? false
        var header: [String]
        var startLine: Int
        if legacy {
            guard firstCells.count == legacyColumns.count else {
                throw StationFormatError(
                    "this looks like a legacy Meteostat file but has \(firstCells.count) fields, not 13 (date,hour,temp,dwpt,rhum,prcp,snow,wdir,wspd,wpgt,pres,tsun,coco)",
                    line: 1)
            }
            header = legacyColumns
            startLine = 0
            result.format = "Meteostat hourly (legacy bulk)"
            result.notes.append(
                "the legacy format does not say which rows Meteostat filled from a model; rows after now were left out, but gaps before may be model data"
            )
        } else {
            header = firstCells.map { $0.trimmed(.whitespaces).lowercased() }
            startLine = 1
            guard header.contains("temp") || header.contains("prcp") || header.contains("wspd") else {
                throw StationFormatError(
                    "this is not a Meteostat hourly file: the header (\(first.prefix(80))) names none of temp, prcp, wspd",
                    line: 1)
            }
            result.format = "Meteostat hourly"
            if !header.contains(where: { $0.hasSuffix("_source") }) {
                result.notes.append("the file has no _source columns, so model-filled rows cannot be told apart")
            }
        }
        func column(_ name: String) -> Int? { header.firstIndex(of: name) }
        let timeColumn = column("time")
        let dateColumn = column("date")
        let hourColumn = column("hour")
        let ymd = [column("year"), column("month"), column("day")]
        guard
            timeColumn != nil || (dateColumn != nil && hourColumn != nil)
                || (ymd.allSatisfy { $0 != nil } && hourColumn != nil)
        else {
            throw StationFormatError(
                "the header has no time (time, date and hour, or year, month, day and hour)", line: 1)
        }
        let used = parameters.compactMap { p -> (Int, Int, Int?)? in
            column(p.name).map { ($0, p.slot, column(p.name + "_source")) }
        }
        result.variables = used.map(\.1).sorted()
        var reports: [StationReport] = []
        reports.reserveCapacity(lines.count)
        for (offset, line) in lines.enumerated().dropFirst(startLine) {
            let lineNumber = offset + 1
            if line.allSatisfy(\.isWhitespace) { continue }
            let cells = cellsOf(line)
            guard cells.count >= header.count else {
                throw StationFormatError(
                    "\(cells.count) fields where \(header.count) are expected; the line is cut off", line: lineNumber)
            }
            let time: Int64?
            if let timeColumn {
                time =
                    ISD.isoMinute(cells[timeColumn])
                    ?? ISD.isoDate(cells[timeColumn]).map { $0 }
            } else if let dateColumn, let hourColumn, let day = ISD.isoDate(cells[dateColumn]),
                let hour = Int(cells[hourColumn]), (0...23).contains(hour)
            {
                time = day + Int64(hour) * 3600
            } else if let y = ymd[0].flatMap({ Int(cells[$0]) }), let m = ymd[1].flatMap({ Int(cells[$0]) }),
                let d = ymd[2].flatMap({ Int(cells[$0]) }), let h = hourColumn.flatMap({ Int(cells[$0]) }),
                (1...12).contains(m), (1...31).contains(d), (0...23).contains(h)
            {
                time = UTCTime.days(fromCivil: y, month: m, day: d) * 86400 + Int64(h) * 3600
            } else {
                time = nil
            }
            guard let time else {
                throw StationFormatError(
                    "the time in \"\(line.prefix(40))\" is not a UTC date and hour", line: lineNumber)
            }
            if legacy && time > now {
                result.modelFilledRows += 1
                continue
            }
            var report = StationReport(time: time, line: lineNumber)
            var modelValues = 0
            var values = 0
            for (valueColumn, slot, sourceColumn) in used {
                let cell = cells[valueColumn]
                if cell.isEmpty { continue }
                guard let value = Double(cell) else {
                    throw StationFormatError("\(header[valueColumn]) \"\(cell)\" is not a number", line: lineNumber)
                }
                values += 1
                if !includeModel, let sourceColumn, isModel(cells[sourceColumn]) {
                    modelValues += 1
                    report.reasons[slot] = .modelFilled
                    continue
                }
                report.values[slot] = value
            }
            result.modelFilledValues += modelValues
            if modelValues > 0 && modelValues == values { result.modelFilledRows += 1 }
            if report.values[Slot.windSpeed] == 0 {
                report.values[Slot.windDirection] = nil
                report.reasons[Slot.windDirection] = .calm
            }
            try Plausible.check(report)
            reports.append(report)
        }
        return reports
    }

    static func cellsOf(_ line: Substring) -> [Substring] {
        let line = line.hasSuffix("\r") ? line.dropLast() : line
        return line.byteFields(44).map {
            $0.hasPrefix("\"") && $0.hasSuffix("\"") && $0.count >= 2 ? $0.dropFirst().dropLast() : $0
        }
    }
}

extension ISD {
    /// `YYYY-MM-DD` as UTC seconds of its midnight.
    static func isoDate(_ text: Substring) -> Int64? {
        let u = Array(text.utf8)
        guard u.count == 10, u[4] == 45, u[7] == 45 else { return nil }
        guard let y = Int(text.prefix(4)), let m = Int(text.dropFirst(5).prefix(2)), let d = Int(text.suffix(2)),
            (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        return UTCTime.days(fromCivil: y, month: m, day: d) * 86400
    }
}
