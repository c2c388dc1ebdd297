import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxPostgresStore
import WxReplay
import WxStore
import WxStoreSQLite

@testable import WxCLI

/// The instant wxdb and the replay server both take as now (as in GoldenOutputTests).
let copyNow: Int64 = 1_785_000_000

/// A history built only through the CLI and the replay server, with both clocks pinned: two runs a day of
/// two models for five days with era5, today's live runs, a station CSV, a prune (kept sums), and, with
/// `ensembles`, a location with an ensemble model.
func buildCopyHistory(ensembles: Bool) async throws -> ReplaySandbox {
    let replay = try ReplaySandbox()
    let clock = Date(timeIntervalSince1970: TimeInterval(copyNow))
    replay.box.now = clock
    replay.server.now = { clock }
    replay.box.environment["WXDB_SINGLE_RUNS_URL"] = replay.server.baseURL + ReplayServer.singleRunsPath
    replay.box.environment["WXDB_ENSEMBLE_URL"] = replay.server.baseURL + "/v1/ensemble"
    var setup: [[String]] = [
        [
            "locations", "add", "Testville", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin",
            "--models", "icon_seamless,ecmwf_ifs025"
        ],
        ["backfill", "--location", "Testville", "--days", "5", "--every", "12"],
        ["ingest", "--location", "Testville"]
    ]
    if ensembles {
        setup += [
            [
                "locations", "add", "Bern", "--lat", "46.95", "--lon", "7.45", "--timezone", "GMT", "--models",
                "icon_seamless,icon_d2_eps"
            ],
            ["ingest", "--location", "Bern"]
        ]
    }
    for arguments in setup {
        let result = await replay.box.run(arguments)
        try #require(result.code == 0, "\(arguments.joined(separator: " ")): \(result.stderrText)")
    }
    var csv = "time,temperature_2m,precipitation\n"
    let first = copyNow / 3600 * 3600 - 6 * 86400
    for i in 0..<(6 * 24) {
        let t = first + Int64(i) * 3600
        csv +=
            CivilTime.isoUTC(t) + "," + JSON.numberText(Double(150 + i % 37) / 10) + "," + (i % 9 == 0 ? "0.4" : "0")
            + "\n"
    }
    let path = try replay.box.write("station.csv", csv)
    let imported = await replay.box.run([
        "observe", "import", path, "--source", "station", "--location", "Testville"
    ])
    try #require(imported.code == 0, "observe import: \(imported.stderrText)")
    let prune = await replay.box.run(["prune", "--keep-days", "2"])
    try #require(prune.code == 0, "prune: \(prune.stderrText)")
    return replay
}

/// What a user reads from a history: scores in every grouping, the run list, the exports, the counts.
func copyOutputs(_ box: Sandbox, db: String, ensembles: Bool) async -> [String: String] {
    var commands: [String: [String]] = [
        "verify-lead": ["query", "verify", "--location", "Testville", "--by", "lead", "--format", "json"],
        "verify-model": ["query", "verify", "--location", "Testville", "--by", "model", "--format", "csv"],
        "verify-day-station": [
            "query", "verify", "--location", "Testville", "--by", "day", "--source", "station", "--format", "json"
        ],
        "verify-direction": [
            "query", "verify", "--location", "Testville", "--var", "wind_direction_10m", "--source", "era5",
            "--format", "json"
        ],
        "runs": ["query", "runs", "--location", "Testville", "--format", "json"],
        "export-pairs": ["export", "pairs", "--location", "Testville"],
        "export-hourly": ["export", "hourly", "--location", "Testville"],
        "export-observations": ["export", "observations"],
        "stats": ["stats", "--format", "json"],
        "doctor-deep": ["doctor", "--deep", "--format", "json"]
    ]
    if ensembles { commands["export-members"] = ["export", "members", "--location", "Bern"] }
    var answers: [String: String] = [:]
    for (name, arguments) in commands {
        let result = await box.run(arguments + ["--db", db])
        answers[name] =
            "exit \(result.code)\n"
            + result.stdout.replacing(db, with: "<db>").replacing(/"bytes":[0-9]+/, with: "\"bytes\":\"<size>\"")
            // The file's size in doctor: a copy is written in one go, its pages packed tighter.
            .replacing(/<db> \([0-9.]+ [KMG]?i?B\)/, with: "<db> (<size>)")
    }
    return answers
}

/// The counts `wxdb copy --format json` printed, per table: (source, target).
func copiedCounts(_ stdout: String) throws -> [String: (Int, Int)] {
    let object = try #require(try JSONSerialization.jsonObject(with: Data(stdout.utf8)) as? [String: Any])
    let tables = try #require(object["tables"] as? [[String: Any]])
    var counts: [String: (Int, Int)] = [:]
    for table in tables {
        counts[table["table"] as! String] = (
            (table["source"] as! NSNumber).intValue, (table["target"] as! NSNumber).intValue
        )
    }
    return counts
}

