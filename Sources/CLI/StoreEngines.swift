import WxStore
import WxStoreSQLite

/// The one place a command's `--db` (or `WXDB_DB`) becomes a store: it chooses the engine from the
/// text: a `postgres://` / `postgresql://` URI or libpq `keyword=value` text (`service=wxdb`) is
/// PostgreSQL, anything else a SQLite file path; nothing else in the commands changes.
enum StoreEngines {
    /// Opens (creating it when `create`, and migrating it) the store `location` names.
    static func open(
        _ location: String, create: Bool, busyTimeoutMilliseconds: Int32, access: StoreAccess
    ) throws -> any Store {
        // A PostgreSQL connection string is never a path.
        if let conninfo = PostgresTarget.conninfo(location) { return try PostgresTarget.open(conninfo, access: access) }
        return try SQLiteStore.open(
            path: location, create: create, busyTimeoutMilliseconds: busyTimeoutMilliseconds, access: access)
    }
}
