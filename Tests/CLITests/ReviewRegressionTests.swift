import Foundation
import Testing
import WxCore
import WxSQLite
import WxStore
@testable import WxCLI

/// Defects found in review, each with the input that showed it.
@Suite("Review regressions")
struct ReviewRegressionTests {
    @Test("a station CSV with other columns does not erase values stored from an earlier CSV")
    func partialColumnsKeepOthers() async throws {
        let box = Sandbox()
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2", "--timezone", "UTC")
        let a = box.folder.appendingPathComponent("t.csv").path
        let b = box.folder.appendingPathComponent("p.csv").path
        try "time,temperature_2m\n2026-11-01T00:00Z,5\n".write(toFile: a, atomically: true, encoding: .utf8)
        try "time,precipitation\n2026-11-01T00:00Z,1.2\n".write(toFile: b, atomically: true, encoding: .utf8)
        #expect(await box.run("observe", "import", a, "--location", "Here", "--source", "station").code == 0)
        #expect(await box.run("observe", "import", b, "--location", "Here", "--source", "station").code == 0)
        let db = try Database(path: box.db)
        let row = try #require(try db.firstRow("SELECT temperature_2m, precipitation FROM observations") { ($0.optionalDouble(0), $0.optionalDouble(1)) })
        #expect(row.0 == 5 && row.1 == 1.2)
    }

    @Test("a SQLite file that is not a wxdb database is refused and not changed")
    func foreignSQLiteFile() async throws {
        let box = Sandbox()
        let path = box.folder.appendingPathComponent("other.sqlite").path
        do {
            var options = Database.Options()
            options.walMode = false
            let db = try Database(path: path, options: options)
            try db.execute("CREATE TABLE foo (x INTEGER); INSERT INTO foo VALUES (1)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        for command in [["stats"], ["locations", "list"], ["locations", "add", "A", "--lat", "1", "--lon", "2"]] {
            let result = await box.run(["--db", path] + command)
            #expect(result.code == 1)
            #expect(result.stderrText.contains("not a wxdb one"), "\(result.stderrText)")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("a time without offset is refused while the location's zone is not known, instead of being read as UTC")
    func unknownZone() async throws {
        let box = Sandbox()
        await box.run("locations", "add", "Home", "--lat", "52.52", "--lon", "13.41")
        let result = await box.run("import", box.fixture("forecast-hourly-halfhour-offset-adelaide.json"),
                                   "--location", "Home", "--fetched-at", "2026-01-10T05:02")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("time zone is not known yet"))
        #expect(await box.run("import", box.fixture("forecast-hourly-halfhour-offset-adelaide.json"),
                              "--location", "Home", "--fetched-at", "2026-01-10T05:02+01:00", "--force").code == 0)
        // Once the zone is set, a local time is read in it (05:02 in Berlin in January is 04:02Z).
        let other = Sandbox()
        await other.run("locations", "add", "Home", "--lat", "52.52", "--lon", "13.41")
        #expect(await other.run("locations", "set", "Home", "--timezone", "Europe/Berlin").code == 0)
        #expect(await other.run("import", other.fixture("forecast-hourly-halfhour-offset-adelaide.json"),
                                "--location", "Home", "--fetched-at", "2026-01-10T05:02", "--force").code == 0)
        let db = try Database(path: other.db)
        #expect(try db.scalarInt("SELECT fetched_at FROM forecast_runs") == Int64(CivilTime.days(year: 2026, month: 1, day: 10) * 86400 + 4 * 3600 + 2 * 60))
    }

    @Test("a weather code far outside WMO's range prints as a number instead of crashing")
    func hugeWeatherCode() async throws {
        let box = Sandbox()
        let history = try HistoryBuilder(db: box.db, name: "Odd")
        let t: Int64 = 1_780_000_000 / 3600 * 3600
        try history.storeRun(issuedAt: t, fetchedAt: t, times: [t + 3600], columns: ["weather_code": [1e300]])
        let result = await box.run("query", "forecast", "--location", "Odd", "--var", "weather_code", "--at", CivilTime.isoUTC(t + 3600))
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(!result.stdout.contains("Code "))
    }

    @Test("export pairs and query verify pick the same default observation source")
    func sameDefaultSource() async throws {
        let box = Sandbox()
        _ = try GeneratedHistory.build(box)
        // A second imported source with fewer hours, sorting before "station" by name.
        let store = try Store.open(path: box.db)
        let location = try store.requireLocation(named: "Testville")
        var values = [Double?](repeating: nil, count: Variables.hourly.count)
        values[0] = 1
        try store.upsertObservation(locationID: location.id, source: "aaa", time: GeneratedHistory.issued(1), values: values, recordedAt: 0)
        let verify = await box.run("query", "verify", "--location", "Testville", "--format", "json")
        #expect(try parseJSON(verify.stdout)["source"]?.stringValue == "station")
        let pairs = await box.run("export", "pairs", "--location", "Testville")
        #expect(pairs.stdout.split(separator: "\r\n").dropFirst().allSatisfy { $0.hasSuffix(",station") })
    }

    @Test("the ingest lock is the same for every spelling of the database path")
    func lockByRealPath() throws {
        let box = Sandbox()
        FileManager.default.createFile(atPath: box.db, contents: nil)
        let link = box.folder.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: box.db)
        let held = try ProcessLock(databasePath: box.db, timeout: 1)
        #expect(throws: ProcessLock.Failure.self) { _ = try ProcessLock(databasePath: link, timeout: 0.2) }
        withExtendedLifetime(held) {}
    }
}
