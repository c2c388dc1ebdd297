// The PostgreSQL engine behind the Store interface. The requirements are filled in files by
// kind beside this one (locations, writes, reads, exports).
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