@Suite("wxdb copy: a whole database between engines", .serialized)
struct CopyCommandTests {
    @Test("SQLite to SQLite: every output a user reads is the same on the copy, and the counts match on both sides")
    func sqliteToSQLite() async throws {
        let replay = try await buildCopyHistory(ensembles: true)
        let copy = replay.box.folder.appendingPathComponent("copy.sqlite").path
        let result = await replay.box.run(["copy", "--from", replay.box.db, "--to", copy, "--format", "json"])
        #expect(result.code == 0, "\(result.stderrText)")
        let counts = try copiedCounts(result.stdout)
        for (table, pair) in counts { #expect(pair.0 == pair.1, "\(table): \(pair)") }
        for table in ["locations", "forecast_runs", "hourly_forecasts", "observations", "fetch_log"] {
            #expect((counts[table]?.0 ?? 0) > 0, "\(table) copied nothing: the history is too thin to test")
        }
        #expect((counts["verification_summaries"]?.0 ?? 0) > 0)
        #expect((counts["ensemble_values"]?.0 ?? 0) > 0)
        let before = await copyOutputs(replay.box, db: replay.box.db, ensembles: true)
        let after = await copyOutputs(replay.box, db: copy, ensembles: true)
        for name in before.keys.sorted() {
            #expect(before[name] == after[name], "\(name) differs on the copy")
            #expect(before[name]?.hasPrefix("exit 0") == true, "\(name): \(before[name]?.prefix(300) ?? "")")
        }
        // The table printout names every count and says the ids were kept.
        let table = await replay.box.run([
            "copy", "--from", replay.box.db, "--to", replay.box.folder.appendingPathComponent("again.sqlite").path
        ])
        #expect(table.code == 0)
        #expect(table.stdout.contains("ids kept"), "\(table.stdout)")
        #expect(table.stdout.contains("ensemble members"), "\(table.stdout)")
    }

    @Test("a target that holds rows, a missing source or the same database twice is refused; nothing changes")
    func refusals() async throws {
        let replay = try await buildCopyHistory(ensembles: false)
        let other = Sandbox()
        let add = await other.run("locations", "add", "Elsewhere", "--lat", "1", "--lon", "2")
        #expect(add.code == 0)
        let statsBefore = await other.run("stats", "--format", "json")
        let full = await replay.box.run(["copy", "--from", replay.box.db, "--to", other.db])
        #expect(full.code == 1)
        #expect(full.stderrText.contains("already holds 1 location(s)"), "\(full.stderrText)")
        #expect(full.stderrText.contains("Nothing was written"), "\(full.stderrText)")
        #expect(await other.run("stats", "--format", "json").stdout == statsBefore.stdout)

        let missing = replay.box.folder.appendingPathComponent("nothing-here.sqlite").path
        let target = replay.box.folder.appendingPathComponent("never.sqlite").path
        let none = await replay.box.run(["copy", "--from", missing, "--to", target])
        #expect(none.code == 1)
        #expect(none.stderrText.contains("no database at"), "\(none.stderrText)")
        #expect(!FileManager.default.fileExists(atPath: target))

        let same = await replay.box.run(["copy", "--from", replay.box.db, "--to", replay.box.db])
        #expect(same.code == 64, "\(same.stderrText)")
        let missingTo = await replay.box.run(["copy", "--from", replay.box.db])
        #expect(missingTo.code == 64)
        #expect(missingTo.stderrText.contains("--to"), "\(missingTo.stderrText)")
    }

    @Test("a copy stopped part-way (a fault after the forecast rows) leaves no file behind and the source as it was")
    func faultLeavesNothing() async throws {
        let replay = try await buildCopyHistory(ensembles: false)
        let source = try SQLiteStore.open(path: replay.box.db, create: false, access: .read)
        let path = replay.box.folder.appendingPathComponent("half.sqlite").path
        let target = try SQLiteStore.open(path: path, create: true, access: .write)
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try StoreCopier.copy(from: source, to: target) { table in
                if table == CopyTables.observations.label { throw Stop() }
            }
        }
        // Everything the copy had loaded (locations, runs, hourly and daily rows) went with it.
        #expect(try target.copyTargetContents() == nil)
        for table in CopyTables.all { #expect(try target.copyCount(table) == 0, "\(table.name)") }
    }
}

@Suite(
    "wxdb copy through PostgreSQL",
    .serialized, .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresCopyTests {
    @Test("a connection killed mid-copy (pg_terminate_backend), of the target or the source: nothing in the target")
    func killedMidCopy() async throws {
        let (engine, postgres) = try freshCopyEngine()
        let server = try PostgresServer.shared()
        let box = Sandbox()
        let response = try copyBerlinResponse()
        for name in ["Berlin", "Potsdam"] {
            let location = try engine.addLocation(
                name: name, latitude: 52.5, longitude: 13.4, elevation: nil, timezone: "GMT", models: [], now: 5)
            _ = try engine.storeRuns(
                response, for: location, fetch: FetchRecord(fetchedAt: 1_700_000_000, origin: .fetch))
        }
        let lite = box.folder.appendingPathComponent("lite.sqlite").path
        #expect(await box.run(["copy", "--from", postgres, "--to", lite]).code == 0)
        let admin = try PostgresConnection(conninfo: server.conninfo())
        func kill(_ connection: PostgresConnection) throws {
            _ = try admin.scalarInt(
                "SELECT count(*) FROM pg_terminate_backend($1::int)", [.integer(Int64(connection.backendPID))])
        }

        // SQLite into PostgreSQL, the target's connection ended after the runs and hourly rows went in.
        let emptyTarget = server.conninfo(database: try server.createDatabase("killed"))
        let target = try PostgresEngine(conninfo: emptyTarget, now: 1_700_000_000)
        let source = try SQLiteStore.open(path: lite, create: false, access: .read)
        #expect(throws: PostgresError.self) {
            try StoreCopier.copy(from: source, to: target) { table in
                if table == CopyTables.dailyForecasts.label { try kill(target.db) }
            }
        }
        let check = try PostgresEngine(conninfo: emptyTarget, migrate: false, now: 1_700_000_000)
        #expect(try check.copyTargetContents() == nil)
        for table in CopyTables.all { #expect(try check.copyCount(table) == 0, "\(table.name)") }

        // PostgreSQL into SQLite, the source's connection ended mid-stream: the SQLite transaction is undone.
        let reader = try PostgresEngine(conninfo: postgres, migrate: false, now: 1_700_000_000)
        let other = try SQLiteStore.open(
            path: box.folder.appendingPathComponent("other.sqlite").path, create: true, access: .write)
        #expect(throws: PostgresError.self) {
            try StoreCopier.copy(from: reader, to: other) { table in
                if table == CopyTables.hourlyForecasts.label { try kill(reader.db) }
            }
        }
        for table in CopyTables.all { #expect(try other.copyCount(table) == 0, "\(table.name)") }

        // The same empty target then takes the whole copy, through the CLI.
        let copied = await box.run(["copy", "--from", lite, "--to", emptyTarget])
        #expect(copied.code == 0, "\(copied.stderrText)")
        #expect(copied.stdout.contains("ids kept"))
    }

    @Test("PostgreSQL's per-location ids meeting in SQLite are renumbered; each location keeps its own runs")
    func renumbered() async throws {
        let (engine, postgres) = try freshCopyEngine()
        let box = Sandbox()
        let response = try copyBerlinResponse()
        for name in ["Berlin", "Potsdam"] {
            let location = try engine.addLocation(
                name: name, latitude: 52.5, longitude: 13.4, elevation: nil, timezone: "GMT", models: [], now: 5)
            let fetch = FetchRecord(fetchedAt: 1_700_000_000, origin: .fetch)
            _ = try engine.storeRuns(response, for: location, fetch: fetch)
        }
        // Both locations' runs are runs 1, 2, … on PostgreSQL.
        #expect(try engine.db.scalarInt("SELECT count(DISTINCT id) FROM forecast_runs") == Int64(response.models.count))
        let target = box.folder.appendingPathComponent("renumbered.sqlite").path
        let result = await box.run(["copy", "--from", postgres, "--to", target])
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stdout.contains("renumbered"), "\(result.stdout)")
        let runs = response.models.count
        for name in ["Berlin", "Potsdam"] {
            let listed = await box.run(["query", "runs", "--location", name, "--format", "json", "--db", target])
            #expect(listed.code == 0, "\(listed.stderrText)")
            let object = try JSONSerialization.jsonObject(with: Data(listed.stdout.utf8)) as? [String: Any]
            #expect((object?["runs"] as? [Any])?.count == runs, "\(name): \(listed.stdout.prefix(300))")
        }
        var exported = 0
        for name in ["Berlin", "Potsdam"] {
            let result = await box.run(["export", "hourly", "--location", name, "--db", target])
            #expect(result.code == 0, "\(result.stderrText)")
            exported += result.stdout.utf8.split(separator: UInt8(ascii: "\n")).count - 1
        }
        let stored = try engine.db.scalarInt("SELECT count(*) FROM hourly_forecasts")
        #expect(Int64(exported) == stored, "exported \(exported) of \(stored ?? -1)")
    }
}

/// A fresh, migrated wxdb database on the test server.
private func freshCopyEngine() throws -> (PostgresEngine, String) {
    let server = try PostgresServer.shared()
    let conninfo = server.conninfo(database: try server.createDatabase("renumber"))
    return (try PostgresEngine(conninfo: conninfo, now: 1_700_000_000), conninfo)
}

/// Berlin's multi-model response (best_match and gfs_seamless, hourly and daily).
private func copyBerlinResponse() throws -> ForecastResponse {
    let body = try Data(
        contentsOf: packageRoot.appendingPathComponent(
            "Fixtures/forecast-multi-model-best_match-gfs_seamless-current-minutely15-hourly-daily-berlin.json"))
    return try ForecastDecoder.decodeSingle(Array(body), defaultModel: "best_match")
}
