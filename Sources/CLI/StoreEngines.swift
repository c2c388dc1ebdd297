import WxStore
import WxStoreSQLite

/// The one place a command's `--db` (or `WXDB_DB`) becomes a store: it chooses the engine from the
/// text. Today every value is a SQLite file path; a PostgreSQL engine (issue #30) takes
/// `postgres://` and `postgresql://` URLs here, and nothing else in the commands changes.
enum StoreEngines {
    /// Opens (creating it when `create`, and migrating it) the store `location` names.
    static func open(
        _ location: String, create: Bool, busyTimeoutMilliseconds: Int32, access: StoreAccess
    ) throws -> any Store {
        // A PostgreSQL connection string is never a path; until its engine is here, it is checked and refused.
        if let conninfo = PostgresTarget.conninfo(location) { try PostgresTarget.refuse(conninfo) }
        return try SQLiteStore.open(
            path: location, create: create, busyTimeoutMilliseconds: busyTimeoutMilliseconds, access: access)
    }
}
