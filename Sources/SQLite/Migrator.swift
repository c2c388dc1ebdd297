@_exported import WxSchemaMigration

/// One schema change: a name (its file name without `.sql`) and the SQL it runs; the type both
/// engines' migrations share (its checksum included).
public typealias Migration = SchemaMigration

/// Why a database cannot be migrated by this build.
public enum MigrationError: Error, CustomStringConvertible, Equatable {
    /// The database records a migration this build does not have: it was written by a newer wxdb.
    case unknownMigration(name: String, path: String)
    /// A migration this build has was applied with different SQL.
    case checksumMismatch(name: String, path: String)
    /// A migration is not recorded although a later one is: `schema_migrations` was edited or
    /// damaged, so applying it again would fail halfway or change tables that already have it.
    case missingRecord(name: String, later: String, path: String)
    /// A migration left rows that refer to rows that do not exist; it was rolled back.
    case foreignKeyViolation(name: String, path: String)

    public var description: String {
        switch self {
        case .unknownMigration(let name, let path):
            return
                "the database \(path) records migration \(name), which this wxdb does not know: it was written by a newer wxdb. Upgrade wxdb to use it, or pass another --db; the file was not changed."
        case .checksumMismatch(let name, let path):
            return
                "migration \(name) recorded in \(path) differs from the one this wxdb carries, so the schema cannot be trusted. Use the wxdb that created it, or another --db; the file was not changed."
        case .missingRecord(let name, let later, let path):
            return
                "\(path) does not record migration \(name) although it records the later \(later): its schema_migrations table was edited or damaged, so wxdb cannot tell which schema it has. The file was not changed; restore it from a backup, or export what still reads with 'wxdb export'."
        case .foreignKeyViolation(let name, let path):
            return
                "migration \(name) would leave rows in \(path) that refer to missing rows, so it was rolled back and the file was not changed; run 'wxdb doctor' and restore the file from a backup if it reports damage."
        }
    }
}

/// Applies ordered, append-only migrations, each in its own `BEGIN IMMEDIATE` transaction,
/// recording its name and checksum in `schema_migrations`.
public struct Migrator: Sendable {
    public let migrations: [Migration]
    public init(migrations: [Migration]) { self.migrations = migrations }

    static let createTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            name       TEXT    NOT NULL PRIMARY KEY,
            checksum   TEXT    NOT NULL,
            applied_at INTEGER NOT NULL
        ) STRICT
        """

    /// The migrations recorded in the database, in order. Reads only, so a refused file stays as it was.
    public func applied(in db: Database) throws -> [(name: String, checksum: String)] {
        let exists =
            try db.scalarInt(
                "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = 'schema_migrations'") ?? 0
        guard exists > 0 else { return [] }
        return try db.rows("SELECT name, checksum FROM schema_migrations ORDER BY name") {
            (name: $0.string(0), checksum: $0.string(1))
        }
    }

    /// Throws when the database was migrated by another build; writes nothing.
    public func check(_ db: Database) throws {
        try check(db, records: try applied(in: db))
    }

    /// `check(_:)` of the migrations `applied(in:)` read, for a caller that needs them as well: every
    /// command opens the database, and reading `schema_migrations` once is enough.
    public func check(_ db: Database, records: [(name: String, checksum: String)]) throws {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.name, $0.checksum) })
        let recorded = Set(records.map(\.name))
        if let latest = migrations.last(where: { recorded.contains($0.name) }),
            let gap = migrations.first(where: { !recorded.contains($0.name) && $0.name < latest.name })
        {
            throw MigrationError.missingRecord(name: gap.name, later: latest.name, path: db.path)
        }
        for record in records {
            guard let checksum = known[record.name] else {
                throw MigrationError.unknownMigration(name: record.name, path: db.path)
            }
            guard checksum == record.checksum else {
                throw MigrationError.checksumMismatch(name: record.name, path: db.path)
            }
        }
    }

    /// The names of migrations not yet applied.
    public func pending(in db: Database) throws -> [String] {
        let done = Set(try applied(in: db).map(\.name))
        return migrations.map(\.name).filter { !done.contains($0) }
    }

    /// Checks, then applies whatever is pending. Returns the names applied.
    @discardableResult
    public func migrate(_ db: Database, now: Int64) throws -> [String] {
        try check(db)
        var done = Set(try applied(in: db).map(\.name))
        var appliedNow: [String] = []
        // SQLite changes a CHECK only by rebuilding the table, and dropping the old table with
        // foreign keys on would delete every row that refers to it (ON DELETE CASCADE). So
        // migrations run with them off (a no-op inside a transaction, hence here) and each is
        // checked with foreign_key_check before it commits.
        let foreignKeys = try db.scalarInt("PRAGMA foreign_keys") ?? 0
        if foreignKeys != 0 { try db.execute("PRAGMA foreign_keys = OFF") }
        defer { if foreignKeys != 0 { try? db.execute("PRAGMA foreign_keys = ON") } }
        for migration in migrations where !done.contains(migration.name) {
            try db.transaction {
                try db.execute(Self.createTable)
                // Another process may have applied it while we waited for the write lock.
                let already =
                    try db.scalarInt(
                        "SELECT count(*) FROM schema_migrations WHERE name = ?", [.text(migration.name)]) ?? 0
                guard already == 0 else { return }
                try db.execute(migration.sql)
                // Only a rebuild (a dropped table) can break references; the check reads every row.
                if migration.sql.contains("DROP TABLE"),
                    try db.firstRow("PRAGMA foreign_key_check", [], { _ in true }) != nil
                {
                    throw MigrationError.foreignKeyViolation(name: migration.name, path: db.path)
                }
                try db.run(
                    "INSERT INTO schema_migrations (name, checksum, applied_at) VALUES (?, ?, ?)",
                    [.text(migration.name), .text(migration.checksum), .integer(now)])
                appliedNow.append(migration.name)
            }
            done.insert(migration.name)
        }
        return appliedNow
    }
}
