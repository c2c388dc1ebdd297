import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxPostgresStore
import WxStore

private let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures")

/// A fresh, migrated wxdb database on the test server.
func freshEngine() throws -> (PostgresEngine, conninfo: String) {
    let server = try PostgresServer.shared()
    let conninfo = server.conninfo(database: try server.createDatabase("engine"))
    return (try PostgresEngine(conninfo: conninfo, now: 1_700_000_000), conninfo)
}

/// Berlin's multi-model response (best_match and gfs_seamless, hourly and daily).
func berlinResponse() throws -> ForecastResponse {
    let body = try Data(
        contentsOf: fixtures.appendingPathComponent(
            "forecast-multi-model-best_match-gfs_seamless-current-minutely15-hourly-daily-berlin.json"))
    return try ForecastDecoder.decodeSingle(Array(body), defaultModel: "best_match")
}

@Suite(
    "PostgreSQL engine: locations and runs",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresEngineTests {
    @Test("locations get ids 1, 2, …; a duplicate name or a bad coordinate is refused as on SQLite")
    func locations() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 5)
        let oslo = try engine.addLocation(
            name: "Oslo", latitude: 59.9, longitude: 10.7, elevation: nil, timezone: "GMT",
            models: ["icon_seamless", "gfs_seamless"], now: 6)
        #expect([berlin.id, oslo.id] == [1, 2])
        #expect(try engine.locations() == [berlin, oslo])
        #expect(try engine.location(named: "Oslo")?.models == ["icon_seamless", "gfs_seamless"])
        #expect(throws: LocationError.duplicate("Berlin")) {
            try engine.addLocation(
                name: "Berlin", latitude: 0, longitude: 0, elevation: nil, timezone: "GMT", models: [], now: 7)
        }
        #expect(throws: LocationError.self) {
            try engine.addLocation(
                name: "Nowhere", latitude: 91, longitude: 0, elevation: nil, timezone: "GMT", models: [], now: 7)
        }
        #expect(try engine.locations().count == 2)
    }

    @Test(
        "a response is stored whole: a run per model with every hour and day, by COPY; the same content again is 'repeated'"
    )
    func storesRuns() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "GMT", models: [], now: 0)
        let response = try berlinResponse()
        let fetch = FetchRecord(fetchedAt: 1_700_000_000, origin: .fetch, request: "https://api/forecast?x=1")
        let first = try engine.storeRuns(response, for: berlin, fetch: fetch)
        #expect(first.map(\.kind) == Array(repeating: .stored, count: response.models.count))
        #expect(first.map(\.runID) == Array(1...Int64(response.models.count)))
        let hours = response.models.reduce(0) { $0 + Set($1.hourlyTimes).count }
        #expect(try engine.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == Int64(hours))
        #expect(try engine.db.scalarInt("SELECT sum(hour_count) FROM forecast_runs") == Int64(hours))
        // The values are the decoded ones, bit for bit.
        let model = response.models[0]
        let column = try #require(model.hourly.firstIndex { $0 != nil })
        let stored = try engine.db.rows(
            "SELECT " + Variables.hourlyNames[column]
                + " FROM hourly_forecasts WHERE location_id = $1 AND run_id = 1 ORDER BY valid_time",
            [.integer(berlin.id)]
        ) { $0.optionalDouble(0) }
        #expect(!stored.isEmpty)
        #expect(stored.map { $0?.bitPattern } == model.hourly[column]!.map { $0?.bitPattern })
        let again = try engine.storeRuns(
            response, for: berlin, fetch: FetchRecord(fetchedAt: 1_700_003_600, origin: .fetch))
        #expect(again.map(\.kind) == Array(repeating: .repeated, count: response.models.count))
        #expect(again.map(\.runID) == first.map(\.runID))
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == Int64(response.models.count))
        #expect(
            try engine.db.scalarInt("SELECT count(*) FROM fetch_log WHERE location_id = $1", [.integer(berlin.id)])
                == Int64(2 * response.models.count))
        // Removing the location removes its runs, rows and fetch log.
        try engine.removeLocation(named: "Berlin")
        for table in ["forecast_runs", "hourly_forecasts", "daily_forecasts", "fetch_log", "run_content_hashes"] {
            #expect(try engine.db.scalarInt("SELECT count(*) FROM " + table) == 0, "\(table)")
        }
    }

    @Test("a store that fails partway leaves nothing: no run, no hour, no fetch-log row")
    func allOrNothing() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "GMT", models: [], now: 0)
        // The fetch-log row (written after each model's hours) carries text PostgreSQL refuses.
        let fetch = FetchRecord(fetchedAt: 1_700_000_000, origin: .fetch, request: "bad\u{0}request")
        #expect(throws: PostgresError.self) { try engine.storeRuns(try berlinResponse(), for: berlin, fetch: fetch) }
        for table in ["forecast_runs", "hourly_forecasts", "daily_forecasts", "fetch_log", "run_content_hashes"] {
            #expect(try engine.db.scalarInt("SELECT count(*) FROM " + table) == 0, "\(table)")
        }
        // The counters rolled back too: the next run is run 1.
        let stored = try engine.storeRuns(
            try berlinResponse(), for: berlin, fetch: FetchRecord(fetchedAt: 1, origin: .fetch))
        #expect(stored.first?.runID == 1)
    }

    @Test("four processes storing the same response for one location at once store it once")
    func concurrentStores() async throws {
        let (engine, conninfo) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "GMT", models: [], now: 0)
        let response = try berlinResponse()
        let kinds = try await withThrowingTaskGroup(of: [StoreOutcome.Kind].self) { group in
            for index in 0..<4 {
                group.addTask {
                    let mine = try PostgresEngine(conninfo: conninfo, now: 0)
                    return try mine.storeRuns(
                        response, for: berlin,
                        fetch: FetchRecord(fetchedAt: 1_700_000_000 + Int64(index), origin: .fetch)
                    ).map(\.kind)
                }
            }
            return try await group.reduce(into: [StoreOutcome.Kind]()) { $0 += $1 }
        }
        #expect(kinds.filter { $0 == .stored }.count == response.models.count)
        #expect(kinds.filter { $0 == .repeated }.count == 3 * response.models.count)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == Int64(response.models.count))
        #expect(try engine.db.scalarInt("SELECT count(DISTINCT id) FROM fetch_log") == Int64(4 * response.models.count))
    }

    @Test("an ingest's location lock is held by one process at a time")
    func locationLocks() throws {
        let (a, conninfo) = try freshEngine()
        let b = try PostgresEngine(conninfo: conninfo, now: 0)
        #expect(try a.tryLockLocation(3))
        #expect(try !b.tryLockLocation(3))
        #expect(try b.tryLockLocation(4))
        try a.unlockLocation(3)
        #expect(try b.tryLockLocation(3))
    }
}
