import FoundationEssentials
import WxCore

/// NOAA's ISD-Lite station-years and GHCNh station files.
public enum ISD {
    /// The variables ISD-Lite carries.
    public static let liteVariables = [
        Slot.temperature, Slot.dewPoint, Slot.precipitation, Slot.pressure, Slot.windSpeed, Slot.windDirection
    ].sorted()

    /// The station id (`USAF-WBAN`) in an ISD-Lite file name such as `101470-99999-2024.gz`.
    public static func stationID(fileName: String) -> String? {
        let base = fileName.split(separator: "/").last.map(String.init) ?? fileName
        let parts = base.split(separator: "-")
        guard parts.count >= 3, parts[0].count == 6, parts[1].count == 5,
            parts[0].allSatisfy({ $0.isASCII && ($0.isNumber || $0.isLetter) }),
            parts[1].allSatisfy({ $0.isASCII && $0.isNumber })
        else { return nil }
        return "\(parts[0])-\(parts[1])"
    }

    /// Reads an ISD-Lite file (already decompressed): one line an hour, twelve whitespace-separated
    /// integers (year month day hour, temperature, dew point and sea-level pressure ×10, wind
    /// direction, wind speed ×10 m/s, sky cover, 1-hour and 6-hour precipitation ×10 mm), −9999
    /// missing, −1 a trace, direction 0 with speed 0 calm. Times are UTC.
    public static func readLite(_ data: Data) throws -> [StationReport] {
        let text = String(decoding: data, as: UTF8.self)
        var reports: [StationReport] = []
        reports.reserveCapacity(9000)
        var lineNumber = 0
        var fields = [Int](repeating: 0, count: 12)
        for line in text.byteLines() {
            lineNumber += 1
            var count = 0
            var ok = true
            for token in line.byteWords() {
                guard count < 12, let value = Int(token) else {
                    ok = false
                    break
                }
                fields[count] = value
                count += 1
            }
            if count == 0 && ok { continue }
            guard ok, count == 12, (1900...2100).contains(fields[0]), (1...12).contains(fields[1]),
                (1...31).contains(fields[2]), (0...23).contains(fields[3])
            else {
                let shown = String(line.prefix(80))
                if reports.isEmpty {
                    throw StationFormatError(
                        "this is not an ISD-Lite file: expected twelve numbers (year month day hour temperature dew-point pressure direction speed sky precipitation-1h precipitation-6h), got \"\(shown)\"",
                        line: lineNumber)
                }
                throw StationFormatError(
                    "expected twelve whole numbers (year month day hour ...), got \"\(shown)\"", line: lineNumber)
            }
            let day = UTCTime.days(fromCivil: fields[0], month: fields[1], day: fields[2])
            var report = StationReport(time: day * 86400 + Int64(fields[3]) * 3600, line: lineNumber)
            func tenths(_ raw: Int) -> Double? { raw == -9999 ? nil : Double(raw) / 10 }
            report.values[Slot.temperature] = tenths(fields[4])
            report.values[Slot.dewPoint] = tenths(fields[5])
            report.values[Slot.pressure] = tenths(fields[6])
            let speed = tenths(fields[8])
            report.values[Slot.windSpeed] = speed.map { Convert.rounded($0 * Convert.metresPerSecond) }
            if fields[7] != -9999 {
                if fields[7] == 0 && speed == 0 {
                    report.reasons[Slot.windDirection] = .calm
                } else if fields[7] == 0 {
                    report.reasons[Slot.windDirection] = .noValue
                } else {
                    report.values[Slot.windDirection] = Double(fields[7])
                }
            }
            switch fields[10] {
            case -9999: break
            case -1:
                report.values[Slot.precipitation] = 0
                report.trace = true
            default: report.values[Slot.precipitation] = Double(fields[10]) / 10
            }
            try Plausible.check(report)
            reports.append(report)
        }
        if reports.isEmpty { throw StationFormatError("the ISD-Lite file has no hours in it") }
        return reports
    }

    /// GHCNh's variables wxdb keeps, with their unit factor to wxdb's units.
    static let ghcnhColumns: [(name: String, slot: Int, factor: Double)] = [
        ("temperature", Slot.temperature, 1), ("dew_point_temperature", Slot.dewPoint, 1),
        ("relative_humidity", Slot.humidity, 1), ("sea_level_pressure", Slot.pressure, 1),
        ("wind_speed", Slot.windSpeed, Convert.metresPerSecond), ("wind_direction", Slot.windDirection, 1),
        ("wind_gust", Slot.gusts, Convert.metresPerSecond), ("precipitation", Slot.precipitation, 1)
    ]

    /// Whether a GHCNh `_Quality_Code` marks the value unusable: ISD's suspect and erroneous digits
    /// (2, 3, 6, 7) or any letter of GHCNh's own QC checks (each names the check it failed). Empty
    /// and ISD's passed digits (0, 1, 4, 5, 9) keep the value.
    public static func ghcnhRejects(_ code: Substring) -> Bool {
        let code = code.trimmed(.whitespaces)
        if code.isEmpty { return false }
        if ["0", "1", "4", "5", "9"].contains(code) { return false }
        return true
    }

