// wxdb's PostgreSQL engine, over the schema of Migrations/postgresql: the connection, the
// location lock, saved locations and the COPY of a run's rows. Ids count per location
// (location_counters), never from a global sequence, and every write of a location runs under
// that location's advisory lock, so several ingest processes on several machines can store at
// once without a duplicate run. The Store requirements are in files by kind beside this one:
// Locations.swift, Runs.swift (responses, the window match), Observations.swift, Sums.swift (the
// kept sums), FetchLog.swift (the fetch log, prune); reads in Reads.swift, Pairs.swift, Summaries.swift,
// ExportStreams.swift, Prunable.swift and Stats.swift.
import WxCore
import WxPostgres
import WxStore

/// wxdb's data in one PostgreSQL database.
public final class PostgresEngine {
    public let db: PostgresConnection
    /// What opening applied (the note to print), nil when the schema was current.
    public private(set) var migration: PostgresMigrationOutcome?
    /// Who keeps `verification_summaries` current for the write running now (see Sums.swift).
    package internal(set) var sumsKeeping = SumsKeeping.eachWrite
    /// How many window matches this engine has run (`matchingRun` plans its query afresh every
    /// `matchReplanEvery`).
    var windowMatches = 0

    /// Connects, checks the schema (refusing a foreign or newer one) and, with `migrate`, applies
    /// what is pending.
    public init(conninfo: String, migrate: Bool = true, now: Int64) throws {
        db = try PostgresConnection(conninfo: conninfo)
        // The session's extra_float_digits, which the float4 views need, is set by PostgresConnection.
        if migrate {
            let outcome = try PostgresSchema.migrate(db, now: now)
            migration = outcome.applied.isEmpty ? nil : outcome
        } else {
            try PostgresSchema.check(db)
        }
    }

    /// The lock key of a location (the second key of PostgreSQL's two-key advisory locks; the
    /// first is wxdb's namespace). Location ids are handed out from 1 upwards, far below 2^31.
    static func lockKey(_ locationID: Int64) -> Int32 { Int32(truncatingIfNeeded: locationID) }
    /// The lock under which location ids are handed out (0 is the migrations').
    static let locationIDLock: Int32 = -1

    // MARK: Locations

    static let locationColumns = "id, name, latitude, longitude, elevation, timezone, models, created_at"

    static func location(_ row: PostgresRow) -> Location {
        Location(
            id: row.int64(0), name: row.string(1), latitude: row.double(2), longitude: row.double(3),
            elevation: row.optionalDouble(4), timezone: row.string(5),
            models: row.string(6).split(separator: ",").map(String.init), createdAt: row.int64(7))
    }

    /// Saves a new location, with the same checks and errors as the SQLite engine.
    @discardableResult
    public func addLocation(
        name: String, latitude: Double, longitude: Double, elevation: Double?, timezone: String, models: [String],
        now: Int64
    ) throws -> Location {
        try Location.checkNew(name: name, latitude: latitude, longitude: longitude)
        let modelList = Location.savedModels(models)
        return try db.transaction {
            // Location ids are the distribution key: handed out one at a time, under a lock.
            try db.lockForTransaction(Self.locationIDLock)
            try Location.checkUnused(name, existing: location(named: name))
            let id = try db.scalarInt("SELECT coalesce(max(id), 0) + 1 FROM locations") ?? 1
            try db.run(
                "INSERT INTO locations (id, name, latitude, longitude, elevation, timezone, models, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)",
                [
                    .integer(id), .text(name), .real(latitude), .real(longitude), elevation.postgresValue,
                    .text(timezone), .text(modelList.joined(separator: ",")), .integer(now)
                ])
            try db.run("INSERT INTO location_counters (location_id) VALUES ($1)", [.integer(id)])
            return Location(
                id: id, name: name, latitude: latitude, longitude: longitude, elevation: elevation, timezone: timezone,
                models: modelList, createdAt: now)
        }
    }

    /// The location with exactly this name, if any.
    public func location(named name: String) throws -> Location? {
        try db.firstRow("SELECT \(Self.locationColumns) FROM locations WHERE name = $1", [.text(name)], Self.location)
    }

