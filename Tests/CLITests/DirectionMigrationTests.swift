import Foundation
import Testing
import WxCore
import WxSQLite

@Suite("migration 0013: the mean directions of sums kept before it")
struct DirectionMigrationTests {
    /// A location with four hours of station and forecast directions (as ScoreEdgeTests.windDirection).
    private func history(_ box: Sandbox) async throws {
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let d = utcMidnight(2026, 7, 20)
        var csv = "time,wind_direction_10m\n"
        for (k, value) in [350.0, 10, 20, 340].enumerated() {
            csv += "\(CivilTime.isoUTC(d + Int64(k) * 3600)),\(value)\n"
        }
        let station = try box.write("station.csv", csv)
        #expect(await box.run("observe", "import", station, "--location", "Here", "--source", "station").code == 0)
        let hours = (0..<4).map { String(d + Int64($0) * 3600) }.joined(separator: ",")
        let json = """
            {"latitude":52.5,"longitude":13.4,"elevation":40,"utc_offset_seconds":0,"timezone":"GMT",
             "hourly_units":{"time":"unixtime","wind_direction_10m":"°"},
             "hourly":{"time":[\(hours)],"wind_direction_10m":[10,350,30,350]}}
            """
        let path = try box.write("run.json", json)
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        // A later run (hours without observations), so prune may take the first: it keeps each model's latest.
        let laterRun = """
            {"latitude":52.5,"longitude":13.4,"elevation":40,"utc_offset_seconds":0,"timezone":"GMT",
             "hourly_units":{"time":"unixtime","wind_direction_10m":"°"},
             "hourly":{"time":[\(d + 12 * 3600),\(d + 13 * 3600)],"wind_direction_10m":[90,90]}}
            """
        let laterPath = try box.write("later.json", laterRun)
        #expect(
            await box.run("import", laterPath, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d + 12 * 3600))
                .code == 0)
    }

    /// Makes the database look as 0013 leaves one it migrated: no direction sums, the location listed.
    private func rewind(_ box: Sandbox) throws {
        let db = try Database(path: box.db)
        try db.execute(
            "UPDATE verification_summaries SET direction_n = NULL, sum_sin_f = NULL, sum_cos_f = NULL, sum_sin_o = NULL, sum_cos_o = NULL"
        )
        try db.execute("INSERT INTO migration_0013_pending (location_id) SELECT id FROM locations")
    }

    private func means(_ box: Sandbox) async throws -> (Double?, Double?) {
        let result = await box.run(
            "query", "verify", "--location", "Here", "--source", "station", "--var", "wind_direction_10m",
            "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        return (row["mean_forecast"]?.numberValue, row["mean_observed"]?.numberValue)
    }

    @Test("kept runs: the sums are filled from the pairs on the next open; doctor --deep agrees")
    func keptRuns() async throws {
        let box = Sandbox()
        defer { box.remove() }
        try await history(box)
        let before = try await means(box)
        try rewind(box)
        let after = try await means(box)
        #expect(before.0 != nil && after.0 == before.0 && after.1 == before.1, "\(before) \(after)")
        let pending = try Database(path: box.db).scalarInt("SELECT count(*) FROM migration_0013_pending")
        #expect(pending == 0)
        let doctor = await box.run("doctor", "--deep")
        #expect(doctor.code == 0, "\(doctor.stdout)\(doctor.stderrText)")
    }

    @Test("a run pruned before 0013: no mean direction (its pairs are gone), bias and MAE as before")
    func prunedRun() async throws {
        let box = Sandbox()
        defer { box.remove() }
        try await history(box)
        let prune = await box.run("prune", "--keep-days", "1")
        #expect(prune.stderrText.contains("Pruned 1 runs"), "\(prune.stderrText)")
        try rewind(box)
        let (forecast, observed) = try await means(box)
        #expect(forecast == nil && observed == nil)
        let result = await box.run(
            "query", "verify", "--location", "Here", "--source", "station", "--var", "wind_direction_10m",
            "--format", "json")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect(near(row["mae"]?.numberValue, 15, 1e-12))
    }
}
