import FoundationEssentials
import WxCore
import WxSQLite
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SQLiteStore {
    /// The tables `tableCounts` reports, in that order.
    public static let tables = [
        "locations", "forecast_runs", "fetch_log", "hourly_forecasts", "daily_forecasts", "observations",
        "verification_summaries"
    ]

    /// The tables whose `tableCounts` figure is the sum of the runs' own counts (`hour_count`,
    /// `day_count` of the runs whose rows are kept), not a count of their rows.
    public static let tablesCountedFromRuns = ["hourly_forecasts", "daily_forecasts"]
    public var tablesCountedFromRuns: [String] { Self.tablesCountedFromRuns }

    /// Rows per table of `tables`. The hourly and daily rows are summed from the runs, which record
    /// how many they stored (one run's rows are stored whole or not at all, a continued run
    /// recounts its own, prune sets `pruned_at` as it deletes them): counting them would read every
    /// page of the two tables that hold nearly all of the file, so stats would take minutes at scale.
    public func tableCounts() throws -> [(table: String, rows: Int64)] {
        let fromRuns = try db.firstRow(
            "SELECT coalesce(sum(hour_count), 0), coalesce(sum(day_count), 0) FROM forecast_runs WHERE pruned_at IS NULL"
        ) { (hourly: $0.int64(0), daily: $0.int64(1)) }
        return try Self.tables.map { table in
            switch table {
            case "hourly_forecasts": return (table, fromRuns?.hourly ?? 0)
            case "daily_forecasts": return (table, fromRuns?.daily ?? 0)
            default: return (table, try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0)
            }
        }
            + (try EnsembleTables.counts { table in
                // A file read before migration 0014 has no ensemble tables: nothing to count.
                guard
                    try db.scalarInt(
                        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = ?", [.text(table)])
                        == 1
                else { return 0 }
                return try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0
            })
    }

    /// `activity` of every location that has any, by location id, in one pass over each table: for
    /// `stats`, which lists them all. Location by location, each location's fetch-log rows (written
    /// hour by hour among all the others') would cost a page read each: 4 s instead of 1 s at 1,000
    /// locations x 30 days.
    public func activities() throws -> [Int64: LocationActivity] {
        var result: [Int64: LocationActivity] = [:]
        let log = try db.rows(
            """
            SELECT location_id, count(*), coalesce(sum(outcome = 'repeated'), 0), coalesce(sum(outcome = 'failed'), 0),
                max(CASE WHEN outcome != 'failed' THEN attempted_at END)
            FROM fetch_log WHERE location_id IS NOT NULL GROUP BY location_id
            """
        ) { ($0.int64(0), $0.int(1), $0.int(2), $0.int(3), $0.optionalInt64(4)) }
        for (id, fetches, repeated, failed, last) in log {
            result[id] = LocationActivity(
                runs: 0, fetches: fetches, repeated: repeated, failed: failed, observations: 0, lastFetch: last)
        }
        for (id, count) in try db.rows(
            "SELECT location_id, count(*) FROM forecast_runs GROUP BY location_id", [], { ($0.int64(0), $0.int(1)) })
        {
            result[id, default: .none].runs = count
        }
        for (id, count) in try db.rows(
            "SELECT location_id, count(*) FROM observations GROUP BY location_id", [], { ($0.int64(0), $0.int(1)) })
        {
            result[id, default: .none].observations = count
        }
        return result
    }

    /// Runs, fetch-log entries by outcome, and observations of one location: each a range of an
    /// index on the location, so the cost grows with that location's rows, not the file's.
    public func activity(locationID: Int64) throws -> LocationActivity {
        let id: [SQLValue] = [.integer(locationID)]
        let log = try db.firstRow(
            """
            SELECT count(*), coalesce(sum(outcome = 'repeated'), 0), coalesce(sum(outcome = 'failed'), 0),
                max(CASE WHEN outcome != 'failed' THEN attempted_at END)
            FROM fetch_log WHERE location_id = ?
            """, id
        ) { (fetches: $0.int64(0), repeated: $0.int64(1), failed: $0.int64(2), last: $0.optionalInt64(3)) }
        return LocationActivity(
            runs: Int(try db.scalarInt("SELECT count(*) FROM forecast_runs WHERE location_id = ?", id) ?? 0),
            fetches: Int(log?.fetches ?? 0), repeated: Int(log?.repeated ?? 0), failed: Int(log?.failed ?? 0),
            observations: Int(try db.scalarInt("SELECT count(*) FROM observations WHERE location_id = ?", id) ?? 0),
            lastFetch: log?.last)
    }

    /// The UTC hours (unixtime / 3600) since `since` in which a fetch (not an import) of the location
    /// did not fail.
    public func fetchedHours(locationID: Int64, since: Int64) throws -> [Int64] {
        try db.rows(
            "SELECT DISTINCT attempted_at / 3600 FROM fetch_log WHERE location_id = ? AND origin = 'fetch' AND outcome != 'failed' AND attempted_at >= ?",
            [.integer(locationID), .integer(since)]
        ) { $0.int64(0) }
    }

    /// The share of Open-Meteo's weighted call count the fetch log records for fetches attempted
    /// in `[from, to)`.
    /// The database file's size and its write-ahead log's.
    public func databaseBytes() throws -> Int64 { fileSize(path) + fileSize(path + "-wal") }

    public func apiWeightUsed(from: Int64, to: Int64) throws -> Double {
        try db.firstRow(
            "SELECT coalesce(sum(api_weight), 0) FROM fetch_log WHERE origin IN ('fetch', 'single_run') AND attempted_at >= ? AND attempted_at < ?",
            [.integer(from), .integer(to)]
        ) { $0.double(0) } ?? 0
    }

    /// Free bytes for an unprivileged writer in the database's folder, or nil when unknown.
    public func freeBytesBeside() -> Int64? {
        let folder = PathText.folder(of: path)
        var info = statvfs()
        guard statvfs(folder.isEmpty ? "." : folder, &info) == 0 else { return nil }
        return Int64(info.f_bavail) * Int64(info.f_frsize)
    }

    /// Rewrites the file without its free pages (VACUUM), then folds the -wal back into it and
    /// truncates it. Needs about the database's size free beside it while it runs.
    public func vacuum(busyTimeoutMilliseconds: Int32) throws -> VacuumResult {
        try db.execute("VACUUM")
        // A truncating checkpoint waits for readers through the busy handler; a reader holding a
        // snapshot for long must not hold the command for the whole busy timeout.
        db.setBusyTimeout(milliseconds: 2000)
        defer { db.setBusyTimeout(milliseconds: busyTimeoutMilliseconds) }
        // (busy, frames in the log, frames checkpointed): busy, or frames left over, means a reader
        // still needed the old pages.
        let row = try db.firstRow("PRAGMA wal_checkpoint(TRUNCATE)") { ($0.int64(0), $0.int64(1), $0.int64(2)) }
        let walBytes = fileSize(path + "-wal")
        let kept = (row.map { $0.0 != 0 || $0.1 != $0.2 } ?? false) || walBytes > 0
        return VacuumResult(walKept: kept, walBytes: walBytes)
    }
}

/// What `Store.vacuum` did.
public struct VacuumResult: Sendable, Equatable {
    /// True when a reader's open snapshot kept the -wal file from being folded back and truncated.
    public var walKept: Bool
    /// The -wal file's size afterwards.
    public var walBytes: Int64
}

/// A database opened only to be looked at (`wxdb doctor`): read-only, no migration, no switch to
/// WAL, nothing written, so a damaged or foreign file stays exactly as it was, and a file the user
/// may only read is inspected like any other.
public final class DatabaseInspection {
    let db: Database

    /// The SQLite library version, e.g. "3.40.1".
    public static var sqliteVersion: String { Database.libraryVersion }

    /// Opens the existing file at `path` as it is; throws `Store.OpenError`.
    public init(path: String) throws {
        db = try SQLiteStore.openForReading(path: path, checkSchema: false)
    }

    /// SQLite's `integrity_check`: `["ok"]`, or the problems it found.
    public func integrityCheck() throws -> [String] {
        try db.rows("PRAGMA integrity_check") { $0.string(0) }
    }

    /// Rows whose foreign key points nowhere, as "table row rowid".
    public func foreignKeyProblems() throws -> [String] {
        try db.rows("PRAGMA foreign_key_check") { "\($0.string(0)) row \($0.int64(1))" }
    }

    /// SQLite's `quick_check`: like `integrityCheck`, but without comparing each index with its
    /// table or checking UNIQUE and NOT NULL, so each page is read once: `["ok"]`, or the problems.
    public func quickCheck() throws -> [String] {
        try db.rows("PRAGMA quick_check") { $0.string(0) }
    }

    /// The tables a quick check leaves out of the foreign-key check: their rows are nearly all of a
    /// large file, and checking them costs a lookup of the run for every row.
    public static let rowTables = ["hourly_forecasts", "daily_forecasts"]

    /// `foreignKeyProblems` for every table but `rowTables`.
    public func foreignKeyProblemsOutsideRowTables() throws -> [String] {
        let tables = try db.rows(
            "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name"
        ) { $0.string(0) }
        return try tables.filter { !Self.rowTables.contains($0) }.flatMap { table in
            try db.rows("SELECT * FROM pragma_foreign_key_check(?)", [.text(table)]) {
                "\($0.string(0)) row \($0.int64(1))"
            }
        }
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

    /// The connection's journal mode (`wal` for a database wxdb has written, when opened so that
    /// SQLite reads the file's own mode; an immutable open reports its own).
    public func journalMode() throws -> String? {
        try db.scalarText("PRAGMA journal_mode")
    }
}

// Like a `Store`, an inspection is used from one thread (see `Database`).
@available(*, unavailable)
extension DatabaseInspection: Sendable {}
