import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite

@testable import WxCLI

/// A clock after the fetch times these tests give the recorded fixtures (2026-07-26/27).
let afterFixtures = Date(timeIntervalSince1970: 1_785_500_000)

/// Row counts of every table, read straight from the rows, to show a refused input changed nothing.
func counts(_ path: String) throws -> [String: Int64] {
    try SQLiteBackdoor(path).rowCounts()
}

@Suite("wxdb import and locations")
struct ImportCommandTests {
    @Test("every forecast sample imports or is refused with a reason")
    func everySample() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        #expect(await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2").code == 0)
        let samples = try FileManager.default.contentsOfDirectory(atPath: fixturesPath)
            .filter { $0.hasSuffix(".json") && !$0.hasPrefix("geocoding") && !$0.hasPrefix("archive") }.sorted()
        #expect(samples.count >= 15)
        for sample in samples {
            let before = try counts(box.db)
            let result = await box.run(
                "import", box.fixture(sample), "--location", "Here", "--fetched-at", "2026-07-26T21:00Z", "--force")
            if result.code == 0 {
                #expect(try counts(box.db)["fetch_log"]! > before["fetch_log"]!, "\(sample)")
            } else {
                #expect(result.code == 1, "\(sample)")
                #expect(result.stderrText.hasPrefix("Error: "), "\(sample)")
                #expect(result.stderrText.contains(sample), "the message names the file: \(sample)")
                #expect(try counts(box.db) == before, "\(sample) changed the database")
            }
        }
        // Integrity and foreign keys, as the user checks them.
        #expect(try await box.doctorSaysOK())
    }

    static let badFiles: [(String, String, String)] = [
        (
            "truncated.json",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":[0,3600],"temperature_2m":[1.5,"#,
            "not valid JSON"
        ),
        (
            "error.json",
            #"{"reason":"Cannot initialize TemperatureUnit from invalid String value asdfsfd","error":true}"#,
            "Cannot initialize TemperatureUnit"
        ),
        (
            "unequal.json",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":[0,3600],"temperature_2m":[1,2],"wind_gusts_10m":[3]}}"#,
            "wind_gusts_10m"
        ),
        (
            "string.json",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":[0],"temperature_2m":["warm"]}}"#,
            "temperature_2m[0] is a string"
        ),
        (
            "label.json",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":["tomorrow"],"temperature_2m":[1]}}"#,
            "\"tomorrow\""
        ),
        ("empty.json", "", "empty")
    ]

    @Test("bad input is refused with Error: and leaves every table as it was", arguments: badFiles)
    func refusesBadInput(_ name: String, _ body: String, _ expected: String) async throws {
        let box = Sandbox()
        box.now = afterFixtures
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        // Something already stored, so "as it was" is not just "empty".
        #expect(
            await box.run(
                "import", box.fixture("forecast-current-hourly-daily-iso8601-copenhagen.json"),
                "--location", "Here", "--fetched-at", "2026-07-26T21:00Z", "--force"
            ).code == 0)
        let before = try counts(box.db)
        let path = box.folder.appendingPathComponent(name).path
        try body.write(toFile: path, atomically: true, encoding: .utf8)
        // A good file beside the bad one is not stored either.
        let result = await box.run(
            "import", box.fixture("forecast-hourly-halfhour-offset-adelaide.json"), path,
            "--location", "Here", "--fetched-at", "2026-07-27T21:00Z", "--force")
        #expect(result.code == 1)
        #expect(result.stderrText.hasPrefix("Error: "))
        #expect(result.stderrText.contains(expected), "\(result.stderrText)")
        #expect(try counts(box.db) == before)
    }

    @Test("an unknown location is refused")
    func unknownLocation() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        let result = await box.run(
            "import", box.fixture("forecast-hourly-halfhour-offset-adelaide.json"), "--location", "Nowhere",
            "--fetched-at", "2026-07-27T21:00Z")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("no location named \"Nowhere\""))
    }

    @Test("importing the same file twice gives one run and two fetch-log entries")
    func importTwice() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        await box.run("locations", "add", "Copenhagen", "--lat", "55.68", "--lon", "12.57")
        for time in ["2026-07-26T21:00Z", "2026-07-26T22:00Z"] {
            #expect(
                await box.run(
                    "import", box.fixture("forecast-current-hourly-daily-iso8601-copenhagen.json"),
                    "--location", "Copenhagen", "--fetched-at", time
                ).code == 0)
        }
        let after = try counts(box.db)
        #expect(after["forecast_runs"] == 1)
        #expect(after["fetch_log"] == 2)
        #expect(after["hourly_forecasts"] == 168)
    }

    @Test("usage errors exit 64 with Error:, Usage: and a pointer to --help")
    func usageErrors() async {
        let box = Sandbox()
        box.now = afterFixtures
        let result = await box.run("import", "x.json", "--location", "Here")
        #expect(result.code == 64)
        #expect(result.stderr.first == "Error: missing --fetched-at")
        #expect(result.stderr.dropFirst().first?.hasPrefix("Usage: wxdb import") == true)
        #expect(result.stderrText.contains("See 'wxdb import --help'"))
    }

    @Test(
        "help is printed to stdout with the usual sections",
        arguments: [["--help"], ["help", "import"], ["locations", "add", "-h"], ["export", "pairs", "--help"]])
    func help(_ arguments: [String]) async {
        let result = await Sandbox().run(arguments)
        #expect(result.code == 0)
        #expect(result.stdout.hasPrefix("OVERVIEW: "))
        #expect(result.stdout.contains("USAGE: wxdb"))
        #expect(result.stdout.contains("OPTIONS:"))
    }

    @Test("an option's value may start with '-'")
    func negativeValues() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        #expect(
            await box.run(
                "locations", "add", "Los Angeles", "--lat", "34.05", "--lon", "-118.24", "--timezone",
                "America/Los_Angeles"
            ).code == 0)
        let list = await box.run("locations", "list", "--format", "json")
        #expect(list.stdout.contains(#""longitude":-118.24"#))
    }

    @Test("locations add, list, show, remove")
    func locationsLifecycle() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        #expect(
            await box.run(
                "locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--models",
                "icon_seamless,gfs_seamless"
            ).code == 0)
        let duplicate = await box.run("locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41")
        #expect(duplicate.code == 1)
        #expect(duplicate.stderrText.contains("already exists"))
        #expect(await box.run("locations", "add", "Bad", "--lat", "91", "--lon", "0").code == 64)
        let show = await box.run("locations", "show", "Berlin")
        #expect(show.stdout.contains("icon_seamless, gfs_seamless"))
        #expect(await box.run("locations", "show", "Paris").code == 1)
        #expect(await box.run("locations", "remove", "Berlin").code == 0)
        #expect(await box.run("locations", "list", "--format", "json").stdout == "[]\n")
    }

    @Test("removing a location with history needs --purge")
    func removeNeedsPurge() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        await box.run(
            "import", box.fixture("forecast-hourly-halfhour-offset-adelaide.json"), "--location", "Here",
            "--fetched-at", "2026-07-27T21:00Z", "--force")
        let refused = await box.run("locations", "remove", "Here")
        #expect(refused.code == 1)
        #expect(refused.stderrText.contains("--purge"))
        #expect(await box.run("locations", "remove", "Here", "--purge").code == 0)
        #expect(try counts(box.db)["hourly_forecasts"] == 0)
    }

    @Test("export hourly shows what was stored, with ISO UTC times and the location's name neutralised")
    func exportHourly() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        await box.run("locations", "add", "=HYPERLINK(\"x\")", "--lat", "43.7", "--lon", "-79.4")
        await box.run(
            "import", box.fixture("forecast-current-hourly-daily-imperial-toronto-dst-crossing.json"),
            "--location", "=HYPERLINK(\"x\")", "--fetched-at", "2026-03-05T21:00Z")
        let result = await box.run("export", "hourly")
        #expect(result.code == 0)
        let lines = result.stdout.split(separator: "\r\n")
        #expect(lines.count == 193)
        #expect(lines[0].hasPrefix("location,model,issued_at,fetched_at,valid_time,lead_hours,temperature_2m"))
        #expect(lines.contains { $0.contains(",2026-03-08T07:00:00Z,") })
        #expect(lines[1].hasPrefix("\"'=HYPERLINK(\"\"x\"\")\",best_match,2026-03-05T21:00:00Z,"))
    }

    @Test("a database written by a newer wxdb is refused, untouched")
    func newerDatabase() async throws {
        let box = Sandbox()
        box.now = afterFixtures
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        do {
            let db = try SQLiteBackdoor(box.db).db
            try db.run("INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ('0042_future', 'x', 0)")
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: box.db))
        let result = await box.run("locations", "list")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("0042_future"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.db)) == before)
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
        let result = await box.run(
            "import", box.fixture("forecast-hourly-halfhour-offset-adelaide.json"),
            "--location", "Home", "--fetched-at", "2026-01-10T05:02")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("time zone is not known yet"))
        #expect(
            await box.run(
                "import", box.fixture("forecast-hourly-halfhour-offset-adelaide.json"),
                "--location", "Home", "--fetched-at", "2026-01-10T05:02+01:00", "--force"
            ).code == 0)
        // Once the zone is set, a local time is read in it (05:02 in Berlin in January is 04:02Z).
        let other = Sandbox()
        await other.run("locations", "add", "Home", "--lat", "52.52", "--lon", "13.41")
        #expect(await other.run("locations", "set", "Home", "--timezone", "Europe/Berlin").code == 0)
        #expect(
            await other.run(
                "import", other.fixture("forecast-hourly-halfhour-offset-adelaide.json"),
                "--location", "Home", "--fetched-at", "2026-01-10T05:02", "--force"
            ).code == 0)
        #expect(
            try other.storedRuns().map(\.firstFetch)
                == [Int64(CivilTime.days(year: 2026, month: 1, day: 10) * 86400 + 4 * 3600 + 2 * 60)])
    }
}
