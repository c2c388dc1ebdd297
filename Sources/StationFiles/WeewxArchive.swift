import WxCore
import WxSQLite
import WxStore

/// Hourly observations from a weewx archive database (`weewx.sdb`), read strictly read-only.
///
/// weewx writes one record per archive interval to the `archive` table; `dateTime` is the end of
/// the interval, `interval` its length in minutes and `usUnits` the record's unit system. For valid
/// hour H (UTC): temperature, humidity, dew point, pressure and wind speed and direction come from
/// the record at H, else the latest record in the 10 minutes before H; precipitation is the sum of
/// `rain` over the records with `dateTime` in (H − 1 h, H] when their intervals add up to exactly
/// 60 minutes, and the gust the largest `windGust` of those same records.
public enum WeewxArchive {
    /// The archive column each hourly variable comes from.
    public static let instantColumns: [(column: String, variable: String)] = [
        ("outTemp", "temperature_2m"), ("outHumidity", "relative_humidity_2m"), ("dewpoint", "dew_point_2m"),
        ("barometer", "pressure_msl"), ("windSpeed", "wind_speed_10m"), ("windDir", "wind_direction_10m")
    ]
    static let precipitation = Variables.hourlyIndex(of: "precipitation")!
    static let gusts = Variables.hourlyIndex(of: "wind_gusts_10m")!
    static let instantIndices = instantColumns.map { Variables.hourlyIndex(of: $0.variable)! }
    /// How long before H a reading may be and still stand for H.
    public static let instantTolerance: Int64 = 600

    /// Reads the archive at `path` for valid hours in [`from`, `to`) (either open), in one read
    /// transaction. Throws `StationFileError` when the file is not a weewx archive.
    public static func read(path: String, from: Int64? = nil, to: Int64? = nil) throws -> StationImport {
        try readStationFile(path, kind: "weewx archive") { try read($0, path: path, from: from, to: to) }
    }

    static func read(_ db: Database, path: String, from: Int64?, to: Int64?) throws -> StationImport {
        let columns = try columnNames(db, table: "archive")
        guard !columns.isEmpty else {
            throw StationFileError(
                "\(path) is a SQLite database without an `archive` table, so it is not a weewx archive; nothing was stored. Pass weewx's database (weewx.sdb, see SQLITE_ROOT in weewx.conf)"
            )
        }
        for required in ["datetime", "usunits", "interval"] where !columns.contains(required) {
            let name = ["datetime": "dateTime", "usunits": "usUnits", "interval": "interval"][required]!
            throw StationFileError(
                "\(path) has an `archive` table without a `\(name)` column, so it is not a weewx archive; nothing was stored"
            )
        }
        var result = StationImport(variables: (instantIndices + [precipitation, gusts]).sorted())
        let bounds = hourBounds(from: from, to: to)
        // Only records a reading can have (a hostile `Int64.min` or 4e18 is none), in the range
        // asked for and the hour before it (precipitation sums the records in (H - 1 h, H]).
        let window: [SQLValue] = [.integer(bounds.first - 3600), .integer(bounds.last)]
        guard
            let span = try db.firstRow(
                "SELECT min(dateTime), max(dateTime) FROM archive WHERE dateTime > ? AND dateTime <= ?", window,
                {
                    row -> (Int64, Int64)? in row.isNull(0) ? nil : (row.int64(0), row.int64(1))
                }) ?? nil
        else { return result }
        let first = max(bounds.first, ceilHour(span.0))
        let last = min(bounds.last, ceilHour(span.1))
        guard first <= last else { return result }
        result.firstHour = first
        result.lastHour = last

        // A column an older or trimmed schema lacks reads as NULL.
        let wanted = instantColumns.map(\.column) + ["rain", "windGust"]
        let selected = wanted.map { columns.contains($0.lowercased()) ? "\"\($0)\"" : "NULL" }
        let sql =
            "SELECT dateTime, usUnits, \"interval\", " + selected.joined(separator: ", ")
            + " FROM archive WHERE dateTime > ? AND dateTime <= ? ORDER BY dateTime"
        let statement = try db.makeStatement(sql)
        try statement.bind([.integer(first - 3600), .integer(last)])

        var hour = Hour(time: first)
        var systems: Set<Int> = []
        // Hours no record falls in are counted in one step: two records 130 years apart must not
        // take a million turns of a loop.
        func finish(through time: Int64) {
            guard hour.time < time else { return }
            result.record(hour: hour.time, outcomes: hour.outcomes())
            let empty = (time - hour.time) / 3600 - 1
            result.recordGaps(empty)
            hour = Hour(time: hour.time + (empty + 1) * 3600)
        }
        while let row = try statement.step() {
            let time = row.int64(0)
            finish(through: ceilHour(time))
            let usUnits = row.isNull(1) ? -1 : row.int(1)
            systems.insert(usUnits)
            hour.add(
                Record(
                    // An interval past a day is no archive interval; clamped so sums cannot overflow.
                    time: time, usUnits: usUnits, interval: row.isNull(2) ? 0 : min(max(row.int64(2), 0), 1440 * 365),
                    values: (0..<wanted.count).map { number(row, 3 + $0) }))
            result.recordsRead += 1
        }
        finish(through: last + 3600)
        result.units = systems.sorted().map { code in
            StationUnits.weewxSystems[code].map { "\($0) (usUnits \(code))" } ?? "unknown (usUnits \(code))"
        }
        return result
    }

