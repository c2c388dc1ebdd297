import Foundation
import TestSupport
import Testing
import WxPostgres
import WxPostgresStore

@Suite(
    "A PostgreSQL --db through the CLI",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresCLITests {
    @Test("doctor names the engine, the server version, the client and the schema; WXDB_DB selects it too")
    func doctor() async throws {
        let server = try PostgresServer.shared()
        let name = try server.createDatabase("cli")
        let box = Sandbox()
        let empty = await box.run("doctor", "--db", server.conninfo(database: name))
        #expect(empty.code == 0, "\(empty.stderrText)")
        #expect(empty.stdout.contains("engine            PostgreSQL 15"))
        #expect(empty.stdout.contains("no wxdb schema yet"))
        #expect(empty.stdout.contains("citus             not installed"))
        try PostgresSchema.migrate(PostgresConnection(conninfo: server.conninfo(database: name)), now: 0)
        box.environment["WXDB_DB"] = server.conninfo(database: name)
        let migrated = await box.run("doctor", "--format", "json")
        #expect(migrated.code == 0, "\(migrated.stderrText)")
        #expect(migrated.stdout.contains("\"ok\": true") || migrated.stdout.contains("\"ok\":true"))
        #expect(migrated.stdout.contains("\(PostgresSchema.migrations.last!.name) (current)"))
    }

    @Test(
        "doctor --deep recomputes the kept sums from the pairs on PostgreSQL: none yet is ok, a pair without its sums is DIFFERENT and exit 1; --repair rewrites it"
    )
    func doctorDeep() async throws {
        let server = try PostgresServer.shared()
        let conninfo = server.conninfo(database: try server.createDatabase("cli"))
        let engine = try PostgresEngine(conninfo: conninfo, now: 0)
        let box = Sandbox()
        let empty = await box.run("doctor", "--deep", "--db", conninfo)
        #expect(empty.code == 0, "\(empty.stderrText)")
        #expect(empty.stdout.contains("verification sums ok: 0 group(s) match the rows"), "\(empty.stdout)")
        #expect(empty.stdout.contains("verify by day     ok"), "\(empty.stdout)")
        // One run hour and the observation at it, stored without the sums a write keeps.
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: nil, timezone: "GMT", models: [], now: 0)
        let id: PostgresValue = .integer(berlin.id)
        try engine.db.run(
            """
            INSERT INTO forecast_runs (location_id, id, model, issued_at, issued_at_source, fetched_at,
                                       utc_offset_seconds, timezone, content_hash, first_valid_time, last_valid_time, hour_count)
            VALUES ($1, 1, 'best_match', 1700000000, 'first_fetch', 1700000000, 0, 'GMT', 7, 1700010000, 1700010000, 1)
            """, [id])
        try engine.db.run(
            "INSERT INTO hourly_forecasts_f4 (location_id, run_id, valid_time, temperature_2m) VALUES ($1, 1, 1700010000, 5.5)",
            [id])
        try engine.db.run(
            "INSERT INTO observations (location_id, source, time, temperature_2m, recorded_at) VALUES ($1, 'era5', 1700010000, 4.0, 0)",
            [id])
        let missing = await box.run("doctor", "--deep", "--db", conninfo)
        #expect(missing.code == 1)
        #expect(missing.stdout.contains("verification sums DIFFERENT: 1 of 1 group(s)"), "\(missing.stdout)")
        #expect(missing.stdout.contains("Berlin, best_match, era5, temperature_2m"), "\(missing.stdout)")
        #expect(missing.stderrText.contains("Error: 1 of 1 verification sum group(s) differ from the stored rows"))
        #expect(try engine.db.scalarInt("SELECT count(*) FROM verification_summaries") == 0)
        let repair = await box.run("doctor", "--repair", "--db", conninfo)
        #expect(repair.code == 0, "\(repair.stderrText)")
        #expect(repair.stdout.contains("repaired 1 of 1 group(s) from the rows"), "\(repair.stdout)")
        #expect(try engine.db.scalarInt("SELECT count(*) FROM verification_summaries") == 1)
        let after = await box.run("doctor", "--deep", "--db", conninfo)
        #expect(after.code == 0, "\(after.stderrText)")
        #expect(after.stdout.contains("verification sums ok: 1 group(s) match the rows"), "\(after.stdout)")
    }

    @Test("doctor on another application's database exits 1, names it, and changes nothing")
    func doctorForeign() async throws {
        let server = try PostgresServer.shared()
        let name = try server.createDatabase("cli")
        let db = try PostgresConnection(conninfo: server.conninfo(database: name))
        try db.execute("CREATE TABLE invoices (id bigint)")
        let result = await Sandbox().run("doctor", "--db", server.conninfo(database: name))
        #expect(result.code == 1)
        #expect(result.stdout.contains("not a wxdb one"))
        #expect(try db.scalarInt("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'") == 1)
    }

    @Test(
        "a server that is not running or a wrong password is a clear Error: without the password",
        arguments: ["locations list", "doctor", "query verify --location X"])
    func connectionErrors(command: String) async throws {
        let server = try PostgresServer.shared()
        let box = Sandbox()
        let words = command.split(separator: " ").map(String.init)
        let down = await box.run(words + ["--db", "postgresql://wxdb:hunter2secret@127.0.0.1:1/wx"])
        #expect(down.code == 1)
        #expect(down.stderrText.contains("Error: no PostgreSQL server answers at postgresql://wxdb@127.0.0.1:1/wx"))
        #expect(!(down.stdout + down.stderrText).contains("hunter2secret"))
        let wrong = await box.run(words + ["--db", server.tcpURI(password: "wrong-password-42")])
        #expect(wrong.code == 1)
        #expect(wrong.stderrText.contains("passfile"))
        #expect(!(wrong.stdout + wrong.stderrText).contains("wrong-password-42"))
    }

    @Test("stats on PostgreSQL prints the database's size on the server, not 0")
    func statsSize() async throws {
        let server = try PostgresServer.shared()
        let name = try server.createDatabase("cli")
        let box = Sandbox()
        let db = server.conninfo(database: name)
        let added = await box.run("locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--db", db)
        #expect(added.code == 0, "\(added.stderrText)")
        let stats = await box.run("stats", "--db", db, "--format", "json")
        #expect(stats.code == 0, "\(stats.stderrText)")
        let object = try JSONSerialization.jsonObject(with: Data(stats.stdout.utf8)) as? [String: Any]
        let bytes = (object?["bytes"] as? NSNumber)?.int64Value ?? 0
        let size =
            try PostgresConnection(conninfo: db).scalarInt("SELECT pg_database_size(current_database())") ?? -1
        // A new database holds the catalogs: megabytes, and within a few pages of what the server says now.
        #expect(bytes > 1_000_000, "\(stats.stdout)")
        #expect(abs(bytes - size) < 1_000_000, "stats \(bytes), server \(size)")
    }

    @Test("locations add goes through the PostgreSQL engine behind the Store")
    func locationsThroughTheEngine() async throws {
        let server = try PostgresServer.shared()
        let name = try server.createDatabase("cli")
        let box = Sandbox()
        let db = server.conninfo(database: name)
        let added = await box.run("locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--db", db)
        #expect(added.code == 0, "\(added.stderrText)")
        let names = try PostgresConnection(conninfo: db).rows("SELECT name FROM locations", []) { $0.string(0) }
        #expect(names == ["Berlin"])
    }

    @Test("a schedule for a PostgreSQL --db carries the connection string without its password")
    func schedule() async throws {
        let result = await Sandbox().run("schedule", "--cron", "--db", "postgresql://wx:s3cretpw@db.example/wx")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stdout.contains("postgresql://wx@db.example/wx"))
        #expect(!(result.stdout + result.stderrText).contains("s3cretpw"))
        #expect(result.stderrText.contains("pgpass"))
    }
}
