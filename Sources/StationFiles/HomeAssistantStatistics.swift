import WxCore
import WxSQLite
import WxStore

/// Hourly observations from Home Assistant's recorder database (`home-assistant_v2.db`), read
/// strictly read-only from its long-term statistics.
///
/// `statistics` holds one row per statistic and hour, starting at `start_ts` (UTC seconds), joined
/// to `statistics_meta` by `metadata_id`. A measurement's `mean` over [H − 1 h, H) is the value valid
/// at H; precipitation is the increase of the running `sum` from the row before to that row.
public enum HomeAssistantStatistics {
    /// One `--sensor VARIABLE=STATISTIC_ID`.
    public struct Sensor: Sendable, Equatable {
        public var variable: Int
        public var statisticID: String
        public init(variable: Int, statisticID: String) {
            self.variable = variable
            self.statisticID = statisticID
        }
    }

    /// A statistic the file holds, for `--list`.
    public struct Listed: Sendable, Equatable {
        public var statisticID: String
        public var unit: String?
        public var hours: Int
        public var hasMean: Bool
        public var hasSum: Bool
        public var firstStart: Int64?
        public var lastStart: Int64?
    }

    /// Every statistic in the file with its unit and hourly rows, by statistic id.
    public static func list(path: String) throws -> [Listed] {
        try readStationFile(path, kind: "Home Assistant database") { db in
            try checkSchema(db, path: path)
            // The first and last start a reading can have: a start_ts of 1e300 is none.
            return try db.rows(
                """
                SELECT m.statistic_id, m.unit_of_measurement, count(s.start_ts), count(s.mean), count(s.sum),
                       min(CASE WHEN s.start_ts BETWEEN ?1 AND ?2 THEN s.start_ts END),
                       max(CASE WHEN s.start_ts BETWEEN ?1 AND ?2 THEN s.start_ts END)
                FROM statistics_meta m LEFT JOIN statistics s ON s.metadata_id = m.id
                WHERE m.statistic_id IS NOT NULL
                GROUP BY m.id ORDER BY m.statistic_id
                """,
                [.real(Double(stationTimes.lowerBound)), .real(Double(stationTimes.upperBound))]
            ) { row in
                Listed(
                    statisticID: row.string(0), unit: row.optionalString(1), hours: row.int(2), hasMean: row.int(3) > 0,
                    hasSum: row.int(4) > 0, firstStart: row.optionalDouble(5).map { Int64($0.rounded()) },
                    lastStart: row.optionalDouble(6).map { Int64($0.rounded()) })
            }
        }
    }

    /// Reads `sensors` for valid hours in [`from`, `to`) (either open) in one read transaction.
    /// Throws `StationFileError` when the file is not a recorder database, a statistic id is not
    /// in it, or its unit does not convert to the variable's.
    public static func read(path: String, sensors: [Sensor], from: Int64? = nil, to: Int64? = nil) throws
        -> StationImport
    {
        try readStationFile(path, kind: "Home Assistant database") {
            try read($0, path: path, sensors: sensors, from: from, to: to)
        }
    }

    static func checkSchema(_ db: Database, path: String) throws {
        let meta = try columnNames(db, table: "statistics_meta")
        let statistics = try columnNames(db, table: "statistics")
        guard !meta.isEmpty, !statistics.isEmpty else {
            throw StationFileError(
                "\(path) is a SQLite database without Home Assistant's `statistics` and `statistics_meta` tables, so it is not a recorder database; nothing was stored. Pass home-assistant_v2.db from Home Assistant's config folder"
            )
        }
        guard meta.isSuperset(of: ["id", "statistic_id", "unit_of_measurement"]),
            statistics.isSuperset(of: ["metadata_id", "start_ts", "mean", "sum"])
        else {
            throw StationFileError(
                "\(path) has statistics tables without the columns of recorder schema 32 or later (start_ts, mean, sum); open it once with a current Home Assistant to migrate it. Nothing was stored"
            )
        }
    }

