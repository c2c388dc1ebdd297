// wxdb's schema on PostgreSQL: Migrations/postgresql/NNNN_*.sql, ordered and append-only, carried
// in the binary (EmbeddedMigrations.swift) with a checksum each, applied one per transaction and
// recorded in schema_migrations, as SQLite's are. A database another application uses, or one a
// newer wxdb migrated, is refused before anything is written. Migrations run under an advisory
// lock, so two wxdb processes starting at once on a new database apply each migration once.
import WxPostgres
import WxSchemaMigration

/// Why a PostgreSQL database cannot be used by this build; nothing was written.
public enum PostgresSchemaError: Error, CustomStringConvertible, Equatable {
    /// The schema holds tables (or a schema_migrations table) that are not wxdb's.
    case foreign(target: String, tables: [String])
    /// A migration is recorded that this build does not carry: a newer wxdb wrote the database.
    case unknownMigration(name: String, target: String)
    /// A migration this build carries was applied with different SQL.
    case checksumMismatch(name: String, target: String)
    /// A migration is missing although a later one is recorded.
    case missingRecord(name: String, later: String, target: String)

    public var description: String {
        switch self {
        case .foreign(let target, let tables):
            let shown = tables.prefix(5).joined(separator: ", ") + (tables.count > 5 ? ", …" : "")
            return
                "\(target) is a PostgreSQL database, but not a wxdb one (it holds tables wxdb did not create: \(shown)). wxdb did not change it; pass another --db (an empty database: createdb NAME), or a schema of its own with options=-csearch_path=NAME"
        case .unknownMigration(let name, let target):
            return
                "the database \(target) records migration \(name), which this wxdb does not know: it was written by a newer wxdb. Upgrade wxdb to use it, or pass another --db; the database was not changed."
        case .checksumMismatch(let name, let target):
            return
                "migration \(name) recorded in \(target) differs from the one this wxdb carries, so the schema cannot be trusted. Use the wxdb that created it, or another --db; the database was not changed."
        case .missingRecord(let name, let later, let target):
            return
                "\(target) does not record migration \(name) although it records the later \(later): its schema_migrations table was edited or damaged, so wxdb cannot tell which schema it has. The database was not changed."
        }
    }
}

/// What applying migrations did.
public struct PostgresMigrationOutcome: Sendable, Equatable {
    /// The migrations applied now, in order.
    public var applied: [String] = []
    /// On Citus, what the first migration distributed; nil on plain PostgreSQL.
    public var distribution: PostgresDistribution?

    /// The line to print when something was applied, saying whether the tables were distributed.
    public var note: String? {
        guard !applied.isEmpty else { return nil }
        let names = applied.joined(separator: ", ")
        guard let distribution, applied.contains(PostgresSchema.migrations[0].name) else {
            return "applied PostgreSQL migrations \(names)"
        }
        return "applied PostgreSQL migrations \(names); Citus: \(distribution.summary)"
    }
}

/// How the tables are spread over a Citus cluster.
public struct PostgresDistribution: Sendable, Equatable {
    /// Tables distributed by location_id.
    public var distributed: [String]
    /// Tables copied to every node.
    public var reference: [String]
    /// Shards per node, as `host:port` → count, in node order.
    public var shardsPerNode: [(node: String, shards: Int)]

    public static func == (a: Self, b: Self) -> Bool {
        a.distributed == b.distributed && a.reference == b.reference
            && a.shardsPerNode.map(\.node) == b.shardsPerNode.map(\.node)
            && a.shardsPerNode.map(\.shards) == b.shardsPerNode.map(\.shards)
    }

    /// One line: what is distributed, what is a reference table, where the shards are.
    public var summary: String {
        let nodes = shardsPerNode.map { "\($0.node) \($0.shards)" }.joined(separator: ", ")
        return
            "\(distributed.count) tables distributed by location_id, colocated (\(distributed.joined(separator: ", "))); \(reference.count) reference tables (\(reference.joined(separator: ", "))); shards per node: \(nodes)"
    }
}

/// The PostgreSQL schema's migrations and checks.
public enum PostgresSchema {
    /// The advisory lock key migrations run under (location locks use location ids, all > 0).
    static let migrationLock: Int32 = 0

    static let createTable = """
        CREATE TABLE IF NOT EXISTS schema_migrations (
            name       text   NOT NULL PRIMARY KEY,
            checksum   text   NOT NULL,
            applied_at bigint NOT NULL
        )
        """

    /// The tables of the connection's current schema that no extension owns.
    static func tables(on db: PostgresConnection) throws -> [String] {
        try db.rows(
            """
            SELECT c.relname FROM pg_class c
            WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
              AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype = 'e')
            ORDER BY c.relname
            """
        ) { $0.string(0) }
    }

    /// The migrations recorded, in order; throws `.foreign` when the schema is another application's.
    public static func applied(on db: PostgresConnection) throws -> [(name: String, checksum: String)] {
        // Every command opens with this, so a wxdb database is recognised from schema_migrations alone:
        // listing the schema's tables costs a catalogue scan (about 10 ms on a Citus coordinator's cold
        // session) and is only needed to tell an empty database from another application's.
        let columns = Set(
            try db.rows(
                """
                SELECT attname FROM pg_attribute
                WHERE attrelid = to_regclass(quote_ident(current_schema()) || '.schema_migrations')
                  AND attnum > 0 AND NOT attisdropped
                """
            ) { $0.string(0) })
        if columns.isEmpty {
            let present = try tables(on: db)
            if !present.isEmpty { throw PostgresSchemaError.foreign(target: db.target, tables: present) }
            return []
        }
        // Another framework's schema_migrations (Rails: one `version` column) is not wxdb's.
        guard columns == ["name", "checksum", "applied_at"] else {
            throw PostgresSchemaError.foreign(target: db.target, tables: try tables(on: db))
        }
        let records = try db.rows("SELECT name, checksum FROM schema_migrations ORDER BY name") {
            (name: $0.string(0), checksum: $0.string(1))
        }
        if records.isEmpty {
            let present = try tables(on: db)
            if present != ["schema_migrations"] {
                throw PostgresSchemaError.foreign(target: db.target, tables: present)
            }
        }
        return records
    }

