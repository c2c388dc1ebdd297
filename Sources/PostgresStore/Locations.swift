// The Store's location requirements on PostgreSQL, as the SQLite engine answers them
// (StoreSQLite/Locations.swift): names match exactly, a change of time zone moves the kept sums to
// the new zone's days in the same transaction, and every change of a location runs under its
// advisory lock (the lock its ingests take).
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    /// The location with this name, or an error that says how to find the right one.
    public func requireLocation(named name: String) throws -> Location {
        guard let location = try location(named: name) else { throw LocationError.unknown(name) }
        return location
    }

    /// The location with this id, if any.
    public func location(id: Int64) throws -> Location? {
        try db.firstRow("SELECT \(Self.locationColumns) FROM locations WHERE id = $1", [.integer(id)], Self.location)
    }

    /// Every location's id and name (or only `only`'s), by id.
    public func locationsByID(only id: Int64?) throws -> [(id: Int64, name: String)] {
        try db.rows(
            "SELECT id, name FROM locations WHERE ($1::bigint IS NULL OR id = $1) ORDER BY id", [id.postgresValue]
        ) { (id: $0.int64(0), name: $0.string(1)) }
    }

    /// Changes a location's time zone and/or models; returns it as saved.
    @discardableResult
    public func updateLocation(named name: String, timezone: String?, models: [String]?) throws -> Location {
        try db.transaction {
            let location = try requireLocation(named: name)
            try db.lockForTransaction(Self.lockKey(location.id))
            func update() throws {
                try db.run(
                    "UPDATE locations SET timezone = coalesce($1, timezone), models = coalesce($2, models) WHERE id = $3",
                    [
                        timezone.postgresValue, models.map { .text($0.joined(separator: ",")) } ?? .null,
                        .integer(location.id)
                    ])
            }
            if let timezone, timezone != location.timezone {
                // The stored pairs move to the new zone's days; what pruned runs left keeps its old days.
                try keepingSums(.location(location.id), location: location.id, update)
            } else {
                try update()
            }
            return try requireLocation(named: name)
        }
    }

    /// Removes a location. Without `purge`, a location that has stored forecasts or observations is
    /// kept and an error says so, because removing it deletes its history. The fetch log (its
    /// location 0 is "none") and the hourly and daily rows have no foreign key: they go explicitly.
    public func removeLocation(named name: String, purge: Bool) throws -> (runs: Int, observations: Int) {
        try db.transaction {
            let location = try requireLocation(named: name)
            try db.lockForTransaction(Self.lockKey(location.id))
            let runs = Int(
                try db.scalarInt("SELECT count(*) FROM forecast_runs WHERE location_id = $1", [.integer(location.id)])
                    ?? 0)
            let observations = Int(
                try db.scalarInt("SELECT count(*) FROM observations WHERE location_id = $1", [.integer(location.id)])
                    ?? 0)
            if (runs > 0 || observations > 0) && !purge {
                throw StoreError.wouldDeleteHistory(name: name, runs: runs, observations: observations)
            }
            // The runs go by the location's ON DELETE CASCADE; their hourly and daily rows have no
            // key to them (migration 0005), so they go here, in the same transaction.
            _ = try deleteRunRows(.location(location.id))
            try db.run("DELETE FROM fetch_log WHERE location_id = $1", [.integer(location.id)])
            try db.run("DELETE FROM locations WHERE id = $1", [.integer(location.id)])
            return (runs, observations)
        }
    }

    /// Whether `location` is still saved (same id and name): another command may have removed it
    /// since it was looked up.
    public func isStillSaved(_ location: Location) throws -> Bool {
        try db.scalarInt(
            "SELECT count(*) FROM locations WHERE id = $1 AND name = $2", [.integer(location.id), .text(location.name)])
            == 1
    }

    /// A location added with time zone `auto` takes the zone Open-Meteo resolved for it, its kept
    /// sums moved to that zone's days.
    public func adoptTimezoneIfAuto(_ location: Location, from response: ForecastResponse) throws {
        // Only a zone this machine's zone database knows: a server's text is not trusted.
        guard location.timezone == "auto", ZoneTime.isValidName(response.timezone) else { return }
        try inTransaction {
            try db.lockForTransaction(Self.lockKey(location.id))
            try keepingSums(.location(location.id), location: location.id) {
                try db.run(
                    "UPDATE locations SET timezone = $1 WHERE id = $2 AND timezone = 'auto'",
                    [.text(response.timezone), .integer(location.id)])
            }
        }
    }

    /// Runs `body` in the transaction already open, or in one of its own.
    func inTransaction<T>(_ body: () throws -> T) throws -> T {
        db.isInTransaction ? try body() : try db.transaction(body)
    }
}
