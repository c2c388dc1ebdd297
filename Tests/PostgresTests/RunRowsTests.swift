import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxSQLite
import WxStore
import WxStoreSQLite

@testable import WxPostgresStore

// The hourly and daily rows on PostgreSQL have no foreign key to their run (migration 0005): wxdb
// deletes them itself wherever runs or their rows go, and `doctor --deep` finds rows left without a
// run. These tests hold that to what SQLite, which keeps its foreign keys, does.

/// Rows of the tables a run's deletion touches, counted from the rows themselves.
private let runTables = ["forecast_runs", "hourly_forecasts", "daily_forecasts", "run_content_hashes", "fetch_log"]

/// Berlin's two-model response (hourly and daily rows) and two later best_match runs (hourly) for
/// each of two locations, the same on every engine.
private func storeRuns(_ store: any Store) throws {
    for (name, timezone) in [("Berlin", "Europe/Berlin"), ("Oslo", "GMT")] {
        let location = try store.addLocation(
            name: name, latitude: 52.52, longitude: 13.41, elevation: 34, timezone: timezone, models: [], now: 0)
        _ = try store.store(try berlinResponse(), for: location, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        for index in 1...2 {
            let response = try syntheticResponse(
                models: ["best_match"], start: t0 + Int64(index) * 6 * hour, hours: 48, seed: index, current: t0)
            _ = try store.store(
                response, for: location, fetch: FetchRecord(fetchedAt: t0 + Int64(index) * 6 * hour, origin: .fetch))
        }
    }
}

@Suite(
    "PostgreSQL engine: hourly and daily rows without a foreign key to their run",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct RunRowsTests {
    @Test("rows whose run does not exist are found and, with repair, deleted; the rows of stored runs stay")
    func orphans() throws {
        let (engine, _) = try freshEngine()
        try storeRuns(engine)
        #expect(try engine.orphanRunRows(repair: false) == OrphanRunRows())
        let stored = try engine.db.scalarInt("SELECT count(*) FROM hourly_forecasts") ?? 0
        let storedDays = try engine.db.scalarInt("SELECT count(*) FROM daily_forecasts") ?? 0
        // Rows of a run that was never stored (the old schema's foreign key refused them).
        try engine.db.run(
            "INSERT INTO hourly_forecasts_f4 (location_id, run_id, valid_time, temperature_2m) VALUES (1, 99, 1, 2.5), (1, 99, 3601, 3.5)"
        )
        try engine.db.run("INSERT INTO hourly_forecasts_f8 (location_id, run_id, valid_time) VALUES (2, 7, 1)")
        try engine.db.run("INSERT INTO daily_forecasts_f8 (location_id, run_id, date) VALUES (1, 99, '2026-01-01')")
        try engine.db.run("INSERT INTO daily_forecasts_f4 (location_id, run_id, date) VALUES (2, 7, '2026-01-02')")
        let found = try engine.orphanRunRows(repair: false)
        #expect(found.hourlyRows == 3 && found.dailyRows == 2)
        #expect(found.runs.map { [$0.location, $0.run] } == [[1, 99], [2, 7]])
        #expect(
            try engine.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == stored + 3, "a check deletes nothing")
        #expect(try engine.orphanRunRows(repair: true) == found)
        #expect(try engine.orphanRunRows(repair: false) == OrphanRunRows())
        #expect(try engine.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == stored)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM daily_forecasts") == storedDays)
        // The list the checks and deletes go through names every table of runs' rows the migrations made.
        let rowTables = try engine.db.rows(
            "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename ~ '^(hourly|daily)_forecasts'"
        ) { $0.string(0) }
        #expect(rowTables.sorted() == PostgresEngine.runRowTables.map(\.name).sorted())
    }

    @Test("prune and locations remove --purge delete exactly the rows they delete on SQLite, and leave no orphan")
    func pruneAndPurge() throws {
        let (engine, _) = try freshEngine()
        let path = Scratch.path("run-rows", suffix: ".sqlite")
        let sqlite = try SQLiteStore.open(path: path)
        let backdoor = try SQLiteBackdoor(path)
        let counts: [(String, (String) throws -> Int64)] = [
            ("PostgreSQL", { try engine.db.scalarInt("SELECT count(*) FROM " + $0) ?? -1 }),
            ("SQLite", { try backdoor.db.scalarInt("SELECT count(*) FROM " + $0) ?? -1 })
        ]
        func snapshot() throws -> [[Int64]] { try counts.map { count in try runTables.map { try count.1($0) } } }
        for store in [engine as any Store, sqlite as any Store] { try storeRuns(store) }
        let stored = try snapshot()
        #expect(stored[0] == stored[1], "\(stored)")
        #expect(stored[0][1] > 0 && stored[0][2] > 0)

        // Prune removes the rows of the runs before the latest of each location.
        var batches: [PruneBatch?] = []
        for store in [engine as any Store, sqlite as any Store] {
            batches.append(try store.pruneBatch(issuedBefore: 4_000_000_000, now: t0, limit: 100))
        }
        #expect(batches[0] == batches[1])
        #expect((batches[0]?.dailyRows ?? 0) > 0, "a run with daily rows is pruned")
        let pruned = try snapshot()
        #expect(pruned[0] == pruned[1], "\(pruned)")
        #expect(pruned[0][0] == stored[0][0], "the runs stay, marked pruned")
        #expect(pruned[0][1] < stored[0][1])
        #expect(try engine.orphanRunRows(repair: false) == OrphanRunRows())

        // Removing a location with its history removes its runs and their rows.
        let removed = try [engine as any Store, sqlite as any Store].map {
            try $0.removeLocation(named: "Berlin", purge: true)
        }
        #expect(removed[0] == removed[1])
        let purged = try snapshot()
        #expect(purged[0] == purged[1], "\(purged)")
        #expect(purged[0][1] > 0, "Oslo's rows stay")
        #expect(try engine.db.scalarInt("SELECT count(*) FROM hourly_forecasts WHERE location_id = 1") == 0)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM daily_forecasts WHERE location_id = 1") == 0)
        #expect(try engine.orphanRunRows(repair: false) == OrphanRunRows())
    }
}