    /// Reads a GHCNh station file (`GHCNh_<station>_<year>.psv`, pipe-separated with a header):
    /// per variable a value column and its `_Measurement_Code`, `_Quality_Code` and `_Report_Type`
    /// partners. A value whose quality code rejects it is left out and counted; `FM-16` reports are
    /// specials; a `T` measurement code on precipitation is a trace.
    public static func readGHCNh(_ data: Data, into result: inout OfficialImport) throws -> [StationReport] {
        let text = String(decoding: data, as: UTF8.self)
        var lines = text.byteLines().makeIterator()
        guard let headerLine = lines.next() else { throw StationFormatError("the GHCNh file is empty") }
        let header = headerLine.byteFields(124).map {
            $0.trimmed()
        }
        func column(_ name: String) -> Int? { header.firstIndex { $0.lowercased() == name.lowercased() } }
        // NOAA's documentation names the first column Station_ID; the by-year .psv files say STATION.
        guard header.count > 3, let stationColumn = column("Station_ID") ?? column("STATION") else {
            throw StationFormatError(
                "this is not a GHCNh file: the first line should be the pipe-separated header starting STATION|Station_name|DATE (or Station_ID|...)",
                line: 1)
        }
        let dateColumn = column("DATE")
        let parts = ["Year", "Month", "Day", "Hour", "Minute"].map(column)
        guard dateColumn != nil || parts.allSatisfy({ $0 != nil }) else {
            throw StationFormatError("the GHCNh header has neither DATE nor Year|Month|Day|Hour|Minute", line: 1)
        }
        let latitude = column("Latitude")
        let longitude = column("Longitude")
        let elevation = column("Elevation")
        let nameColumn = column("Station_name")
        let kinds = column("temperature_Report_Type")
        let used = ghcnhColumns.compactMap { entry -> (Int, Int, Double, Int?, Int?)? in
            guard let value = column(entry.name) else { return nil }
            return (
                value, entry.slot, entry.factor, column(entry.name + "_Quality_Code"),
                column(entry.name + "_Measurement_Code")
            )
        }
        result.variables = used.map(\.1).sorted()
        var reports: [StationReport] = []
        var lineNumber = 1
        while let line = lines.next() {
            lineNumber += 1
            if line.allSatisfy({ $0.isWhitespace }) { continue }
            let cells = line.byteFields(124)
            guard cells.count >= header.count - 1 else {
                throw StationFormatError(
                    "\(cells.count) fields where the header has \(header.count); the line is cut off", line: lineNumber)
            }
            func cell(_ i: Int?) -> Substring {
                guard let i, i < cells.count else { return "" }
                return Substring(cells[i].trimmed())
            }
            let time: Int64?
            if let dateColumn {
                time = isoMinute(cell(dateColumn))
            } else {
                let numbers = parts.map { Int(cell($0)) }
                if let y = numbers[0], let mo = numbers[1], let d = numbers[2], let h = numbers[3], let mi = numbers[4],
                    (1...12).contains(mo), (1...31).contains(d), (0...23).contains(h), (0...59).contains(mi)
                {
                    time = UTCTime.days(fromCivil: y, month: mo, day: d) * 86400 + Int64(h * 3600 + mi * 60)
                } else {
                    time = nil
                }
            }
            guard let time else {
                throw StationFormatError(
                    "the date \"\(cell(dateColumn ?? parts[0]))\" is not a time like 2024-01-31T13:00:00",
                    line: lineNumber)
            }
            if result.station == nil { result.station = String(cell(stationColumn)) }
            if result.place == nil, let lat = Double(cell(latitude)), let lon = Double(cell(longitude)) {
                result.place = StationPlace(
                    latitude: lat, longitude: lon, elevation: Double(cell(elevation)),
                    name: nameColumn.map { String(cell($0)) })
            }
            var report = StationReport(
                time: time,
                kind: cell(kinds).replacing("-", with: "").hasPrefix("FM16") ? .special : .routine,
                line: lineNumber)
            for (valueColumn, slot, factor, quality, measurement) in used {
                let raw = cell(valueColumn)
                if raw.isEmpty { continue }
                guard let value = Double(raw) else {
                    throw StationFormatError(
                        "\(header[valueColumn]) \"\(raw)\" is not a number", line: lineNumber)
                }
                if ghcnhRejects(cell(quality)) {
                    report.reasons[slot] = .erroneous
                    result.erroneousValues += 1
                    continue
                }
                if slot == Slot.precipitation && cell(measurement).contains("T") {
                    report.values[slot] = 0
                    report.trace = true
                    continue
                }
                // 999 is ISD's "no direction" (calm or variable), kept by GHCNh with quality code 9.
                if slot == Slot.windDirection && value == 999 {
                    report.reasons[slot] = .noValue
                    continue
                }
                report.values[slot] = Convert.rounded(value * factor)
            }
            if report.values[Slot.windSpeed] == 0 && report.values[Slot.windDirection].map({ $0 == 0 }) != false {
                report.values[Slot.windDirection] = nil
                report.reasons[Slot.windDirection] = .calm
            }
            try Plausible.check(report)
            reports.append(report)
        }
        return reports
    }

    /// `YYYY-MM-DDTHH:MM[:SS]` (a space for the T too) as UTC seconds.
    static func isoMinute(_ text: Substring) -> Int64? {
        var copy = text
        return copy.withUTF8 { isoMinute(bytes: $0) }
    }

    static func isoMinute(bytes u: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard u.count >= 16 else { return nil }
        func num(_ a: Int, _ b: Int) -> Int? {
            var v = 0
            for i in a..<b {
                guard u[i] >= 48, u[i] <= 57 else { return nil }
                v = v * 10 + Int(u[i] - 48)
            }
            return v
        }
        guard u[4] == 45, u[7] == 45, u[10] == 84 || u[10] == 32, u[13] == 58,
            let y = num(0, 4), let mo = num(5, 7), let d = num(8, 10), let h = num(11, 13), let mi = num(14, 16),
            (1...12).contains(mo), (1...31).contains(d), (0...23).contains(h), (0...59).contains(mi)
        else { return nil }
        return UTCTime.days(fromCivil: y, month: mo, day: d) * 86400 + Int64(h * 3600 + mi * 60)
    }
}
