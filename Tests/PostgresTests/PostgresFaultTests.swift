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
        "the session ended between two runs (as a server restart ends it): the next store reconnects and stores it whole"
    )
    func sessionEndedBetweenRuns() throws {
        let (storer, admin, berlin, first, _) = try setUp()
        try admin.unlockLocation(berlin.id)
        _ = try storer.store(first, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        let runs = try admin.db.scalarInt("SELECT count(*) FROM forecast_runs")
        #expect(
            try admin.db.firstRow("SELECT pg_terminate_backend($1)", [.integer(Int64(storer.db.backendPID))]) {
                $0.bool(0)
            } == true)
        // The session is gone once the backend's process is: wait for that, as a restart waits.
        let old = Int64(storer.db.backendPID)
        while try admin.db.scalarInt("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", [.integer(old)]) != 0 {
            usleep(20_000)
        }
        let second = try syntheticResponse(
            models: ["best_match", "gfs_seamless"], start: t0 - 18 * hour, hours: 96, seed: 2, current: t0 + 6 * hour)
        let outcomes = try storer.store(
            second, for: berlin, fetch: FetchRecord(fetchedAt: t0 + 6 * hour, origin: .fetch))
        #expect(outcomes.map(\.kind) == [.stored, .stored])
        #expect(storer.db.reconnects == 1)
        #expect(Int64(storer.db.backendPID) != old)
        #expect(try admin.db.scalarInt("SELECT count(*) FROM forecast_runs") == (runs ?? 0) + 2)
        let diff = differences(try keptRows(admin), try recomputed(admin, location: berlin.id))
        #expect(diff.isEmpty, "\(diff.count) differ: \(diff.prefix(12))")
    }
}

/// One private server for the suite below, which stops and starts it (the shared one serves
/// every suite at once). Removed when the test process exits.
let restartingServer = Result { try PostgresServer.makePrivate() }

/// The suite's server, started again when a test that failed left it stopped.
func runningRestartServer() throws -> PostgresServer {
    let server = try restartingServer.get()
    if (try? PostgresConnection(conninfo: server.conninfo())) == nil { try server.start() }
    return server
}

@Suite(
    "PostgreSQL engine: the server stopped and restarted between runs",
    .serialized, .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresRestartTests {
    func counts(_ conninfo: String) throws -> [Int64] {
        let db = try PostgresConnection(conninfo: conninfo)
        return try ["forecast_runs", "hourly_forecasts", "run_content_hashes", "fetch_log", "verification_summaries"]
            .map { try db.scalarInt("SELECT count(*) FROM " + $0) ?? -1 }
    }

    @Test(
        "the server restarted after the first location's run is stored: the same connection stores the later runs, nothing doubled"
    )
    func restartedBetweenRuns() throws {
        let server = try runningRestartServer()
        let conninfo = server.conninfo(database: try server.createDatabase("restart"))
        let engine = try PostgresEngine(conninfo: conninfo, now: 0)
        let places = try [("Berlin", 52.52, 13.41), ("Hamburg", 53.55, 9.99), ("Munich", 48.14, 11.58)].map {
            try engine.addLocation(
                name: $0.0, latitude: $0.1, longitude: $0.2, elevation: nil, timezone: "GMT", models: [], now: 0)
        }
        let responses = try places.indices.map {
            try syntheticResponse(
                models: ["best_match", "gfs_seamless"], start: t0 - 24 * hour, hours: 96, seed: 10 + $0, current: t0)
        }
        let fetch = FetchRecord(fetchedAt: t0, origin: .fetch)
        #expect(try engine.store(responses[0], for: places[0], fetch: fetch).count == 2)
        try server.stop()
        try server.start()
        for index in 1..<places.count {
            #expect(
                try engine.store(responses[index], for: places[index], fetch: fetch).map(\.kind) == [.stored, .stored])
        }
        #expect(engine.db.reconnects == 1)
        let after = try counts(conninfo)
        #expect(after[0] == 6 && after[3] == 6, "\(after)")
        // The same responses again: repeats, one more fetch-log row each, no run doubled.
        for index in places.indices {
            #expect(
                try engine.store(responses[index], for: places[index], fetch: fetch).map(\.kind) == [
                    .repeated, .repeated
                ])
        }
        let again = try counts(conninfo)
        #expect(again[0] == 6 && again[1] == after[1] && again[2] == after[2] && again[4] == after[4], "\(again)")
        for place in places {
            let kept = try engine.db.rows(
                "SELECT \(keptKey), " + keptColumns.joined(separator: ", ")
                    + " FROM verification_summaries WHERE location_id = $1 ORDER BY 1", [.integer(place.id)]
            ) { row in KeptRow(key: row.string(0), values: keptColumns.indices.map { row.optionalDouble($0 + 1) }) }
            let diff = differences(kept, try recomputed(engine, location: place.id))
            #expect(diff.isEmpty, "\(place.name): \(diff.prefix(6))")
        }
    }

    @Test(
        "a store while the server is down fails with an Error saying to start it, no password shown, nothing stored; once it is up the same connection stores it"
    )
    func storeWhileStopped() throws {
        let server = try runningRestartServer()
        let name = try server.createDatabase("stopped")
        let conninfo = server.tcpURI(database: name)
        let engine = try PostgresEngine(conninfo: conninfo, now: 0)
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: nil, timezone: "GMT", models: [], now: 0)
        let response = try syntheticResponse(
            models: ["best_match", "gfs_seamless"], start: t0 - 24 * hour, hours: 96, seed: 3, current: t0)
        let before = try counts(conninfo)
        try server.stop()
        var failed: PostgresError?
        do {
            _ = try engine.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        } catch let error as PostgresError {
            failed = error
        }
        // A second try while it is still down says the same (the connection is not left half-open).
        #expect(throws: PostgresError.self) {
            try engine.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        }
        try server.start()
        #expect(failed?.kind == .serverNotRunning, "\(String(describing: failed))")
        #expect(failed.map { "\($0)" }?.contains("Start the server") == true, "\(String(describing: failed))")
        #expect(failed.map { "\($0)".contains(server.password) } == false)
        #expect(try counts(conninfo) == before)
        #expect(try engine.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch)).count == 2)
        #expect(try counts(conninfo)[0] == before[0] + 2)
    }

    @Test("a transaction cut off by a restart is not resumed on the new session: the caller hears of it")
    func notInsideATransaction() throws {
        let server = try runningRestartServer()
        let conninfo = server.conninfo(database: try server.createDatabase("midway"))
        let db = try PostgresConnection(conninfo: conninfo)
        try db.execute("CREATE TABLE t (n int)")
        var thrown: PostgresError?
        do {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (1)")
                try server.stop()
                try server.start()
                try db.run("INSERT INTO t VALUES (2)")
            }
        } catch let error as PostgresError {
            thrown = error
        }
        #expect(thrown?.kind == .connectionLost, "\(String(describing: thrown))")
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 0)
        #expect(db.reconnects == 1)
    }
}
