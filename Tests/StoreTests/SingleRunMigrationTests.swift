import Foundation
import TestSupport
import Testing

@testable import WxSQLite
@testable import WxStore
@testable import WxStoreSQLite

@Suite("Migration 0009: single_run as an issue-time source and a fetch kind")
struct SingleRunMigrationTests {
    @Test("a database from before 0009 keeps every run, row, hash and fetch under the same ids, and takes single runs")
    func keepsEverything() throws {
        let path = temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let db = try Database(path: path)
        let before = Schema.migrations.filter { $0.name < "0009" }
        try Migrator(migrations: before).migrate(db, now: 1)
        try db.execute(
            """
            INSERT INTO locations (id, name, latitude, longitude, created_at) VALUES (1, 'A', 1, 2, 0);
            INSERT INTO forecast_runs (id, location_id, model, issued_at, issued_at_source, fetched_at,
                utc_offset_seconds, timezone, content_hash, hour_count) VALUES (7, 1, 'm', 100, 'model_run', 200, 0, 'GMT', 42, 1);
            INSERT INTO hourly_forecasts (run_id, valid_time, temperature_2m) VALUES (7, 3600, 1.5);
            INSERT INTO daily_forecasts (run_id, date) VALUES (7, '1970-01-01');
            INSERT INTO run_content_hashes (location_id, model, content_hash, run_id) VALUES (1, 'm', 42, 7);
            INSERT INTO fetch_log (id, attempted_at, location_id, model, origin, outcome, run_id, api_weight)
                VALUES (3, 200, 1, 'm', 'fetch', 'stored', 7, 2.5);
            """)
        let applied = try Migrator(migrations: Schema.migrations).migrate(db, now: 2)
        #expect(applied.contains("0009_single_run_kinds"))
        #expect(try db.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try db.scalarInt("SELECT count(*) FROM hourly_forecasts WHERE run_id = 7") == 1)
        #expect(try db.scalarInt("SELECT count(*) FROM daily_forecasts WHERE run_id = 7") == 1)
        #expect(try db.scalarInt("SELECT count(*) FROM run_content_hashes WHERE run_id = 7") == 1)
        #expect(try db.scalarInt("SELECT run_id FROM fetch_log WHERE id = 3") == 7)
        #expect(try db.scalarInt("SELECT count(*) FROM forecast_observation_pairs") == 0)
        #expect(try db.rows("PRAGMA foreign_key_check") { $0.string(0) }.isEmpty)
        try db.execute(
            """
            INSERT INTO forecast_runs (location_id, model, issued_at, issued_at_source, fetched_at,
                utc_offset_seconds, timezone, content_hash) VALUES (1, 'm', 300, 'single_run', 400, 0, 'GMT', 43);
            INSERT INTO fetch_log (attempted_at, location_id, model, origin, outcome) VALUES (400, 1, 'm', 'single_run', 'stored');
            """)
        // Cascades still work on the rebuilt table.
        try db.execute("DELETE FROM forecast_runs WHERE id = 7")
        #expect(try db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 0)
        #expect(try db.scalarInt("SELECT run_id FROM fetch_log WHERE id = 3") == nil)
    }
}
