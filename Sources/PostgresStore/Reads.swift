// The reads the queries build their reports from, on PostgreSQL: the SQLite engine's answers
// (Sources/StoreSQLite/Reads.swift, Coverage.swift), same rows in the same order. Text is ordered
// with COLLATE "C" (bytewise, as SQLite's BINARY), whatever the database's collation. Every join
// between growing tables is on location_id (Citus colocation); every column name in SQL text
// comes from `Variables`, checked by `hourlyColumn`.
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    /// The SQL column of an hourly variable, taken from the fixed list only.
    static func hourlyColumn(_ name: String) throws -> String {
        guard let column = Variables.hourlyNames.first(where: { $0 == name }) else {
            throw StoreError.unknownColumn(name)
        }
        return column
    }

    /// The initialisation times of the location's stored runs of `model` issued in `from..<to`
    /// whose issue time is a known model run: what a backfill skips without a request.
    public func knownRunTimes(locationID: Int64, model: String, from: Int64, to: Int64) throws -> Set<Int64> {
        var times = Set<Int64>()
        try db.stream(
            """
            SELECT issued_at FROM forecast_runs
            WHERE location_id = $1 AND model = $2 AND issued_at >= $3 AND issued_at < $4
              AND issued_at_source <> 'first_fetch'
            """, [.integer(locationID), .text(model), .integer(from), .integer(to)]
        ) { times.insert($0.int64(0)) }
        return times
    }

    /// The location's observation sources, best first (as the SQLite engine orders them).
    public func observationSources(locationID: Int64) throws -> [String] {
        try db.rows(
            """
            SELECT source FROM observations WHERE location_id = $1 GROUP BY source
            ORDER BY CASE WHEN source = 'era5' THEN 1 WHEN source = 'analysis' OR source LIKE 'analysis:%' THEN 2
                          WHEN source = 'current' OR source LIKE 'current:%' THEN 3 ELSE 0 END,
                     count(*) DESC, source COLLATE "C"
            """, [.integer(locationID)]
        ) { $0.string(0) }
    }

    /// How many runs the location has (of `model`, when given).
    public func runCount(locationID: Int64, model: String?) throws -> Int {
        Int(
            try db.scalarInt(
                "SELECT count(*) FROM forecast_runs WHERE location_id = $1 AND ($2::text IS NULL OR model = $2::text)",
                [.integer(locationID), model.postgresValue]) ?? 0)
    }

    /// The first and last valid time the location's runs (of `model`, when given) cover.
    public func forecastSpan(locationID: Int64, model: String?) throws -> (first: Int64?, last: Int64?) {
        try db.firstRow(
            """
            SELECT min(first_valid_time), max(last_valid_time) FROM forecast_runs
            WHERE location_id = $1 AND ($2::text IS NULL OR model = $2::text)
            """, [.integer(locationID), model.postgresValue]
        ) { (first: $0.optionalInt64(0), last: $0.optionalInt64(1)) } ?? (nil, nil)
    }

    /// The first and last hour of one source's observations.
    public func observationSpan(locationID: Int64, source: String) throws -> (first: Int64?, last: Int64?) {
        try db.firstRow(
            "SELECT min(time), max(time) FROM observations WHERE location_id = $1 AND source = $2",
            [.integer(locationID), .text(source)]
        ) { (first: $0.optionalInt64(0), last: $0.optionalInt64(1)) } ?? (nil, nil)
    }

    /// The observed value of an hourly variable at one hour from one source; nil when absent.
    public func observedValue(_ variable: Variable, locationID: Int64, source: String, time: Int64) throws -> Double? {
        let column = try Self.hourlyColumn(variable.name)
        return try db.firstRow(
            "SELECT \(column) FROM observations WHERE location_id = $1 AND source = $2 AND time = $3",
            [.integer(locationID), .text(source), .integer(time)]
        ) { $0.optionalDouble(0) } ?? nil
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
            LEFT JOIN (SELECT location_id, run_id, min(attempted_at) AS first_fetch, max(attempted_at) AS last_fetch,
                              count(*) FILTER (WHERE outcome = 'repeated') AS repeats
                       FROM fetch_log WHERE location_id = $1 AND outcome <> 'failed' AND run_id IS NOT NULL
                       GROUP BY location_id, run_id) f
                   ON f.location_id = r.location_id AND f.run_id = r.id
            WHERE r.location_id = $1 AND ($2::text IS NULL OR r.model = $2::text) AND r.issued_at >= $3
              AND r.issued_at < $4
            ORDER BY r.issued_at, r.model COLLATE "C", r.id
            """,
            [.integer(locationID), model.postgresValue, .integer(issuedFrom), .integer(issuedTo)]
        ) { row in
            let fetchedAt = row.int64(4)
            return RunSummary(
                id: row.int64(0), model: row.string(1), issuedAt: row.int64(2), issuedAtSource: row.string(3),
                firstFetch: min(row.optionalInt64(5) ?? fetchedAt, fetchedAt),
                lastFetch: row.optionalInt64(6) ?? fetchedAt,
                repeats: Int(row.int64(7)), firstValidTime: row.optionalInt64(8), lastValidTime: row.optionalInt64(9),
                hourCount: Int(row.int64(10)), prunedAt: row.optionalInt64(11))
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
            FROM forecast_runs r
            JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id AND h.valid_time = $1
            WHERE r.location_id = $2 AND ($3::text IS NULL OR r.model = $3::text)
            ORDER BY r.issued_at, r.model COLLATE "C", r.id
            """,
            [.integer(validTime), .integer(locationID), model.postgresValue]
        ) {
            HourForecast(runID: $0.int64(0), model: $0.string(1), issuedAt: $0.int64(2), value: $0.optionalDouble(3))
        }
    }

    /// The location's models with their number of runs, most runs first.
    public func runCountsByModel(locationID: Int64) throws -> [(model: String, runs: Int)] {
        try db.rows(
            """
            SELECT model, count(*) FROM forecast_runs WHERE location_id = $1
            GROUP BY model ORDER BY count(*) DESC, model COLLATE "C"
            """, [.integer(locationID)]
        ) { (model: $0.string(0), runs: Int($0.int64(1))) }
    }

    /// The location's fetch log per UTC hour in `[from, to)`, oldest first (a Single Runs archive
    /// run counts at its initialisation hour, as on SQLite).
    public func fetchHours(locationID: Int64, from: Int64?, to: Int64?) throws -> [FetchHour] {
        try db.rows(
            """
            SELECT (t - (t % 3600 + 3600) % 3600) AS hour,
                   count(*) FILTER (WHERE outcome = 'stored'), count(*) FILTER (WHERE outcome = 'repeated'),
                   count(*) FILTER (WHERE outcome = 'failed')
            FROM (
                SELECT CASE WHEN f.origin = 'single_run' AND r.issued_at IS NOT NULL THEN r.issued_at
                            ELSE f.attempted_at END AS t,
                       f.outcome
                FROM fetch_log f
                LEFT JOIN forecast_runs r ON r.location_id = f.location_id AND r.id = f.run_id
                WHERE f.location_id = $1
            ) attempts
            WHERE t >= $2 AND t < $3
            GROUP BY hour ORDER BY hour
            """, [.integer(locationID), .integer(from ?? .min), .integer(to ?? .max)]
        ) {
            FetchHour(hour: $0.int64(0), stored: Int($0.int64(1)), repeated: Int($0.int64(2)), failed: Int($0.int64(3)))
        }
    }

    /// The UTC hours (unixtime / 3600) since `since` in which a fetch (not an import) of the location
    /// did not fail.
    public func fetchedHours(locationID: Int64, since: Int64) throws -> [Int64] {
        try db.rows(
            """
            SELECT DISTINCT attempted_at / 3600 FROM fetch_log
            WHERE location_id = $1 AND origin = 'fetch' AND outcome <> 'failed' AND attempted_at >= $2
            ORDER BY 1
            """, [.integer(locationID), .integer(since)]
        ) { $0.int64(0) }
    }
}
