// The PostgreSQL engine behind the Store interface. The requirements are filled in files by
// kind beside this one (locations, writes, reads, exports); those not built yet are listed in
// PendingWrites.swift and PendingReads.swift, where each refuses with `PostgresStoreGap`.
import WxCore
import WxStore

extension PostgresEngine: Store {
    public var path: String { db.target }
    public var readOnlyReason: String? { nil }
    public var tablesCountedFromRuns: [String] { ["hourly_forecasts", "daily_forecasts"] }

    public func schemaVersion() throws -> String? {
        try db.firstRow("SELECT max(name) FROM schema_migrations", []) { $0.optionalString(0) } ?? nil
    }
}

/// A Store operation the PostgreSQL engine does not do yet: refused before anything is written.
public struct PostgresStoreGap: Error, CustomStringConvertible {
    /// The Store requirement that is missing.
    public let operation: String
    public var description: String {
        "this wxdb cannot yet \(operation) on PostgreSQL (issue #30 is building the engine); nothing was changed. Use a SQLite --db for this command, or a newer wxdb"
    }
}
