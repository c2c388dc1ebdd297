// The first pieces of wxdb's PostgreSQL engine, over the schema of Migrations/postgresql: saved
// locations, and storing a model's run whole (the run, its hourly and daily rows by COPY, its
// content hash and its fetch-log row, in one transaction). Ids count per location
// (location_counters), never from a global sequence, and every write of a location runs under
// that location's advisory lock, so several ingest processes on several machines can store at
// once without a duplicate run. Not here yet (see docs/POSTGRESQL.md): observations, the
// verification sums, the "same model run seen through another window" match of the SQLite engine,
// and the reads; the engine does not yet stand behind the Store protocol.
import WxCore
import WxPostgres
import WxStore

/// wxdb's data in one PostgreSQL database.
public final class PostgresEngine {
    public let db: PostgresConnection
    /// What opening applied (the note to print), nil when the schema was current.
    public private(set) var migration: PostgresMigrationOutcome?

    /// Connects, checks the schema (refusing a foreign or newer one) and, with `migrate`, applies
    /// what is pending.
    public init(conninfo: String, migrate: Bool = true, now: Int64) throws {
        db = try PostgresConnection(conninfo: conninfo)
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

    /// Removes a location and everything stored for it, in one transaction (the fetch log has no
    /// foreign key, as its location 0 is "none": its rows go explicitly).
    public func removeLocation(named name: String) throws {
        let location = try location(named: name)
        guard let location else { throw LocationError.unknown(name) }
        try db.transaction {
            try db.lockForTransaction(Self.lockKey(location.id))
            try db.run("DELETE FROM fetch_log WHERE location_id = $1", [.integer(location.id)])
            try db.run("DELETE FROM locations WHERE id = $1", [.integer(location.id)])
        }
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

    /// Stores every model's run of `response` in one transaction under the location's lock: a run
    /// whose content was stored before adds a fetch-log row only (`repeated`). All or nothing.
    public func storeRuns(_ response: ForecastResponse, for location: Location, fetch: FetchRecord) throws
        -> [StoreOutcome]
    {
        try db.transaction {
            try db.lockForTransaction(Self.lockKey(location.id))
            guard try db.scalarInt("SELECT 1 FROM locations WHERE id = $1", [.integer(location.id)]) != nil else {
                throw StoreError.locationRemoved(name: location.name)
            }
            return try response.models.map { try storeRun($0, response: response, location: location, fetch: fetch) }
        }
    }

    func storeRun(_ forecast: ModelForecast, response: ForecastResponse, location: Location, fetch: FetchRecord) throws
        -> StoreOutcome
    {
        let hash = forecast.contentHash(grid: (response.latitude, response.longitude, response.elevation))
        let same = try db.firstRow(
            """
            SELECT r.id, r.fetched_at FROM run_content_hashes h
            JOIN forecast_runs r ON r.location_id = h.location_id AND r.id = h.run_id
            WHERE h.location_id = $1 AND h.model = $2 AND h.content_hash = $3 ORDER BY r.id LIMIT 1
            """,
            [.integer(location.id), .text(forecast.model), .integer(hash)]
        ) { (id: $0.int64(0), fetchedAt: $0.int64(1)) }
        let runID: Int64
        let kind: StoreOutcome.Kind
        if let same {
            runID = same.id
            kind = .repeated
            if fetch.fetchedAt < same.fetchedAt {
                try db.run(
                    "UPDATE forecast_runs SET fetched_at = $1, issued_at = CASE issued_at_source WHEN 'first_fetch' THEN $1 ELSE issued_at END WHERE location_id = $2 AND id = $3",
                    [.integer(fetch.fetchedAt), .integer(location.id), .integer(runID)])
            }
        } else {
            runID = try nextID(.run, location: location.id)
            kind = .stored
            let modelRun = fetch.issuedAt[forecast.model]
            try db.run(
                """
                INSERT INTO forecast_runs (location_id, id, model, issued_at, issued_at_source, fetched_at,
                    grid_latitude, grid_longitude, grid_elevation, utc_offset_seconds, timezone, content_hash,
                    first_valid_time, last_valid_time, hour_count, day_count)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)
                """,
                [
                    .integer(location.id), .integer(runID), .text(forecast.model),
                    .integer(modelRun ?? fetch.fetchedAt),
                    .text(modelRun == nil ? "first_fetch" : fetch.origin == .singleRun ? "single_run" : "model_run"),
                    .integer(fetch.fetchedAt), .real(response.latitude), .real(response.longitude),
                    response.elevation.postgresValue, .integer(Int64(response.utcOffsetSeconds)),
                    .text(response.timezone), .integer(hash), forecast.hourlyTimes.min().postgresValue,
                    forecast.hourlyTimes.max().postgresValue, .integer(Int64(Set(forecast.hourlyTimes).count)),
                    .integer(Int64(Set(forecast.dailyDates).count))
                ])
            try copyRows(forecast, location: location.id, runID: runID)
            try db.run(
                "INSERT INTO run_content_hashes (location_id, model, content_hash, run_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                [.integer(location.id), .text(forecast.model), .integer(hash), .integer(runID)])
        }
        try logFetch(fetch, locationID: location.id, model: forecast.model, outcome: kind.rawValue, runID: runID)
        return StoreOutcome(
            kind: kind, model: forecast.model, runID: runID, hours: forecast.hourlyTimes.count,
            days: forecast.dailyDates.count)
    }

    static let hourlyColumns = ["location_id", "run_id", "valid_time"] + Variables.hourlyNames
    static let dailyColumns = ["location_id", "run_id", "date"] + Variables.dailyNames

    /// The run's hourly and daily rows, by COPY; a repeated hour or date keeps its first values,
    /// as in the SQLite engine.
    func copyRows(_ forecast: ModelForecast, location: Int64, runID: Int64) throws {
        if !forecast.hourlyTimes.isEmpty {
            try db.copy(into: "hourly_forecasts", columns: Self.hourlyColumns) { rows in
                var seen = Set<Int64>()
                for (row, time) in forecast.hourlyTimes.enumerated() where seen.insert(time).inserted {
                    rows.append(location)
                    rows.append(runID)
                    rows.append(time)
                    for column in forecast.hourly { rows.append(column?[row] ?? nil) }
                    try rows.endRow()
                }
            }
        }
        if !forecast.dailyDates.isEmpty {
            try db.copy(into: "daily_forecasts", columns: Self.dailyColumns) { rows in
                var seen = Set<String>()
                for (row, date) in forecast.dailyDates.enumerated() where seen.insert(date).inserted {
                    rows.append(location)
                    rows.append(runID)
                    try rows.append(date)
                    for (index, column) in forecast.daily.enumerated() {
                        let value = column?[row] ?? nil
                        if Variables.daily[index].quantity == .instant, let value {
                            rows.append(Int64(value))
                        } else {
                            rows.append(value)
                        }
                    }
                    try rows.endRow()
                }
            }
        }
    }

    /// Records one attempt in the fetch log (location 0 when none can be named).
    public func logFetch(_ fetch: FetchRecord, locationID: Int64?, model: String?, outcome: String, runID: Int64?)
        throws
    {
        let location = locationID ?? 0
        let id: Int64
        if location == 0 {
            // No counter row for "no location": the next id under the same lock the counters use.
            try db.lockForTransaction(Self.lockKey(0))
            id = try db.scalarInt("SELECT coalesce(max(id), 0) + 1 FROM fetch_log WHERE location_id = 0") ?? 1
        } else {
            id = try nextID(.fetch, location: location)
        }
        try db.run(
            """
            INSERT INTO fetch_log (location_id, id, attempted_at, model, origin, outcome, http_status, error, duration_ms, run_id, request, api_weight)
            VALUES ($1, $2, $3, $4, $5, $6, $7, NULL, $8, $9, $10, $11)
            """,
            [
                .integer(location), .integer(id), .integer(fetch.fetchedAt), model.postgresValue,
                .text(fetch.origin.rawValue), .text(outcome), fetch.httpStatus.map { Int64($0) }.postgresValue,
                fetch.durationMilliseconds.map { Int64($0) }.postgresValue, runID.postgresValue,
                fetch.request.postgresValue, fetch.apiWeight.postgresValue
            ])
    }
}