    /// Every saved location, by name.
    public func locations() throws -> [Location] {
        try db.rows("SELECT \(Self.locationColumns) FROM locations ORDER BY name", [], Self.location)
    }

    /// Removes a location and everything stored for it, in one transaction.
    public func removeLocation(named name: String) throws {
        _ = try removeLocation(named: name, purge: true)
    }

    // MARK: Locks

    /// Takes the location's session lock if no other process holds it (an ingest of that location).
    public func tryLockLocation(_ id: Int64) throws -> Bool { try db.tryLock(Self.lockKey(id)) }
    /// Releases it.
    public func unlockLocation(_ id: Int64) throws { try db.unlock(Self.lockKey(id)) }

    // MARK: Runs

    /// The next id of `counter` for the location: one row's update, on the location's own node.
    func nextID(_ counter: Counter, location: Int64) throws -> Int64 {
        let sql =
            counter == .run
            ? "UPDATE location_counters SET next_run_id = next_run_id + 1 WHERE location_id = $1 RETURNING next_run_id - 1"
            : "UPDATE location_counters SET next_fetch_id = next_fetch_id + 1 WHERE location_id = $1 RETURNING next_fetch_id - 1"
        guard let id = try db.scalarInt(sql, [.integer(location)]) else {
            throw StoreError.locationRemoved(name: "#\(location)")
        }
        return id
    }

    enum Counter { case run, fetch }

    static let hourlyColumns = ["location_id", "run_id", "valid_time"] + Variables.hourlyNames
    static let dailyColumns = ["location_id", "run_id", "date"] + Variables.dailyNames

    /// The run's hourly and daily rows, by binary COPY (no value printed and parsed again); a
    /// repeated hour or date keeps its first values, as in the SQLite engine. A run whose every
    /// value float4 gives back exactly goes to the `_f4` tables (4 bytes a value), any other to the
    /// `_f8` ones (migration 0006); the views `hourly_forecasts` / `daily_forecasts` read both.
    /// `float4` is `Float4.keeps(forecast)` when the caller knows it; with `daily: false` only the
    /// hourly rows are copied (a new run's daily rows go in with its row, `runInsertSQL`).
    func copyRows(_ forecast: ModelForecast, location: Int64, runID: Int64, float4: Bool? = nil, daily: Bool = true)
        throws
    {
        let float4 = float4 ?? Float4.keeps(forecast)
        if !forecast.hourlyTimes.isEmpty {
            let times = forecast.hourlyTimes
            let columns = forecast.hourly
            // Times come ascending from every decoder; only when they do not is a repeat looked for.
            let ascending = zip(times, times.dropFirst()).allSatisfy { $0 < $1 }
            var seen = Set<Int64>()
            try db.copyBinary(into: float4 ? "hourly_forecasts_f4" : "hourly_forecasts_f8", columns: Self.hourlyColumns)
            {
                rows in
                for (row, time) in times.enumerated() where ascending || seen.insert(time).inserted {
                    try rows.appendRow { values in
                        values.append(location)
                        values.append(runID)
                        values.append(time)
                        for column in columns {
                            let value = column?[row] ?? nil
                            if float4 { values.append(value.map(Float.init)) } else { values.append(value) }
                        }
                    }
                }
            }
        }
        if daily && !forecast.dailyDates.isEmpty {
            try db.copyBinary(into: float4 ? "daily_forecasts_f4" : "daily_forecasts_f8", columns: Self.dailyColumns) {
                rows in
                var seen = Set<String>()
                for (row, date) in forecast.dailyDates.enumerated() where seen.insert(date).inserted {
                    rows.append(location)
                    rows.append(runID)
                    try rows.append(date)
                    for (index, column) in forecast.daily.enumerated() {
                        let value = column?[row] ?? nil
                        if Variables.daily[index].quantity == .instant, let value {
                            rows.append(Int64(value))
                        } else if float4 {
                            rows.append(value.map(Float.init))
                        } else {
                            rows.append(value)
                        }
                    }
                    try rows.endRow()
                }
            }
        }
    }
}