    /// Throws when the database is not one this build can use; writes nothing.
    public static func check(_ db: PostgresConnection, migrations: [SchemaMigration] = migrations) throws {
        try check(records: applied(on: db), target: db.target, migrations: migrations)
    }

    static func check(records: [(name: String, checksum: String)], target: String, migrations: [SchemaMigration])
        throws
    {
        let known = Dictionary(uniqueKeysWithValues: migrations.map { ($0.name, $0.checksum) })
        let recorded = Set(records.map(\.name))
        if let latest = migrations.last(where: { recorded.contains($0.name) }),
            let gap = migrations.first(where: { !recorded.contains($0.name) && $0.name < latest.name })
        {
            throw PostgresSchemaError.missingRecord(name: gap.name, later: latest.name, target: target)
        }
        for record in records {
            guard let checksum = known[record.name] else {
                throw PostgresSchemaError.unknownMigration(name: record.name, target: target)
            }
            guard checksum == record.checksum else {
                throw PostgresSchemaError.checksumMismatch(name: record.name, target: target)
            }
        }
    }

    /// The names of the migrations not yet applied (after the same checks as `check`).
    public static func pending(on db: PostgresConnection, migrations: [SchemaMigration] = migrations) throws
        -> [String]
    {
        let records = try applied(on: db)
        try check(records: records, target: db.target, migrations: migrations)
        let done = Set(records.map(\.name))
        return migrations.map(\.name).filter { !done.contains($0) }
    }

    /// Checks, then applies what is pending, each migration in its own transaction under the
    /// migration lock (a second process waits, then finds it applied and skips it).
    @discardableResult
    public static func migrate(
        _ db: PostgresConnection, now: Int64, migrations: [SchemaMigration] = migrations
    ) throws -> PostgresMigrationOutcome {
        var outcome = PostgresMigrationOutcome()
        let records = try applied(on: db)
        try check(records: records, target: db.target, migrations: migrations)
        var done = Set(records.map(\.name))
        for migration in migrations where !done.contains(migration.name) {
            let appliedNow = try db.transaction { () throws -> Bool in
                try db.lockForTransaction(migrationLock)
                // Under the lock, what another process did meanwhile is visible: check again.
                let records = try applied(on: db)
                try check(records: records, target: db.target, migrations: migrations)
                guard !records.contains(where: { $0.name == migration.name }) else { return false }
                try db.execute(createTable)
                try db.execute(migration.sql)
                try db.run(
                    "INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ($1, $2, $3)",
                    [.text(migration.name), .text(migration.checksum), .integer(now)])
                return true
            }
            if appliedNow { outcome.applied.append(migration.name) }
            done.insert(migration.name)
        }
        if !outcome.applied.isEmpty { outcome.distribution = try distribution(on: db) }
        return outcome
    }

    /// The engine as `doctor` reports it: the server's version and, on Citus, the Citus version.
    public static func engine(on db: PostgresConnection) throws -> String {
        let server = try db.scalarText("SHOW server_version") ?? String(db.serverVersion)
        if let citus = try db.scalarText("SELECT extversion FROM pg_extension WHERE extname = 'citus'") {
            return "PostgreSQL \(server) with Citus \(citus)"
        }
        return "PostgreSQL \(server)"
    }

    /// How wxdb's tables are spread over Citus, or nil without the citus extension.
    public static func distribution(on db: PostgresConnection) throws -> PostgresDistribution? {
        guard try db.scalarInt("SELECT count(*) FROM pg_extension WHERE extname = 'citus'") ?? 0 > 0 else {
            return nil
        }
        // pg_dist_partition: 'h' is hash-distributed, 'n' with replication model 't' a reference table.
        let tables = try db.rows(
            """
            SELECT c.relname::text, CASE WHEN p.partmethod = 'h' THEN 'distributed' WHEN p.repmodel = 't' THEN 'reference' ELSE 'other' END
            FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
            WHERE c.relnamespace = current_schema()::regnamespace ORDER BY c.relname
            """
        ) { (name: $0.string(0), kind: $0.string(1)) }
        let nodes = try db.rows(
            """
            SELECT s.nodename || ':' || s.nodeport, count(*) FROM pg_catalog.citus_shards s
            JOIN pg_class c ON c.oid = s.table_name
            WHERE c.relnamespace = current_schema()::regnamespace AND s.citus_table_type = 'distributed'
            GROUP BY s.nodename, s.nodeport ORDER BY s.nodename, s.nodeport
            """
        ) { (node: $0.string(0), shards: Int($0.int64(1))) }
        return PostgresDistribution(
            distributed: tables.filter { $0.kind == "distributed" }.map(\.name),
            reference: tables.filter { $0.kind == "reference" }.map(\.name),
            shardsPerNode: nodes)
    }
}
