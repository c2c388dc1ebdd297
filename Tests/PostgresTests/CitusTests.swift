import Foundation
import Testing
import WxPostgres
import WxPostgresStore

/// The coordinator of a Citus cluster (`../shared/citus/citus-cluster start` prints its URL), or nil.
private let citusURL = ProcessInfo.processInfo.environment["WXDB_CITUS_URL"].flatMap { $0.isEmpty ? nil : $0 }

@Suite(
    "PostgreSQL schema on Citus",
    .enabled(
        if: citusURL != nil,
        "needs a Citus cluster: ../shared/citus/citus-cluster start, then WXDB_CITUS_URL=postgresql://postgres@127.0.0.1:9700/postgres"
    ))
struct CitusTests {
    @Test("the first migration distributes the growing tables by location_id, colocated, and says so")
    func distributes() throws {
        let url = try #require(citusURL)
        let schema = "wx_\(UUID().uuidString.prefix(8).lowercased())"
        let admin = try PostgresConnection(conninfo: url)
        try admin.execute("CREATE SCHEMA \(schema)")
        defer { try? admin.execute("DROP SCHEMA \(schema) CASCADE") }
        let separator = url.contains("?") ? "&" : "?"
        let db = try PostgresConnection(conninfo: url + separator + "options=-csearch_path%3D" + schema)
        let outcome = try PostgresSchema.migrate(db, now: 0)
        let distribution = try #require(outcome.distribution)
        // What the migrations distribute, read from their SQL, so a later migration's table counts too.
        let distributed = Self.tables(calledWith: "create_distributed_table")
        let reference = Self.tables(calledWith: "create_reference_table")
        #expect(
            distributed.isSuperset(of: [
                "location_counters", "forecast_runs", "hourly_forecasts_f4", "hourly_forecasts_f8",
                "daily_forecasts_f4",
                "daily_forecasts_f8", "observations",
                "run_content_hashes", "fetch_log", "verification_summaries", "ensemble_runs", "ensemble_values",
                "ensemble_summaries"
            ]), "\(distributed.sorted())")
        #expect(Set(distribution.distributed.map { String($0.split(separator: ".").last!) }) == distributed)
        #expect(
            Set(distribution.reference.map { String($0.split(separator: ".").last!) }).isSuperset(of: reference))
        #expect(reference.isSuperset(of: ["locations", "schema_migrations", "verification_sums_pending"]))
        #expect(distribution.shardsPerNode.filter { $0.shards > 0 }.count >= 2, "\(distribution.shardsPerNode)")
        #expect(
            outcome.note?.contains("Citus: \(distributed.count) tables distributed by location_id") == true,
            "\(outcome.note ?? "")")
        #expect(try PostgresSchema.engine(on: db).contains("Citus"))
        // A run's hours join it on (location_id, run_id) across the shards, and removing the
        // location removes them on every worker.
        try db.execute(
            """
            INSERT INTO locations (id, name, latitude, longitude, created_at) VALUES (1, 'a', 1, 1, 0), (2, 'b', 2, 2, 0);
            INSERT INTO forecast_runs (location_id, id, model, issued_at, issued_at_source, fetched_at, utc_offset_seconds, timezone, content_hash)
                VALUES (1, 1, 'm', 0, 'model_run', 0, 0, 'GMT', 1), (2, 1, 'm', 0, 'model_run', 0, 0, 'GMT', 1);
            INSERT INTO hourly_forecasts_f4 (location_id, run_id, valid_time, temperature_2m) VALUES (1, 1, 3600, 1), (2, 1, 3600, 2);
            """)
        #expect(try db.scalarInt("SELECT count(*) FROM hourly_forecasts_with_lead") == 2)
        try db.run("DELETE FROM locations WHERE id = 1")
        #expect(try db.scalarInt("SELECT count(*) FROM forecast_runs") == 1)
        // The hours have no key to their run since migration 0005: wxdb deletes them itself.
        #expect(try db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 2)
        try db.run("DELETE FROM hourly_forecasts_f4 WHERE location_id = 1")
        #expect(try db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 1)
    }

    /// The tables the embedded migrations pass to `function` (`create_distributed_table('name', …)`).
    static func tables(calledWith function: String) -> Set<String> {
        var names = Set<String>()
        for migration in PostgresSchema.migrations {
            for part in migration.sql.split(separator: function + "('").dropFirst() {
                if let end = part.firstIndex(of: "'") { names.insert(String(part[..<end])) }
            }
            // A later migration's `ALTER TABLE a RENAME TO b` keeps the distribution under the new name.
            for part in migration.sql.split(separator: "ALTER TABLE ").dropFirst() {
                let words = part.split(separator: " ", maxSplits: 4)
                guard words.count >= 4, words[1] == "RENAME", words[2] == "TO" else { continue }
                let old = String(words[0])
                let new = String(words[3].prefix { $0.isLetter || $0.isNumber || $0 == "_" })
                if names.remove(old) != nil { names.insert(new) }
            }
        }
        return names
    }
}