    static func read(_ db: Database, path: String, sensors: [Sensor], from: Int64?, to: Int64?) throws -> StationImport
    {
        try checkSchema(db, path: path)
        let precipitation = Variables.hourlyIndex(of: "precipitation")!
        let bounds = hourBounds(from: from, to: to)
        var result = StationImport(variables: sensors.map(\.variable).sorted())
        var series: [(sensor: Sensor, unit: String, rows: [Int64: (mean: Double?, sum: Double?)])] = []
        for sensor in sensors {
            let variable = Variables.hourly[sensor.variable]
            guard
                let meta = try db.firstRow(
                    "SELECT id, unit_of_measurement FROM statistics_meta WHERE statistic_id = ?",
                    [.text(sensor.statisticID)],
                    { (id: $0.int64(0), unit: $0.optionalString(1)) })
            else {
                throw StationFileError(
                    "\(path) has no statistic '\(sensor.statisticID)' (for \(variable.name)); nothing was stored. Run with --list to see the statistic ids it holds"
                )
            }
            let unit = meta.unit ?? ""
            guard StationUnits.knows(unit, quantity: variable.quantity) else {
                throw StationFileError(
                    "statistic '\(sensor.statisticID)' is in '\(unit)', which is not a unit of \(variable.name) wxdb converts (\(StationUnits.accepted(variable.quantity).joined(separator: ", "))); nothing was stored. Pick another statistic (--list shows units)"
                )
            }
            // Precipitation also needs the hour before the first, to take the increase from.
            let lookback: Int64 = sensor.variable == precipitation ? 7200 : 3600
            var rows: [Int64: (mean: Double?, sum: Double?)] = [:]
            let found = try db.rows(
                "SELECT start_ts, mean, sum FROM statistics WHERE metadata_id = ? AND start_ts >= ? AND start_ts <= ? ORDER BY start_ts",
                [.integer(meta.id), .real(Double(bounds.first - lookback)), .real(Double(bounds.last - 3600))]
            ) { row -> (Int64, Double?, Double?)? in
                guard let start = WeewxArchive.number(row, 0) else { return nil }
                return (Int64(start.rounded()), WeewxArchive.number(row, 1), WeewxArchive.number(row, 2))
            }
            for case let (start, mean, sum)? in found where start % 3600 == 0 {
                rows[start] = (mean, sum)
            }
            result.recordsRead += found.count
            result.units.append("\(sensor.statisticID) in \(unit.isEmpty ? "(no unit)" : unit)")
            series.append((sensor, unit, rows))
        }
        // The hours considered: from the first to the last hour any sensor's rows make valid.
        let valid = series.flatMap { $0.rows.keys.map { $0 + 3600 } }.filter { $0 >= bounds.first && $0 <= bounds.last }
        guard let first = valid.min(), let last = valid.max() else { return result }
        result.firstHour = first
        result.lastHour = last
        // Only the hours some row makes valid are looked at; the stretches between them hold no row
        // of any sensor and are counted as gaps in one step (rows in 1970 and 2100 must not mean a
        // million turns of a loop).
        var previous = first - 3600
        for hour in Set(valid).sorted() {
            result.recordGaps((hour - previous) / 3600 - 1)
            previous = hour
            var outcomes: [Int: Result<Double, StationMissingMark>] = [:]
            for entry in series {
                let variable = Variables.hourly[entry.sensor.variable]
                outcomes[entry.sensor.variable] = outcome(
                    hour: hour, rows: entry.rows, unit: entry.unit, variable: variable,
                    increase: entry.sensor.variable == precipitation)
            }
            result.record(hour: hour, outcomes: outcomes)
        }
        return result
    }

    static func outcome(
        hour: Int64, rows: [Int64: (mean: Double?, sum: Double?)], unit: String, variable: Variable,
        increase: Bool
    ) -> Result<Double, StationMissingMark> {
        guard let row = rows[hour - 3600] else { return .failure(StationMissingMark(.gap)) }
        let raw: Double
        if increase {
            guard let sum = row.sum else { return .failure(StationMissingMark(.noValue)) }
            guard let before = rows[hour - 7200]?.sum else { return .failure(StationMissingMark(.noPreviousSum)) }
            // Float noise in a running total must not turn "no rain" into a negative amount.
            guard sum - before > -1e-9 else { return .failure(StationMissingMark(.sumDecreased)) }
            raw = max(0, sum - before)
        } else {
            guard let mean = row.mean else { return .failure(StationMissingMark(.noValue)) }
            raw = mean
        }
        guard let value = StationUnits.toMetric(raw, unit: unit, quantity: variable.quantity) else {
            return .failure(StationMissingMark(.unknownUnit))
        }
        return .success(StationUnits.rounded(value))
    }
}
