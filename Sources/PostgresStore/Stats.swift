// What `wxdb stats`, `doctor` and the daily budget read on PostgreSQL: the SQLite engine's answers
// (Sources/StoreSQLite/Maintenance.swift).
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    /// The tables `tableCounts` reports, in that order (the SQLite engine's list).
    public static let tables = [
        "locations", "forecast_runs", "fetch_log", "hourly_forecasts", "daily_forecasts", "observations",
        "verification_summaries"
    ]

    /// Rows per table of `tables`; the hourly and daily rows summed from the runs' own counts, as on
    /// SQLite (counting them would read nearly all of the database).
    public func tableCounts() throws -> [(table: String, rows: Int64)] {
        let fromRuns = try db.firstRow(
            """
            SELECT coalesce(sum(hour_count), 0), coalesce(sum(day_count), 0) FROM forecast_runs
            WHERE pruned_at IS NULL
            """
        ) { (hourly: $0.int64(0), daily: $0.int64(1)) }
        return try Self.tables.map { table in
            switch table {
            case "hourly_forecasts": return (table, fromRuns?.hourly ?? 0)
            case "daily_forecasts": return (table, fromRuns?.daily ?? 0)
            // `table` is one of the fixed names above.
            default: return (table, try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0)
            }
        } + (try EnsembleTables.counts { table in try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0 })
    }

    /// `activity` of every location that has any, by location id, one pass over each table.
    public func activities() throws -> [Int64: LocationActivity] {
        var result: [Int64: LocationActivity] = [:]
        // location_id 0 is an attempt no location was named for (SQLite's NULL).
        try db.stream(
            """
            SELECT location_id, count(*), count(*) FILTER (WHERE outcome = 'repeated'),
                   count(*) FILTER (WHERE outcome = 'failed'), max(attempted_at) FILTER (WHERE outcome <> 'failed')
            FROM fetch_log WHERE location_id <> 0 GROUP BY location_id
            """
        ) { row in
            result[row.int64(0)] = LocationActivity(
                runs: 0, fetches: Int(row.int64(1)), repeated: Int(row.int64(2)), failed: Int(row.int64(3)),
                observations: 0, lastFetch: row.optionalInt64(4))
        }
        try db.stream("SELECT location_id, count(*) FROM forecast_runs GROUP BY location_id") { row in
            result[row.int64(0), default: .none].runs = Int(row.int64(1))
        }
        try db.stream("SELECT location_id, count(*) FROM observations GROUP BY location_id") { row in
            result[row.int64(0), default: .none].observations = Int(row.int64(1))
        }
        return result
    }

    /// Runs, fetch-log entries by outcome, and observations of one location.
    public func activity(locationID: Int64) throws -> LocationActivity {
        let id: [PostgresValue] = [.integer(locationID)]
        let log = try db.firstRow(
            """
            SELECT count(*), count(*) FILTER (WHERE outcome = 'repeated'), count(*) FILTER (WHERE outcome = 'failed'),
                   max(attempted_at) FILTER (WHERE outcome <> 'failed')
            FROM fetch_log WHERE location_id = $1
            """, id
        ) { (fetches: $0.int64(0), repeated: $0.int64(1), failed: $0.int64(2), last: $0.optionalInt64(3)) }
        return LocationActivity(
            runs: Int(try db.scalarInt("SELECT count(*) FROM forecast_runs WHERE location_id = $1", id) ?? 0),
            fetches: Int(log?.fetches ?? 0), repeated: Int(log?.repeated ?? 0), failed: Int(log?.failed ?? 0),
            observations: Int(try db.scalarInt("SELECT count(*) FROM observations WHERE location_id = $1", id) ?? 0),
            lastFetch: log?.last)
    }

    /// The share of Open-Meteo's weighted call count the fetch log records for fetches attempted
    /// in `[from, to)`.
    /// The size of the connected database on its server (`pg_database_size`).
    public func databaseBytes() throws -> Int64 {
        try db.scalarInt("SELECT pg_database_size(current_database())") ?? 0
    }

    public func apiWeightUsed(from: Int64, to: Int64) throws -> Double {
        try db.firstRow(
            """
            SELECT coalesce(sum(api_weight), 0) FROM fetch_log
            WHERE origin IN ('fetch', 'single_run') AND attempted_at >= $1 AND attempted_at < $2
            """, [.integer(from), .integer(to)]
        ) { $0.double(0) } ?? 0
    }
}
