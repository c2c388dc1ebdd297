import WxCore
import WxSQLite

/// What the store holds about one location's fetching, for `stats` and `locations list`.
public struct LocationActivity: Sendable, Equatable {
    public var runs: Int
    public var fetches: Int
    /// Fetches whose content equalled a run already stored.
    public var repeated: Int
    public var failed: Int
    public var observations: Int
    /// The last attempt that did not fail.
    public var lastFetch: Int64?
}

extension Store {
    /// The tables `tableCounts` reports, in that order.
    public static let tables = ["locations", "forecast_runs", "fetch_log", "hourly_forecasts", "daily_forecasts", "observations",
                                "verification_summaries"]

    /// Rows per table of `tables`.
    public func tableCounts() throws -> [(table: String, rows: Int64)] {
        try Self.tables.map { table in (table, try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0) }
    }

    /// Runs, fetch-log entries by outcome, and observations of one location.
    public func activity(locationID: Int64) throws -> LocationActivity {
        let id: [SQLValue] = [.integer(locationID)]
        return LocationActivity(
            runs: Int(try db.scalarInt("SELECT count(*) FROM forecast_runs WHERE location_id = ?", id) ?? 0),
            fetches: Int(try db.scalarInt("SELECT count(*) FROM fetch_log WHERE location_id = ?", id) ?? 0),
            repeated: Int(try db.scalarInt("SELECT count(*) FROM fetch_log WHERE location_id = ? AND outcome = 'repeated'", id) ?? 0),
            failed: Int(try db.scalarInt("SELECT count(*) FROM fetch_log WHERE location_id = ? AND outcome = 'failed'", id) ?? 0),
            observations: Int(try db.scalarInt("SELECT count(*) FROM observations WHERE location_id = ?", id) ?? 0),
            lastFetch: try db.scalarInt("SELECT max(attempted_at) FROM fetch_log WHERE location_id = ? AND outcome != 'failed'", id))
    }

    /// The UTC hours (unixtime / 3600) since `since` in which a fetch (not an import) of the location
    /// did not fail.
    public func fetchedHours(locationID: Int64, since: Int64) throws -> [Int64] {
        try db.rows(
            "SELECT DISTINCT attempted_at / 3600 FROM fetch_log WHERE location_id = ? AND origin = 'fetch' AND outcome != 'failed' AND attempted_at >= ?",
            [.integer(locationID), .integer(since)]) { $0.int64(0) }
    }

    /// The share of Open-Meteo's weighted call count the fetch log records since `since`.
    public func apiWeightUsed(since start: Int64) throws -> Double {
        try db.firstRow(
            "SELECT coalesce(sum(api_weight), 0) FROM fetch_log WHERE origin = 'fetch' AND attempted_at >= ?",
            [.integer(start)]) { $0.double(0) } ?? 0
    }

    /// Gives freed pages back to the file system (rewrites the file) and empties the WAL.
    public func vacuum() throws {
        try db.execute("VACUUM")
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}

/// A database opened only to be looked at (`wxdb doctor`): no migration, no switch to WAL, nothing
/// written, so a damaged or foreign file stays exactly as it was.
public final class DatabaseInspection {
    let db: Database

    /// Why the file could not be opened, in SQLite's words.
    public struct OpenError: Error, CustomStringConvertible {
        public let message: String
        public var description: String { message }
    }

    /// The SQLite library version, e.g. "3.40.1".
    public static var sqliteVersion: String { Database.libraryVersion }

    /// Opens the existing file at `path` as it is.
    public init(path: String) throws {
        var options = Database.Options()
        options.create = false
        options.walMode = false
        do {
            db = try Database(path: path, options: options)
        } catch let error as SQLiteError {
            throw OpenError(message: error.message)
        }
    }

    /// SQLite's `integrity_check`: `["ok"]`, or the problems it found.
    public func integrityCheck() throws -> [String] {
        try db.rows("PRAGMA integrity_check") { $0.string(0) }
    }

    /// Rows whose foreign key points nowhere, as "table row rowid".
    public func foreignKeyProblems() throws -> [String] {
        try db.rows("PRAGMA foreign_key_check") { "\($0.string(0)) row \($0.int64(1))" }
    }

    /// The names of the wxdb migrations recorded in the file, in order.
    public func appliedMigrations() throws -> [String] {
        try Migrator(migrations: Schema.migrations).applied(in: db).map(\.name)
    }

    /// Throws when the file was migrated by another wxdb build (see `MigrationError`).
    public func checkMigrations() throws {
        try Migrator(migrations: Schema.migrations).check(db)
    }

    /// The migrations this build would apply on the next write.
    public func pendingMigrations() throws -> [String] {
        try Migrator(migrations: Schema.migrations).pending(in: db)
    }

    /// The journal mode (`wal` for a database wxdb has written).
    public func journalMode() throws -> String? {
        try db.scalarText("PRAGMA journal_mode")
    }
}

// Like a `Store`, an inspection is used from one thread (see `Database`).
@available(*, unavailable)
extension DatabaseInspection: Sendable {}
