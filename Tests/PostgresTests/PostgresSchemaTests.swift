import Foundation
import TestSupport
import Testing
import WxPostgres
import WxPostgresStore
import WxSchemaMigration

private let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

@Suite("PostgreSQL migrations")
struct PostgresMigrationFileTests {
    @Test("the embedded PostgreSQL migrations are the files in Migrations/postgresql/, in order")
    func embeddedMatchFiles() throws {
        let folder = packageRoot.appendingPathComponent("Migrations/postgresql")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }
            .sorted()
        #expect(!files.isEmpty)
        #expect(
            files.map { String($0.dropLast(4)) } == PostgresSchema.migrations.map(\.name),
            "run Scripts/embed-migrations after adding a migration")
        for (file, migration) in zip(files, PostgresSchema.migrations) {
            var text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            if text.hasSuffix("\n") { text.removeLast() }
            #expect(text == migration.sql, "\(file) differs from its embedded copy: run Scripts/embed-migrations")
            // The checksum is carried, not computed at open: an edit re-embedded by hand would keep the old one.
            #expect(
                migration.checksum == SchemaMigration.checksum(of: migration.sql),
                "\(migration.name)'s carried checksum differs from its SQL's: run Scripts/embed-migrations")
        }
    }
}

@Suite(
    "PostgreSQL schema on a real server",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresSchemaTests {
    /// Every table and view of the current schema with its columns, and the rows of schema_migrations:
    /// what "left exactly as it was" compares.
    func snapshot(_ db: PostgresConnection) throws -> [String] {
        let columns = try db.rows(
            """
            SELECT table_name || '.' || column_name || ':' || data_type FROM information_schema.columns
            WHERE table_schema = current_schema() ORDER BY table_name, ordinal_position
            """
        ) { $0.string(0) }
        let hasMigrations =
            try db.scalarInt(
                "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'schema_migrations'"
            ) ?? 0
        let records =
            hasMigrations > 0
            ? try db.rows("SELECT row_to_json(s)::text FROM schema_migrations s ORDER BY 1") { $0.string(0) } : []
        return columns + records
    }

    @Test("a new database gets every migration once, recorded with its checksum; a second run applies none")
    func migratesOnce() throws {
        let (db, _) = try freshDatabase()
        let first = try PostgresSchema.migrate(db, now: 1_700_000_000)
        #expect(first.applied == PostgresSchema.migrations.map(\.name))
        #expect(first.distribution == nil)
        #expect(first.note?.hasPrefix("applied PostgreSQL migrations 0001_initial_schema") == true)
        let recorded = try db.rows("SELECT name, checksum FROM schema_migrations ORDER BY name") {
            [$0.string(0), $0.string(1)]
        }
        #expect(recorded == PostgresSchema.migrations.map { [$0.name, $0.checksum] })
        #expect(try PostgresSchema.migrate(db, now: 1_700_000_001).applied.isEmpty)
        #expect(try PostgresSchema.pending(on: db).isEmpty)
        #expect(try PostgresSchema.engine(on: db).hasPrefix("PostgreSQL 15"))
    }

    @Test("every primary key of a growing table starts with location_id")
    func keysIncludeLocation() throws {
        let (db, _) = try freshDatabase()
        try PostgresSchema.migrate(db, now: 0)
        let keys = try db.rows(
            """
            SELECT c.conrelid::regclass::text, a.attname FROM pg_constraint c
            JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
            WHERE c.contype IN ('p', 'u') AND c.connamespace = current_schema()::regnamespace
            ORDER BY 1
            """
        ) { ($0.string(0), $0.string(1)) }
        let reference: Set<String> = ["locations", "schema_migrations", "verification_sums_pending"]
        let growing = keys.filter { !reference.contains($0.0) }
        #expect(growing.count >= 8)
        for (table, first) in growing { #expect(first == "location_id", "\(table) is keyed by \(first) first") }
        // No sequence: ids are handed out per location, not by one node.
        #expect(try db.scalarInt("SELECT count(*) FROM pg_sequences WHERE schemaname = current_schema()") == 0)
    }

    @Test("the views pair forecasts with observations as SQLite's do")
    func views() throws {
        let (db, _) = try freshDatabase()
        try PostgresSchema.migrate(db, now: 0)
        try db.execute(
            """
            INSERT INTO locations (id, name, latitude, longitude, created_at) VALUES (1, 'Berlin', 52.5, 13.4, 0);
            INSERT INTO forecast_runs (location_id, id, model, issued_at, issued_at_source, fetched_at, utc_offset_seconds, timezone, content_hash)
                VALUES (1, 1, 'icon_d2', 1700000000, 'model_run', 1700000100, 0, 'GMT', 7);
            INSERT INTO hourly_forecasts_f4 (location_id, run_id, valid_time, temperature_2m) VALUES (1, 1, 1700005400, 3.5);
            INSERT INTO observations (location_id, source, time, temperature_2m, recorded_at) VALUES
                (1, 'era5', 1700005400, 2.25, 0), (1, 'analysis:icon_d2', 1700005400, 3.5, 0);
            """)
        let pairs = try db.rows(
            "SELECT location, source, issued_at_utc, valid_time_utc, lead_hours, forecast_temperature_2m, observed_temperature_2m FROM forecast_observation_pairs"
        ) { (0..<7).map($0.string) }
        #expect(pairs == [["Berlin", "era5", "2023-11-14T22:13:20Z", "2023-11-14T23:43:20Z", "1.5", "3.5", "2.25"]])
        // Removing the location removes its runs with it; their hours have no key to the run since
        // migration 0005 (wxdb deletes them itself: RunRowsTests), so the schema alone leaves them.
        try db.run("DELETE FROM locations WHERE id = 1")
        #expect(try db.scalarInt("SELECT count(*) FROM forecast_runs") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 1)
    }

    @Test("another application's database is refused and left exactly as it was")
    func foreignDatabase() throws {
        let (db, _) = try freshDatabase()
        try db.execute("CREATE TABLE users (id bigint PRIMARY KEY, email text); INSERT INTO users VALUES (1, 'a@b')")
        let before = try snapshot(db)
        let error = #expect(throws: PostgresSchemaError.self) { try PostgresSchema.migrate(db, now: 0) }
        #expect(error?.description.contains("not a wxdb one") == true)
        #expect(error?.description.contains("users") == true)
        #expect(try snapshot(db) == before)
    }

    @Test("another framework's schema_migrations table (Rails: one version column) is not taken for wxdb's")
    func railsDatabase() throws {
        let (db, _) = try freshDatabase()
        try db.execute(
            "CREATE TABLE schema_migrations (version text PRIMARY KEY); INSERT INTO schema_migrations VALUES ('20240101')"
        )
        let before = try snapshot(db)
        #expect(throws: PostgresSchemaError.self) { try PostgresSchema.migrate(db, now: 0) }
        #expect(try snapshot(db) == before)
    }

    @Test("a database a newer wxdb migrated is refused by name and left as it was")
    func newerSchema() throws {
        let (db, _) = try freshDatabase()
        try PostgresSchema.migrate(db, now: 0)
        try db.run("INSERT INTO schema_migrations VALUES ('9999_from_the_future', 'abc', 0)")
        let before = try snapshot(db)
        let error = #expect(throws: PostgresSchemaError.self) { try PostgresSchema.migrate(db, now: 0) }
        #expect(error == .unknownMigration(name: "9999_from_the_future", target: db.target))
        #expect(error?.description.contains("newer wxdb") == true)
        #expect(try snapshot(db) == before)
    }

    @Test("an edited migration is noticed by its checksum")
    func editedMigration() throws {
        let (db, _) = try freshDatabase()
        try PostgresSchema.migrate(db, now: 0)
        let edited = [
            SchemaMigration(name: "0001_initial_schema", sql: PostgresSchema.migrations[0].sql + "\n-- edited")
        ]
        #expect(throws: PostgresSchemaError.checksumMismatch(name: "0001_initial_schema", target: db.target)) {
            try PostgresSchema.migrate(db, now: 0, migrations: edited)
        }
    }

    @Test("a migration that fails halfway leaves nothing of itself")
    func failingMigration() throws {
        let (db, _) = try freshDatabase()
        let broken = [SchemaMigration(name: "0001_broken", sql: "CREATE TABLE half (i bigint); SELECT 1 / 0;")]
        #expect(throws: PostgresError.self) { try PostgresSchema.migrate(db, now: 0, migrations: broken) }
        #expect(try snapshot(db).isEmpty)
    }

    @Test("two processes migrating a new database at once apply each migration once")
    func concurrentMigrations() async throws {
        let server = try PostgresServer.shared()
        let name = try server.createDatabase()
        let conninfo = server.conninfo(database: name)
        let counts = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<3 {
                group.addTask {
                    let db = try PostgresConnection(conninfo: conninfo)
                    return try PostgresSchema.migrate(db, now: 0).applied.count
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(counts.reduce(0, +) == PostgresSchema.migrations.count)
        let db = try PostgresConnection(conninfo: conninfo)
        #expect(try db.scalarInt("SELECT count(*) FROM schema_migrations") == Int64(PostgresSchema.migrations.count))
    }
}
