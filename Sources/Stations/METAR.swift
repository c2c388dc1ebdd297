import FoundationEssentials
import WxCore

/// Airport reports: the Iowa Environmental Mesonet's ASOS CSV (`asos.py`) and plain METAR text.
public enum METAR {
    /// The variables an IEM CSV or METAR text can give.
    public static let variables = [
        Slot.temperature, Slot.humidity, Slot.dewPoint, Slot.precipitation, Slot.pressure, Slot.windSpeed,
        Slot.windDirection, Slot.gusts
    ].sorted()

    /// Whether `data` looks like IEM's CSV (a header naming `station` and `valid`) rather than text.
    public static func isIEMCSV(_ data: Data) -> Bool {
        let text = String(decoding: data.prefix(4096), as: UTF8.self)
        for line in text.split(separator: "\n") where !line.hasPrefix("#") && !line.allSatisfy(\.isWhitespace) {
            let names = line.lowercased().split(separator: ",").map { $0.trimmed(.whitespaces) }
            return names.contains("station") && names.contains("valid")
        }
        return false
    }

    /// IEM's missing markers (`missing=M|null|empty`).
    static func isMissing(_ cell: Substring) -> Bool { cell.isEmpty || cell == "M" || cell == "null" }

    /// Reads IEM `asos.py` CSV in any of its unit choices: temperatures from `tmpc`/`dwpc` (else
    /// `tmpf`/`dwpf`), wind from `sknt` (else `sped`, mph), gusts from `gust` (knots, else
    /// `gust_mph`), precipitation from `p01m` (else `p01i`, inches) with IEM's trace (`T` or 0.0001),
    /// `mslp`, `relh`, `drct`. `valid` times are read in `timezone` (asos.py's `tz`, UTC unless
    /// asked otherwise); a `report_type` column, or a `metar` text starting with SPECI, says the kind.
    public static func readIEM(
        _ data: Data, timezone: String = "UTC", station wanted: String? = nil, into result: inout OfficialImport
    ) throws -> [StationReport] {
        let text = String(decoding: data, as: UTF8.self)
        var reports: [StationReport] = []
        reports.reserveCapacity(10000)
        var header: [String]? = nil
        var columns: [String: Int] = [:]
        var lineNumber = 0
        var stations = Set<String>()
        var lastStation: Substring = ""
        var lastTime: Int64? = nil
        var utcZone = timezone == "UTC" || timezone == "Etc/UTC"
        if !utcZone && !ZoneTime.isKnown(timezone) { utcZone = true }
        var picks:
            (
                station: Int, valid: Int, temperature: (Int, Bool)?, dew: (Int, Bool)?, humidity: Int?, direction: Int?,
                speed: (Int, Double)?, gust: (Int, Double)?, precipitation: (Int, Double)?, pressure: Int?, kind: Int?,
                metar: Int?, lat: Int?, lon: Int?, elevation: Int?
            )!
        for line in text.byteLines() {
            lineNumber += 1
            let line = line.hasSuffix("\r") ? line.dropLast() : line
            if line.hasPrefix("#") || line.allSatisfy(\.isWhitespace) { continue }
            let cells = line.byteFields(44)
            guard let header else {
                let names = cells.map { $0.trimmed(.whitespaces).lowercased() }
                for (i, name) in names.enumerated() where columns[name] == nil { columns[name] = i }
                guard let s = columns["station"], let v = columns["valid"] else {
                    throw StationFormatError(
                        "this is not IEM ASOS CSV: the header needs station and valid columns (got \"\(line.prefix(80))\")",
                        line: lineNumber)
                }
                func either(_ a: String, _ b: String) -> (Int, Bool)? {
                    columns[a].map { ($0, true) } ?? columns[b].map { ($0, false) }
                }
                picks = (
                    s, v, either("tmpc", "tmpf"), either("dwpc", "dwpf"), columns["relh"], columns["drct"],
                    columns["sknt"].map { ($0, Convert.knot) } ?? columns["sped"].map { ($0, Convert.mph) },
                    columns["gust"].map { ($0, Convert.knot) } ?? columns["gust_mph"].map { ($0, Convert.mph) },
                    columns["p01m"].map { ($0, 1.0) } ?? columns["p01i"].map { ($0, Convert.inch) },
                    columns["mslp"], columns["report_type"], columns["metar"], columns["lat"], columns["lon"],
                    columns["elevation"]
                )
                header = names
                var set: [Int] = []
                if picks.temperature != nil { set.append(Slot.temperature) }
                if picks.dew != nil { set.append(Slot.dewPoint) }
                if picks.humidity != nil { set.append(Slot.humidity) }
                if picks.direction != nil { set.append(Slot.windDirection) }
                if picks.speed != nil { set.append(Slot.windSpeed) }
                if picks.gust != nil { set.append(Slot.gusts) }
                if picks.precipitation != nil { set.append(Slot.precipitation) }
                if picks.pressure != nil { set.append(Slot.pressure) }
                result.variables = set.sorted()
                if let t = picks.temperature { result.notes.append("temperatures in \(t.1 ? "°C" : "°F")") }
                if let p = picks.precipitation { result.notes.append("precipitation in \(p.1 == 1 ? "mm" : "inches")") }
                continue
            }
            guard cells.count >= header.count else {
                throw StationFormatError(
                    "\(cells.count) fields where the header has \(header.count); the line is cut off", line: lineNumber)
            }
            let stationCell = cells[picks.station]
            if stationCell != lastStation {
                let station = String(stationCell)
                // IEM drops the K of US airports: --station KDSM picks DSM's rows.
                if let wanted, station.uppercased() != wanted.uppercased(),
                    "K" + station.uppercased() != wanted.uppercased()
                {
                    continue
                }
                stations.insert(station)
                lastStation = stationCell
            }
            guard let wall = ISD.isoMinute(cells[picks.valid]) else {
                throw StationFormatError(
                    "valid \"\(cells[picks.valid])\" is not a time like 2024-01-31 13:53", line: lineNumber)
            }
            let time: Int64
            if utcZone {
                time = wall
            } else {
                // A wall time the clocks skip cannot be a report's. One they repeat (the autumn hour) is
                // the first instance until the file has passed it, then the second: asos.py lists reports in
                // time order, so the repeated hour's second pass follows its first.
                guard let instant = ZoneTime.existingInstant(ofWall: wall, timezone: timezone) else {
                    throw StationFormatError(
                        "valid \(cells[picks.valid]) does not exist in \(timezone) (the clocks skip it); give --timezone the zone the file was asked for in",
                        line: lineNumber)
                }
                let later = instant + 3600
                if let previous = lastTime, previous >= instant,
                    later + Int64(ZoneTime.offset(at: later, timezone: timezone)) == wall
                {
                    time = later
                } else {
                    time = instant
                }
            }
            lastTime = time
            var kind = ReportKind.routine
            if let k = picks.kind {
                switch cells[k] {
                case "1", "HFMETAR", "hfmetar": kind = .highFrequency
                case "4", "SPECI", "special", "speci": kind = .special
                default: break
                }
            } else if let m = picks.metar, cells[m].hasPrefix("SPECI") {
                kind = .special
            }
            var report = StationReport(time: time, kind: kind, line: lineNumber)
            func number(_ index: Int) throws -> Double? {
                let cell = cells[index]
                if isMissing(cell) { return nil }
                guard let value = Double(cell) else {
                    throw StationFormatError("\(header[index]) \"\(cell)\" is not a number", line: lineNumber)
                }
                return value
            }
            if let (i, celsius) = picks.temperature, let v = try number(i) {
                report.values[Slot.temperature] = celsius ? v : Convert.rounded(Convert.fahrenheit(v))
            }
            if let (i, celsius) = picks.dew, let v = try number(i) {
                report.values[Slot.dewPoint] = celsius ? v : Convert.rounded(Convert.fahrenheit(v))
            }
            if let i = picks.humidity { report.values[Slot.humidity] = try number(i) }
            if let i = picks.pressure { report.values[Slot.pressure] = try number(i) }
            if let (i, factor) = picks.speed, let v = try number(i) {
                report.values[Slot.windSpeed] = Convert.rounded(v * factor)
            }
            if let (i, factor) = picks.gust, let v = try number(i) {
                report.values[Slot.gusts] = Convert.rounded(v * factor)
            }
            if let i = picks.direction {
                let direction = try number(i)
                if report.values[Slot.windSpeed] == 0 && (direction == nil || direction == 0) {
                    report.reasons[Slot.windDirection] = .calm
                } else if direction == nil, let m = picks.metar, cells[m].contains(" VRB") {
                    report.reasons[Slot.windDirection] = .variableWind
                } else if direction == 0 {
                    report.reasons[Slot.windDirection] = .noValue
                } else {
                    report.values[Slot.windDirection] = direction
                }
            }
            if let (i, factor) = picks.precipitation {
                let cell = cells[i]
                report.precipitationPeriod = .sinceLastRoutine
                if cell == "T" || cell == "0.0001" {
                    report.values[Slot.precipitation] = 0
                    report.trace = true
                } else if let v = try number(i) {
                    report.values[Slot.precipitation] = Convert.rounded(v * factor)
                }
            }
            if result.place == nil, let la = picks.lat, let lo = picks.lon, let lat = Double(cells[la]),
                let lon = Double(cells[lo])
            {
                result.place = StationPlace(
                    latitude: lat, longitude: lon, elevation: picks.elevation.flatMap { Double(cells[$0]) })
            }
            try Plausible.check(report)
            reports.append(report)
        }
        guard header != nil else { throw StationFormatError("the file is empty; nothing was stored") }
        if stations.count > 1 {
            throw StationFormatError(
                "the file has reports from \(stations.count) stations (\(stations.sorted().prefix(5).joined(separator: ", "))); give --station ID to import one"
            )
        }
        result.station = stations.first ?? wanted
        return reports
    }

