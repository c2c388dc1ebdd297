import Foundation
import WxSQLite

/// The one way tests reach behind wxdb into its SQLite file: to count rows straight from the tables,
/// to plant what wxdb itself would never write (hostile values, sums that disagree with the rows, an
/// older schema) and to damage pages. Everything that goes through here is a test of the SQLite engine:
/// a second engine needs its own way to do the same, while tests that check what a user sees go
/// through the Store's methods, the CLI's output or `doctor --deep` instead.
public struct SQLiteBackdoor {
    /// The connection, opened read-write on the file; for the SQL of a tampering test.
    public let db: Database

    /// Opens wxdb's SQLite file at `path` (it must exist; a missing file is created empty by SQLite).
    public init(_ path: String, options: Database.Options = Database.Options()) throws {
        db = try Database(path: path, options: options)
    }

    /// wxdb's tables whose rows `rowCounts` counts.
    public static let tables = [
        "locations", "forecast_runs", "fetch_log", "hourly_forecasts", "daily_forecasts", "observations"
    ]

    /// Rows of each of wxdb's tables, read from the rows themselves (not from the runs' counts, as
    /// `stats` does), to show a refused input left every table as it was.
    public func rowCounts() throws -> [String: Int64] {
        var result: [String: Int64] = [:]
        for table in Self.tables {
            // The names come from the list above, never from a caller.
            result[table] = try db.scalarInt("SELECT count(*) FROM \(table)")
        }
        return result
    }

    /// One integer from `sql` (nil for NULL or no row).
    public func scalar(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
        try db.scalarInt(sql, arguments)
    }

    /// Writes the WAL into the file and leaves WAL mode, so that the file alone is the whole database.
    public func checkpointIntoFile() throws {
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE")
    }

    /// Scribbles 3000 bytes over page `page` (4096-byte pages; page 11 is the root page of
    /// `hourly_forecasts` in a database built by the tests' histories): damage `doctor` must find.
    /// Checkpoints first, so the damage is in the file and not shadowed by the WAL.
    public static func damagePage(of path: String, page: UInt64 = 11) throws {
        try SQLiteBackdoor(path).checkpointIntoFile()
        guard let handle = FileHandle(forUpdatingAtPath: path) else {
            throw CocoaError(.fileNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        try handle.seek(toOffset: 4096 * page)
        handle.write(Data(repeating: 0xAB, count: 3000))
        try handle.close()
    }
}