    /// A finite number, or nil for NULL, text, blobs and infinities.
    static func number(_ row: Row, _ column: Int) -> Double? {
        switch row.value(column) {
        case .integer(let v): return Double(v)
        case .real(let v): return v.isFinite ? v : nil
        default: return nil
        }
    }

    struct Record {
        var time: Int64
        var usUnits: Int
        var interval: Int64
        /// The six instant columns, then rain, then windGust.
        var values: [Double?]
    }

    /// The records with `dateTime` in (time − 1 h, time].
    struct Hour {
        var time: Int64
        var minutes: Int64 = 0
        var rain: Result<Double, StationMissingMark> = .success(0)
        var gust: Result<Double, StationMissingMark> = .failure(StationMissingMark(.noValue))
        var gustUnitUnknown = false
        var latest: Record?
        var count = 0

        mutating func add(_ record: Record) {
            count += 1
            minutes += record.interval
            latest = record
            if case .success(let sum) = rain {
                if let raw = record.values[6] {
                    if let unit = StationUnits.weewxUnit(usUnits: record.usUnits, quantity: .precipitation),
                        let mm = StationUnits.toMetric(raw, unit: unit, quantity: .precipitation)
                    {
                        // One record's rain out of range (−5) spoils the hour's sum, not only its own.
                        let possible = PhysicalRange.contains(mm, Variables.hourly[precipitation])
                        rain = possible ? .success(sum + mm) : .failure(StationMissingMark(.outOfRange))
                    } else {
                        rain = .failure(StationMissingMark(.unknownUnit))
                    }
                } else {
                    rain = .failure(StationMissingMark(.noValue))
                }
            }
            if let raw = record.values[7] {
                if let unit = StationUnits.weewxUnit(usUnits: record.usUnits, quantity: .speed),
                    let speed = StationUnits.toMetric(raw, unit: unit, quantity: .speed)
                {
                    if case .success(let top) = gust {
                        gust = .success(max(top, speed))
                    } else {
                        gust = .success(speed)
                    }
                } else {
                    gustUnitUnknown = true
                }
            }
        }

        func outcomes() -> [Int: Result<Double, StationMissingMark>] {
            var out: [Int: Result<Double, StationMissingMark>] = [:]
            for (position, variable) in instantIndices.enumerated() {
                guard let latest, latest.time >= time - instantTolerance else {
                    out[variable] = .failure(StationMissingMark(.gap))
                    continue
                }
                let quantity = Variables.hourly[variable].quantity
                guard let raw = latest.values[position] else {
                    out[variable] = .failure(StationMissingMark(.noValue))
                    continue
                }
                guard let unit = StationUnits.weewxUnit(usUnits: latest.usUnits, quantity: quantity),
                    let value = StationUnits.toMetric(raw, unit: unit, quantity: quantity)
                else {
                    out[variable] = .failure(StationMissingMark(.unknownUnit))
                    continue
                }
                out[variable] = .success(StationUnits.rounded(value))
            }
            let coverage: Result<Void, StationMissingMark> =
                count == 0
                ? .failure(StationMissingMark(.gap))
                : minutes < 60
                    ? .failure(StationMissingMark(.partialHour))
                    : minutes > 60 ? .failure(StationMissingMark(.overlappingRecords)) : .success(())
            switch coverage {
            case .failure(let mark):
                out[precipitation] = .failure(mark)
                out[gusts] = .failure(mark)
            case .success:
                out[precipitation] = rain.map(StationUnits.rounded)
                out[gusts] =
                    gustUnitUnknown ? .failure(StationMissingMark(.unknownUnit)) : gust.map(StationUnits.rounded)
            }
            return out
        }
    }
}
