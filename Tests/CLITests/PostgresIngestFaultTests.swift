// Issue 30 item 8, the two faults that need the server itself stopped: `wxdb ingest` over several
// locations with the PostgreSQL server restarted between two locations' runs, and ingest against a
// server that is stopped (at the start, or after some runs are stored), which retries as a request
// does: counted through the injected sleeper, which is also where the test stops and starts the
// server, so no wait is timed.
import Foundation
import TestSupport
import Testing
import WxPostgres
import WxReplay

@testable import WxCLI

/// The waits asked for, each answered at once after the step the test set for it (1-based).
final class ScriptedSleeper: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [TimeInterval] = []
    private let steps: [Int: @Sendable () -> Void]

    init(_ steps: [Int: @Sendable () -> Void]) { self.steps = steps }

    var waits: [TimeInterval] { lock.withLock { list } }
    var sleep: @Sendable (TimeInterval) async throws -> Void {
        { [self] seconds in
            let number = lock.withLock {
                list.append(seconds)
                return list.count
            }
            steps[number]?()
        }
    }
}

/// The suite's own server, stopped and started by its tests (the shared one serves every suite).
let ingestFaultServer = Result { try PostgresServer.makePrivate() }

@Suite(
    "wxdb ingest on PostgreSQL: the server restarted or stopped",
    .serialized, .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresIngestFaultTests {
    /// A replay sandbox on a new database of the suite's server (over TCP with the password when
    /// `tcp`), with three locations that need three requests (one model each).
    func sandbox(tcp: Bool = false) async throws -> (ReplaySandbox, PostgresServer, String) {
        let server = try ingestFaultServer.get()
        // A test that failed before starting it again leaves it stopped: the next one starts it.
        if (try? PostgresConnection(conninfo: server.conninfo())) == nil { try server.start() }
        let name = try server.createDatabase("ingest")
        let conninfo = tcp ? server.tcpURI(database: name) : server.conninfo(database: name)
        let replay = try ReplaySandbox()
        replay.box.environment["WXDB_DB"] = conninfo
        for (place, lat, lon, model) in [
            ("Berlin", "52.52", "13.41", "icon_seamless"), ("Paris", "48.86", "2.35", "gfs_seamless"),
            ("Rome", "41.9", "12.5", "ecmwf_ifs025")
        ] {
            let added = await replay.run(
                "locations", "add", place, "--lat", lat, "--lon", lon, "--timezone", "UTC", "--models", model)
            #expect(added.code == 0, "\(added.stderrText)")
        }
        return (replay, server, conninfo)
    }

    /// Rows per table, read on a connection of its own (the server must be up).
    func counts(_ conninfo: String) throws -> [String: Int64] {
        let db = try PostgresConnection(conninfo: conninfo)
        var out: [String: Int64] = [:]
        for table in ["forecast_runs", "hourly_forecasts", "fetch_log", "observations", "verification_summaries"] {
            out[table] = try db.scalarInt("SELECT count(*) FROM " + table) ?? -1
        }
        out["failed"] = try db.scalarInt("SELECT count(*) FROM fetch_log WHERE outcome = 'failed'") ?? -1
        return out
    }

    /// Stops and starts the server as a restart does (every session ended).
    static func restart(_ server: PostgresServer) {
        try? server.stop()
        try? server.start()
    }

    @Test(
        "the server restarted after the first location's run is stored: the later runs are stored, nothing doubled, exit 0"
    )
    func restartedBetweenRuns() async throws {
        let (replay, server, conninfo) = try await sandbox()
        defer { replay.cleanup() }
        // Paris's request answers 500 once: its retry's wait is where the server restarts, after
        // Berlin's run is stored and before Paris's is.
        replay.server.enqueue(.delay(seconds: 0))
        replay.server.enqueue(.status(500, reason: nil))
        let sleeper = ScriptedSleeper([1: { Self.restart(server) }])
        replay.box.sleep = sleeper.sleep
        let result = await replay.run("ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("ingest: 3 stored, 0 repeated, 0 failed"), "\(result.stderrText)")
        #expect(sleeper.waits.count == 1)
        let after = try counts(conninfo)
        #expect(after["forecast_runs"] == 3 && after["fetch_log"] == 4 && after["failed"] == 1, "\(after)")
        // The next ingest finds the same runs: repeats only.
        replay.box.sleep = nil
        let again = await replay.run("ingest")
        #expect(again.stderrText.contains("ingest: 0 stored, 3 repeated, 0 failed"), "\(again.stderrText)")
        let repeated = try counts(conninfo)
        #expect(repeated["forecast_runs"] == 3 && repeated["hourly_forecasts"] == after["hourly_forecasts"])
        #expect(repeated["verification_summaries"] == after["verification_summaries"])
    }

    @Test("ingest started while the server is stopped waits with the HTTP backoff and stores once it answers")
    func stoppedAtStartComesBack() async throws {
        let (replay, server, conninfo) = try await sandbox()
        defer { replay.cleanup() }
        try server.stop()
        let sleeper = ScriptedSleeper([2: { try? server.start() }])
        replay.box.sleep = sleeper.sleep
        let result = await replay.run("ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(sleeper.waits.count == 2)
        #expect(result.stderrText.contains("The database did not answer"), "\(result.stderrText)")
        #expect(result.stderrText.contains("attempt 3 of 4"), "\(result.stderrText)")
        #expect(result.stderrText.contains("ingest: 3 stored, 0 repeated, 0 failed"), "\(result.stderrText)")
        #expect(try counts(conninfo)["forecast_runs"] == 3)
    }

    @Test(
        "ingest against a server that stays stopped: --attempts tries, then exit 1 with an Error saying to start it, no password, nothing fetched or changed"
    )
    func stoppedAtStartStaysDown() async throws {
        let (replay, server, conninfo) = try await sandbox(tcp: true)
        defer { replay.cleanup() }
        let before = try counts(conninfo)
        try server.stop()
        let sleeper = ScriptedSleeper([:])
        replay.box.sleep = sleeper.sleep
        let result = await replay.run("ingest", "--attempts", "3")
        try server.start()
        #expect(result.code == 1)
        #expect(sleeper.waits.count == 2)
        #expect(result.stderrText.contains("Error: no PostgreSQL server answers at"), "\(result.stderrText)")
        #expect(result.stderrText.contains("Start the server"), "\(result.stderrText)")
        #expect(result.stderrText.contains("nothing was fetched"), "\(result.stderrText)")
        #expect(!result.stderrText.contains(server.password))
        #expect(replay.forecastRequests.isEmpty)
        #expect(try counts(conninfo) == before)
    }

    @Test(
        "the server stops after the first run is stored and is back within the retries: the fetched run is stored with its fetch-log line"
    )
    func stoppedMidIngestComesBack() async throws {
        let (replay, server, conninfo) = try await sandbox()
        defer { replay.cleanup() }
        replay.server.enqueue(.delay(seconds: 0))
        replay.server.enqueue(.status(500, reason: nil))
        // Wait 1 is the HTTP retry (the server stops), 2 and 3 are Paris's store retried.
        let sleeper = ScriptedSleeper([1: { try? server.stop() }, 3: { try? server.start() }])
        replay.box.sleep = sleeper.sleep
        let result = await replay.run("ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(sleeper.waits.count == 3)
        #expect(result.stderrText.contains("Storing Paris: the database did not answer"), "\(result.stderrText)")
        #expect(result.stderrText.contains("ingest: 3 stored, 0 repeated, 0 failed"), "\(result.stderrText)")
        let after = try counts(conninfo)
        #expect(after["forecast_runs"] == 3 && after["fetch_log"] == 4 && after["failed"] == 1, "\(after)")
    }

    @Test(
        "the server stops after the first run is stored and stays down: exit 1 naming what was fetched and not stored, nothing more fetched, the database as it was"
    )
    func stoppedMidIngestStaysDown() async throws {
        let (replay, server, conninfo) = try await sandbox(tcp: true)
        defer { replay.cleanup() }
        replay.server.enqueue(.delay(seconds: 0))
        replay.server.enqueue(.status(500, reason: nil))
        let sleeper = ScriptedSleeper([1: { try? server.stop() }])
        replay.box.sleep = sleeper.sleep
        let result = await replay.run("ingest", "--attempts", "2")
        try server.start()
        #expect(result.code == 1)
        // One HTTP retry, one store retry (2 attempts each).
        #expect(sleeper.waits.count == 2)
        let text = result.stderrText
        #expect(text.contains("Error: ingest: 1 stored"), "\(text)")
        #expect(text.contains("Paris: fetched but not stored, the database did not answer"), "\(text)")
        #expect(text.contains("Rome: not fetched, the database did not answer"), "\(text)")
        #expect(text.contains("run 'wxdb ingest' again once the server answers"), "\(text)")
        #expect(!text.contains(server.password))
        // Berlin's request, Paris's twice; Rome's never sent.
        #expect(replay.forecastRequests.count == 3)
        let after = try counts(conninfo)
        // Berlin's run and fetch, Paris's failed attempt (logged while the server was up); nothing of Paris's run.
        #expect(after["forecast_runs"] == 1 && after["fetch_log"] == 2 && after["failed"] == 1, "\(after)")
    }
}
