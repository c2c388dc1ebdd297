import WxCore
import WxSQLite
import WxStore

// Reads the queries build their reports from. Every column name that goes into SQL text comes
// from `Variables` (never from user input), checked by `hourlyColumn`.

extension SQLiteStore {
    /// The SQL column of an hourly variable, taken from the fixed list only.
    static func hourlyColumn(_ name: String) throws -> String {
        guard let column = Variables.hourlyNames.first(where: { $0 == name }) else {
            throw StoreError.unknownColumn(name)
        }
        return column
    }

    /// The location with this id, if any.
    public func location(id: Int64) throws -> Location? {
        try db.firstRow("SELECT \(Self.locationColumns) FROM locations WHERE id = ?", [.integer(id)], Self.location)
    }

    /// Every location, or only the one with `id`, by id.
    public func locationsByID(only id: Int64? = nil) throws -> [(id: Int64, name: String)] {
        try db.rows("SELECT id, name FROM locations WHERE (?1 IS NULL OR id = ?1) ORDER BY id", [id.sqlValue]) {
            (id: $0.int64(0), name: $0.string(1))
        }
    }

    /// The location's observation sources, best first: measurements (any imported source: a station
    /// file, an official station's `metar:`, `isd:`, `ghcnh:` or `meteostat:` source) before model
    /// output: `era5`, then the models' analyses (`analysis:<model>`), then `current`; within each,
    /// sources with more hours first.
    public func observationSources(locationID: Int64) throws -> [String] {
        try db.rows(
            """
            SELECT source FROM observations WHERE location_id = ? GROUP BY source
            ORDER BY CASE WHEN source = 'era5' THEN 1 WHEN source = 'analysis' OR source GLOB 'analysis:*' THEN 2
                          WHEN source = 'current' THEN 3 ELSE 0 END,
                     count(*) DESC, source
            """, [.integer(locationID)]
        ) { $0.string(0) }
    }

    /// How many runs the location has (of `model`, when given).
    public func runCount(locationID: Int64, model: String? = nil) throws -> Int {
        Int(
            try db.scalarInt(
                "SELECT count(*) FROM forecast_runs WHERE location_id = ? AND (? IS NULL OR model = ?)",
                [.integer(locationID), model.sqlValue, model.sqlValue]) ?? 0)
    }

    /// The first and last valid time the location's runs (of `model`, when given) cover.
    public func forecastSpan(locationID: Int64, model: String? = nil) throws -> (first: Int64?, last: Int64?) {
        try db.firstRow(
            "SELECT min(first_valid_time), max(last_valid_time) FROM forecast_runs WHERE location_id = ? AND (? IS NULL OR model = ?)",
            [.integer(locationID), model.sqlValue, model.sqlValue]
        ) { (first: $0.optionalInt64(0), last: $0.optionalInt64(1)) }
            ?? (nil, nil)
    }

    /// The first and last hour of one source's observations.
    public func observationSpan(locationID: Int64, source: String) throws -> (first: Int64?, last: Int64?) {
        try db.firstRow(
            "SELECT min(time), max(time) FROM observations WHERE location_id = ? AND source = ?",
            [.integer(locationID), .text(source)]
        ) { (first: $0.optionalInt64(0), last: $0.optionalInt64(1)) }
            ?? (nil, nil)
    }

    /// The observed value of an hourly variable at one hour from one source; nil when absent.
    public func observedValue(_ variable: Variable, locationID: Int64, source: String, time: Int64) throws -> Double? {
        let column = try Self.hourlyColumn(variable.name)
        return try db.firstRow(
            "SELECT \(column) FROM observations WHERE location_id = ? AND source = ? AND time = ?",
            [.integer(locationID), .text(source), .integer(time)], { $0.optionalDouble(0) }) ?? nil
    }

    /// The location's runs issued in `[issuedFrom, issuedTo)` (of `model` when given), oldest first,
    /// with what the fetch log says about them.
    public func runSummaries(locationID: Int64, model: String?, issuedFrom: Int64, issuedTo: Int64) throws
        -> [RunSummary]
    {
        try db.rows(
            """
            SELECT r.id, r.model, r.issued_at, r.issued_at_source, r.fetched_at,
                   f.first_fetch, f.last_fetch, coalesce(f.repeats, 0),
                   r.first_valid_time, r.last_valid_time, r.hour_count, r.pruned_at
            FROM forecast_runs r
            LEFT JOIN (SELECT run_id, min(attempted_at) AS first_fetch, max(attempted_at) AS last_fetch,
                              sum(outcome = 'repeated') AS repeats
                       FROM fetch_log WHERE outcome != 'failed' AND run_id IS NOT NULL GROUP BY run_id) f
                   ON f.run_id = r.id
            WHERE r.location_id = ? AND (? IS NULL OR r.model = ?) AND r.issued_at >= ? AND r.issued_at < ?
            ORDER BY r.issued_at, r.model, r.id
            """,
            [.integer(locationID), model.sqlValue, model.sqlValue, .integer(issuedFrom), .integer(issuedTo)]
        ) { row in
            let fetchedAt = row.int64(4)
            return RunSummary(
                id: row.int64(0), model: row.string(1), issuedAt: row.int64(2), issuedAtSource: row.string(3),
                firstFetch: min(row.optionalInt64(5) ?? fetchedAt, fetchedAt),
                lastFetch: row.optionalInt64(6) ?? fetchedAt,
                repeats: row.int(7), firstValidTime: row.optionalInt64(8), lastValidTime: row.optionalInt64(9),
                hourCount: row.int(10), prunedAt: row.optionalInt64(11))
        }
    }

    /// Every run's value of `variable` for the hour `validTime` (of `model` when given), by issue time.
    public func forecasts(of variable: Variable, locationID: Int64, validTime: Int64, model: String?) throws
        -> [HourForecast]
    {
        let column = try Self.hourlyColumn(variable.name)
        return try db.rows(
            """
            SELECT r.id, r.model, r.issued_at, h.\(column)
            FROM forecast_runs r JOIN hourly_forecasts h ON h.run_id = r.id AND h.valid_time = ?
            WHERE r.location_id = ? AND (? IS NULL OR r.model = ?)
            ORDER BY r.issued_at, r.model, r.id
            """,
            [.integer(validTime), .integer(locationID), model.sqlValue, model.sqlValue]
        ) { HourForecast(runID: $0.int64(0), model: $0.string(1), issuedAt: $0.int64(2), value: $0.optionalDouble(3)) }
    }

    /// The location's models with their number of runs, most runs first.
    public func runCountsByModel(locationID: Int64) throws -> [(model: String, runs: Int)] {
        try db.rows(
            "SELECT model, count(*) FROM forecast_runs WHERE location_id = ? GROUP BY model ORDER BY count(*) DESC, model",
            [.integer(locationID)]
        ) { (model: $0.string(0), runs: $0.int(1)) }
    }
}
