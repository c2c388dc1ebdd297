import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxPostgresStore

@Suite(
    "doctor --deep on PostgreSQL: hourly and daily rows without their run",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresRunRowsCLITests {
    @Test(
        "rows whose run does not exist are reported with exit 1 and left alone; --repair deletes them and says so"
    )
    func orphanRows() async throws {
        let server = try PostgresServer.shared()
        let conninfo = server.conninfo(database: try server.createDatabase("cli"))
        let engine = try PostgresEngine(conninfo: conninfo, now: 0)
        let box = Sandbox()
        let clean = await box.run("doctor", "--deep", "--db", conninfo)
        #expect(clean.code == 0, "\(clean.stderrText)")
        #expect(clean.stdout.contains("run rows          ok: every hourly and daily row belongs to a stored run"))
        _ = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: nil, timezone: "GMT", models: [], now: 0)
        try engine.db.run(
            "INSERT INTO hourly_forecasts_f4 (location_id, run_id, valid_time, temperature_2m) VALUES (1, 4, 1700010000, 5.5), (1, 4, 1700013600, 6.5)"
        )
        try engine.db.run("INSERT INTO daily_forecasts_f4 (location_id, run_id, date) VALUES (1, 4, '2023-11-15')")
        let found = await box.run("doctor", "--deep", "--db", conninfo)
        #expect(found.code == 1)
        #expect(
            found.stdout.contains(
                "run rows          ORPHANS: 2 hourly and 1 daily row(s) of 1 run(s) that do not exist (e.g. location 1 run 4)"
            ), "\(found.stdout)")
        #expect(found.stderrText.contains("Run 'wxdb doctor --deep --repair' to delete them"), "\(found.stderrText)")
        #expect(try engine.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 2, "doctor changed nothing")
        let repair = await box.run("doctor", "--deep", "--repair", "--db", conninfo)
        #expect(repair.code == 0, "\(repair.stderrText)")
        #expect(repair.stdout.contains("run rows          deleted 2 hourly and 1 daily row(s)"), "\(repair.stdout)")
        #expect(try engine.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 0)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM daily_forecasts") == 0)
        let after = await box.run("doctor", "--deep", "--db", conninfo)
        #expect(after.code == 0, "\(after.stderrText)")
    }
}

@Suite("export hourly prints the same stored values on both engines, whichever PostgreSQL table holds the run")
struct Float4ValuesCLITests {
    static let day = utcMidnight(2026, 7, 20)

    @Test("a run of one-decimal values (float4 on PostgreSQL) and one of sin() values (double) print as on SQLite")
    func sameOutput() async throws {
        var outputs: [StoreEngine: [String]] = [:]
        for engine in StoreEngine.all {
            let box = try Sandbox(engine: engine)
            defer { box.remove() }
            var printed: [String] = []
            let runs: [(String, (Int) -> Double)] = [
                ("Exact", { Double(($0 * 37) % 400 - 100) / 10 }), ("Inexact", { 10 + sin(Double($0) / 3) + 0.1 })
            ]
            for (name, value) in runs {
                #expect(
                    await box.run("locations", "add", name, "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code
                        == 0)
                let response = MultiModelResponse(firstLabel: Self.day, hours: 48, models: [("best_match", value)])
                let path = try box.write(name + ".json", response.json())
                let stored = await box.run(
                    "import", path, "--location", name, "--fetched-at", CivilTime.isoUTC(Self.day + 3600))
                #expect(stored.code == 0, "\(stored.stderrText)")
                let shown = await box.run("export", "hourly", "--location", name)
                #expect(shown.code == 0, "\(shown.stderrText)")
                printed.append(shown.stdout)
            }
            outputs[engine] = printed
        }
        if let postgres = outputs[.postgres] {
            #expect(postgres == outputs[.sqlite], "PostgreSQL prints other values than SQLite")
        }
        // Some printed temperature carries all of a double's digits (sin's), so float4 could not hold it.
        #expect(outputs[.sqlite]?[1].contains(/\.[0-9]{12,}/) == true)
    }
}
