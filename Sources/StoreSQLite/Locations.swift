import WxCore
import WxSQLite
import WxStore

extension SQLiteStore {
    static let locationColumns = "id, name, latitude, longitude, elevation, timezone, models, created_at"

    static func location(_ row: Row) -> Location {
        Location(
            id: row.int64(0), name: row.string(1), latitude: row.double(2), longitude: row.double(3),
            elevation: row.optionalDouble(4), timezone: row.string(5),
            models: row.string(6).split(separator: ",").map(String.init), createdAt: row.int64(7))
    }

    /// Saves a new location.
    @discardableResult
    public func addLocation(
        name: String, latitude: Double, longitude: Double, elevation: Double?,
        timezone: String, models: [String], now: Int64
    ) throws -> Location {
        try Location.checkNew(name: name, latitude: latitude, longitude: longitude)
        let modelList = Location.savedModels(models)
        return try db.transaction {
            try Location.checkUnused(name, existing: location(named: name))
            try db.run(
                "INSERT INTO locations (name, latitude, longitude, elevation, timezone, models, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                [
                    .text(name), .real(latitude), .real(longitude), elevation.sqlValue, .text(timezone),
                    .text(modelList.joined(separator: ",")), .integer(now)
                ])
            return Location(
                id: db.lastInsertRowID, name: name, latitude: latitude, longitude: longitude,
                elevation: elevation, timezone: timezone, models: modelList, createdAt: now)
        }
    }

    /// The location with exactly this name, if any.
    public func location(named name: String) throws -> Location? {
        try db.firstRow("SELECT \(Self.locationColumns) FROM locations WHERE name = ?", [.text(name)], Self.location)
    }

    /// The location with this name, or an error that says how to find the right one.
    public func requireLocation(named name: String) throws -> Location {
        guard let location = try location(named: name) else { throw LocationError.unknown(name) }
        return location
    }

    /// Every saved location, by name.
    public func locations() throws -> [Location] {
        try db.rows("SELECT \(Self.locationColumns) FROM locations ORDER BY name", [], Self.location)
    }

    /// Changes a location's time zone and/or models; returns it as saved.
    @discardableResult
    public func updateLocation(named name: String, timezone: String?, models: [String]?) throws -> Location {
        try db.transaction {
            let location = try requireLocation(named: name)
            func update() throws {
                try db.run(
                    "UPDATE locations SET timezone = coalesce(?, timezone), models = coalesce(?, models) WHERE id = ?",
                    [timezone.sqlValue, models.map { .text($0.joined(separator: ",")) } ?? .null, .integer(location.id)]
                )
            }
            if let timezone, timezone != location.timezone {
                // The stored pairs move to the new zone's days; what pruned runs left keeps its old days.
                try keepingSums(.location(location.id), update)
            } else {
                try update()
            }
            return try requireLocation(named: name)
        }
    }

    /// Removes a location. Without `purge`, a location that has stored forecasts or observations is
    /// kept and an error says so, because removing it deletes its history.
    public func removeLocation(named name: String, purge: Bool) throws -> (runs: Int, observations: Int) {
        try db.transaction {
            let location = try requireLocation(named: name)
            let runs = Int(
                try db.scalarInt("SELECT count(*) FROM forecast_runs WHERE location_id = ?", [.integer(location.id)])
                    ?? 0)
            let observations = Int(
                try db.scalarInt("SELECT count(*) FROM observations WHERE location_id = ?", [.integer(location.id)])
                    ?? 0)
            if (runs > 0 || observations > 0) && !purge {
                throw StoreError.wouldDeleteHistory(name: name, runs: runs, observations: observations)
            }
            try db.run("DELETE FROM locations WHERE id = ?", [.integer(location.id)])
            return (runs, observations)
        }
    }
}

extension SQLiteStore {
    /// Whether `location` is still saved (same id and name): another command may have removed it
    /// since it was looked up, and storing for it then fails on the foreign key.
    public func isStillSaved(_ location: Location) throws -> Bool {
        try db.scalarInt(
            "SELECT count(*) FROM locations WHERE id = ? AND name = ?", [.integer(location.id), .text(location.name)])
            == 1
    }

    /// Whether a location with this id is saved.
    func locationExists(id: Int64) throws -> Bool {
        try db.scalarInt("SELECT count(*) FROM locations WHERE id = ?", [.integer(id)]) == 1
    }

    /// A location added with time zone `auto` takes the zone Open-Meteo resolved for it.
    public func adoptTimezoneIfAuto(_ location: Location, from response: ForecastResponse) throws {
        // Only a zone this machine's zone database knows: a server's text is not trusted.
        guard location.timezone == "auto", ZoneTime.isValidName(response.timezone) else { return }
        try keepingSums(.location(location.id)) {
            try db.run(
                "UPDATE locations SET timezone = ? WHERE id = ? AND timezone = 'auto'",
                [.text(response.timezone), .integer(location.id)])
        }
    }
}