    /// Reads plain METAR text, one report a line (`METAR`/`SPECI` prefix optional, trailing `=`
    /// allowed). A report carries only its day and time, so the year and month come from a
    /// leading `YYYYMMDDHHMM` stamp (Ogimet's form), a `YYYY/MM/DD HH:MM` line before it (NOAA's
    /// cycle files), or `month` (`YYYY-MM`). Temperature and dew point come from the `T` group in
    /// tenths when present; wind in knots (or m/s, km/h) with `VRB` and calm; gusts; `SLP`; the
    /// `P` group's precipitation since the last routine report (`P0000` a trace).
    public static func readText(
        _ data: Data, month: (year: Int, month: Int)?, station wanted: String? = nil, into result: inout OfficialImport
    ) throws -> [StationReport] {
        let text = String(decoding: data, as: UTF8.self)
        var reports: [StationReport] = []
        var lineNumber = 0
        var stamp: (year: Int, month: Int)? = nil
        var stations = Set<String>()
        // A --station the file never names is a typo or the wrong file, not an empty month.
        var others = Set<String>()
        var wantedSeen = false
        result.variables = [
            Slot.temperature, Slot.dewPoint, Slot.precipitation, Slot.pressure, Slot.windSpeed, Slot.windDirection,
            Slot.gusts
        ].sorted()
        for rawLine in text.byteLines() {
            lineNumber += 1
            var tokens = rawLine.byteWords()
            if tokens.isEmpty { continue }
            if tokens.count == 2, tokens[0].count == 10, tokens[0].dropFirst(4).first == "/",
                let y = Int(tokens[0].prefix(4)), let m = Int(tokens[0].dropFirst(5).prefix(2))
            {
                stamp = (y, m)
                continue
            }
            var lineMonth = stamp ?? month
            if tokens[0].count == 12, tokens[0].allSatisfy(\.isNumber) {
                lineMonth = (Int(tokens[0].prefix(4))!, Int(tokens[0].dropFirst(4).prefix(2))!)
                tokens.removeFirst()
            }
            var kind = ReportKind.routine
            if let first = tokens.first, first == "METAR" || first == "SPECI" {
                if first == "SPECI" { kind = .special }
                tokens.removeFirst()
            }
            guard tokens.count >= 2, let id = tokens.first, id.count == 4,
                id.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }), let when = dayTime(tokens[1])
            else {
                let shown = String(rawLine.prefix(80))
                throw StationFormatError(
                    reports.isEmpty
                        ? "this is not METAR text: expected a report like \"EDDH 311250Z 27012KT ... 12/08 Q1013\", got \"\(shown)\""
                        : "expected a METAR report (station, DDHHMMZ, ...), got \"\(shown)\"",
                    line: lineNumber)
            }
            let station = String(id)
            if let wanted, station.uppercased() != wanted.uppercased() {
                others.insert(station)
                continue
            }
            wantedSeen = true
            if tokens.count > 2 && tokens[2].hasPrefix("NIL") { continue }
            guard let lineMonth else {
                throw StationFormatError(
                    "a METAR report carries only its day and time; give --month YYYY-MM for the reports' month",
                    line: lineNumber)
            }
            stations.insert(station)
            guard when.day <= daysIn(lineMonth.year, lineMonth.month) else {
                throw StationFormatError(
                    "day \(when.day) does not exist in \(lineMonth.year)-\(lineMonth.month)", line: lineNumber)
            }
            let days = UTCTime.days(fromCivil: lineMonth.year, month: lineMonth.month, day: when.day)
            var report = StationReport(
                time: days * 86400 + Int64(when.hour * 3600 + when.minute * 60), kind: kind, line: lineNumber)
            try parseBody(tokens.dropFirst(2), into: &report)
            try Plausible.check(report)
            reports.append(report)
        }
        if stations.count > 1 {
            throw StationFormatError(
                "the file has reports from \(stations.count) stations (\(stations.sorted().prefix(5).joined(separator: ", "))); give --station ID to import one"
            )
        }
        if let wanted, !wantedSeen, !others.isEmpty {
            throw StationFormatError(
                "the file has no reports from \(wanted); it has reports from \(others.count) station(s) (\(others.sorted().prefix(5).joined(separator: ", ")))"
            )
        }
        if reports.isEmpty && wanted == nil { throw StationFormatError("the file has no METAR reports in it") }
        result.station = stations.first ?? wanted
        return reports
    }

    static func daysIn(_ year: Int, _ month: Int) -> Int {
        let next = month == 12 ? (year + 1, 1) : (year, month + 1)
        return Int(
            UTCTime.days(fromCivil: next.0, month: next.1, day: 1) - UTCTime.days(fromCivil: year, month: month, day: 1)
        )
    }

    static func dayTime(_ token: Substring) -> (day: Int, hour: Int, minute: Int)? {
        let u = Array(token.utf8)
        guard u.count == 7, u[6] == 90, u[0..<6].allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        let d = Int(u[0] - 48) * 10 + Int(u[1] - 48)
        let h = Int(u[2] - 48) * 10 + Int(u[3] - 48)
        let m = Int(u[4] - 48) * 10 + Int(u[5] - 48)
        guard (1...31).contains(d), (0...23).contains(h), (0...59).contains(m) else { return nil }
        return (d, h, m)
    }

    static func digits(_ s: Substring) -> Int? {
        guard !s.isEmpty, s.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(s)
    }

    /// The groups after the station and time; the trend (TEMPO, BECMG, NOSIG, FM…) is a forecast and
    /// is not read, the remarks only for SLP, P and T.
    static func parseBody(_ tokens: ArraySlice<Substring>, into report: inout StationReport) throws {
        var remarks = false
        var trend = false
        var sawWind = false
        var sawTemperature = false
        for raw in tokens {
            let token = raw.hasSuffix("=") ? raw.dropLast() : raw
            if token == "RMK" {
                remarks = true
                continue
            }
            if remarks {
                if token.hasPrefix("SLP"), let v = digits(token.dropFirst(3)), token.count == 6 {
                    let hpa = Double(v) / 10
                    report.values[Slot.pressure] = Convert.rounded(v < 500 ? 1000 + hpa : 900 + hpa)
                } else if token.count == 5, token.hasPrefix("P"), let v = digits(token.dropFirst()) {
                    report.precipitationPeriod = .sinceLastRoutine
                    report.values[Slot.precipitation] = Convert.rounded(Double(v) / 100 * Convert.inch)
                    report.trace = v == 0
                } else if token.count == 9, token.hasPrefix("T"), let t = tenths(token.dropFirst().prefix(4)),
                    let d = tenths(token.dropFirst(5))
                {
                    report.values[Slot.temperature] = t
                    report.values[Slot.dewPoint] = d
                } else if token.count == 5, token.hasPrefix("T"), let t = tenths(token.dropFirst()) {
                    report.values[Slot.temperature] = t
                }
                continue
            }
            if trend { continue }
            if ["TEMPO", "BECMG", "NOSIG", "INTER", "PROB30", "PROB40"].contains(token)
                || (token.hasPrefix("FM") && token.count == 6 && digits(token.dropFirst(2)) != nil)
            {
                trend = true
                continue
            }
            if !sawWind, let wind = wind(token) {
                sawWind = true
                report.values[Slot.windSpeed] = Convert.rounded(wind.speed)
                report.values[Slot.gusts] = wind.gust.map(Convert.rounded)
                if wind.speed == 0 {
                    report.reasons[Slot.windDirection] = .calm
                } else if let direction = wind.direction {
                    report.values[Slot.windDirection] = direction
                } else {
                    report.reasons[Slot.windDirection] = .variableWind
                }
                continue
            }
            if !sawTemperature, let pair = temperaturePair(token) {
                sawTemperature = true
                // The T group in the remarks, read later, replaces these whole degrees with tenths.
                if report.values[Slot.temperature] == nil { report.values[Slot.temperature] = pair.0 }
                if report.values[Slot.dewPoint] == nil { report.values[Slot.dewPoint] = pair.1 }
            }
        }
    }

    /// `T01610150`'s halves: a sign digit (1 = below zero) and tenths of a degree.
    static func tenths(_ s: Substring) -> Double? {
        guard s.count == 4, let sign = s.first, sign == "0" || sign == "1", let v = digits(s.dropFirst()) else {
            return nil
        }
        return Double(sign == "1" ? -v : v) / 10
    }

    /// `dddffGggKT`, `VRBffKT`, `00000KT`, also in MPS or KMH, as km/h.
    static func wind(_ token: Substring) -> (direction: Double?, speed: Double, gust: Double?)? {
        let factor: Double
        let body: Substring
        if token.hasSuffix("KT") {
            (factor, body) = (Convert.knot, token.dropLast(2))
        } else if token.hasSuffix("MPS") {
            (factor, body) = (Convert.metresPerSecond, token.dropLast(3))
        } else if token.hasSuffix("KMH") {
            (factor, body) = (1, token.dropLast(3))
        } else {
            return nil
        }
        guard body.count >= 5 else { return nil }
        let head = body.prefix(3)
        let rest = body.dropFirst(3)
        let direction: Double?
        if head == "VRB" {
            direction = nil
        } else if let d = digits(head), d <= 360 {
            direction = Double(d == 0 ? 360 : d)
        } else {
            return nil
        }
        let parts = rest.split(separator: "G", maxSplits: 1, omittingEmptySubsequences: false)
        guard let speed = digits(parts[0]), parts[0].count <= 3 else { return nil }
        var gust: Double? = nil
        if parts.count == 2 {
            guard let g = digits(parts[1]) else { return nil }
            gust = Double(g) * factor
        }
        return (speed == 0 ? nil : direction, Double(speed) * factor, gust)
    }

    /// `12/08`, `M01/M03`, `05/` as whole degrees.
    static func temperaturePair(_ token: Substring) -> (Double, Double?)? {
        let parts = token.split(separator: "/", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        func degrees(_ s: Substring) -> Double? {
            let negative = s.hasPrefix("M")
            let body = negative ? s.dropFirst() : s
            guard body.count == 2, let v = digits(body) else { return nil }
            return Double(negative ? -v : v)
        }
        guard let t = degrees(parts[0]) else { return nil }
        if parts[1].isEmpty { return (t, nil) }
        guard let d = degrees(parts[1]) else { return nil }
        return (t, d)
    }
}
