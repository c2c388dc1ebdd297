import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxStore

@testable import WxPostgresStore

/// Waits (polling, no time limit of its own) until some backend of this test's database waits for
/// an advisory lock (other tests run at once on the same server), and returns its process id.
func waitingBackend(_ admin: PostgresConnection) throws -> Int64 {
    while true {
        if let pid = try admin.scalarInt(
            """
            SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
              AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) LIMIT 1
            """)
        {
            return pid
        }
        usleep(20_000)
    }
}

@Suite(
    "PostgreSQL engine: faults during writes",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresFaultTests {
    /// A fresh database with Berlin, a storer's engine and an admin engine holding Berlin's lock.
    func setUp() throws -> (
        storer: PostgresEngine, admin: PostgresEngine, berlin: Location, response: ForecastResponse, conninfo: String
    ) {
        let (admin, conninfo) = try freshEngine()
        let berlin = try admin.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "GMT", models: [], now: 0)
        let storer = try PostgresEngine(conninfo: conninfo, now: 0)
        let response = try syntheticResponse(
            models: ["best_match", "gfs_seamless"], start: t0 - 24 * hour, hours: 96, seed: 1, current: t0)
        // Observations first, so the store has sums to keep as well.
        _ = try admin.saveObservations(
            response.models[1], through: .max, locationID: berlin.id, source: "era5", recordedAt: t0)
        #expect(try admin.tryLockLocation(berlin.id))
        return (storer, admin, berlin, response, conninfo)
    }

    func nothingStored(_ admin: PostgresEngine) throws {
        for table in ["forecast_runs", "hourly_forecasts", "run_content_hashes", "fetch_log", "verification_summaries"]
        {
            #expect(try admin.db.scalarInt("SELECT count(*) FROM " + table) == 0, "\(table)")
        }
        #expect(try admin.db.scalarInt("SELECT count(*) FROM observations WHERE source <> 'era5'") == 0)
    }

    @Test("the connection killed mid-ingest (pg_terminate_backend): a clear error, and the run is absent")
    func killedMidIngest() async throws {
        let (_, admin, berlin, response, conninfo) = try setUp()
        let task = Task { () -> Error? in
            do {
                let storer = try PostgresEngine(conninfo: conninfo, now: 0)
                _ = try storer.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
                return nil
            } catch { return error }
        }
        let pid = try waitingBackend(admin.db)
        #expect(try admin.db.firstRow("SELECT pg_terminate_backend($1)", [.integer(pid)]) { $0.bool(0) } == true)
        let error = await task.value
        #expect((error as? PostgresError)?.kind == .connectionLost, "\(String(describing: error))")
        #expect(error.map { "\($0)" }?.contains("run the command again") == true, "\(String(describing: error))")
        try admin.unlockLocation(berlin.id)
        try nothingStored(admin)
        // A new connection stores it whole.
        let again = try PostgresEngine(conninfo: conninfo, now: 0)
        #expect(try again.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch)).count == 2)
    }

    @Test("a statement timeout mid-ingest: a clear error, nothing stored, the connection still usable")
    func statementTimeout() async throws {
        let (storer, admin, berlin, response, _) = try setUp()
        try storer.db.execute("SET statement_timeout = '50ms'")
        #expect(throws: PostgresError.self) {
            try storer.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        }
        do {
            _ = try storer.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        } catch let error as PostgresError {
            #expect(error.kind == .statementTimeout)
            #expect("\(error)".contains("statement_timeout"))
        }
        try nothingStored(admin)
        try admin.unlockLocation(berlin.id)
        try storer.db.execute("SET statement_timeout = 0")
        #expect(try storer.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch)).count == 2)
        #expect(try admin.db.scalarInt("SELECT count(*) FROM forecast_runs") == 2)
    }

    @Test(
        "the session ended between two runs (as a server restart ends it): the next store says so and stores nothing; a new connection stores it"
    )
    func sessionEndedBetweenRuns() throws {
        let (storer, admin, berlin, first, conninfo) = try setUp()
        try admin.unlockLocation(berlin.id)
        _ = try storer.store(first, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        let runs = try admin.db.scalarInt("SELECT count(*) FROM forecast_runs")
        let kept = try keptRows(admin)
        #expect(
            try admin.db.firstRow("SELECT pg_terminate_backend($1)", [.integer(Int64(storer.db.backendPID))]) {
                $0.bool(0)
            } == true)
        let second = try syntheticResponse(
            models: ["best_match", "gfs_seamless"], start: t0 - 18 * hour, hours: 96, seed: 2, current: t0 + 6 * hour)
        do {
            _ = try storer.store(second, for: berlin, fetch: FetchRecord(fetchedAt: t0 + 6 * hour, origin: .fetch))
            Issue.record("a store on an ended session succeeded")
        } catch let error as PostgresError {
            #expect(error.kind == .connectionLost)
            #expect("\(error)".contains("run the command again"))
        }
        #expect(try admin.db.scalarInt("SELECT count(*) FROM forecast_runs") == runs)
        #expect(try keptRows(admin) == kept)
        let next = try PostgresEngine(conninfo: conninfo, now: 0)
        _ = try next.store(second, for: berlin, fetch: FetchRecord(fetchedAt: t0 + 6 * hour, origin: .fetch))
        #expect(try admin.db.scalarInt("SELECT count(*) FROM forecast_runs") == (runs ?? 0) + 2)
        let diff = differences(try keptRows(admin), try recomputed(admin, location: berlin.id))
        #expect(diff.isEmpty, "\(diff.count) differ: \(diff.prefix(12))")
    }
}
