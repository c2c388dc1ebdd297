import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay
import WxSQLite
import WxStore
import WxStoreSQLite

@testable import WxCLI

/// A sandbox whose Open-Meteo endpoints point at a replay server on 127.0.0.1.
final class ReplaySandbox {
    let box = Sandbox()
    let server: ReplayServer

    init() throws {
        server = ReplayServer(fixtures: packageRoot.appendingPathComponent("Fixtures"))
        try server.start()
        let base = server.baseURL
        box.environment["WXDB_FORECAST_URL"] = base + "/v1/forecast"
        box.environment["WXDB_ARCHIVE_URL"] = base + "/v1/archive"
        box.environment["WXDB_GEOCODING_URL"] = base + "/v1/search"
        box.environment["WXDB_META_URL"] = base + "/data"
        box.environment["WXDB_RETRY_BASE_DELAY"] = "0.01"
    }

    deinit { server.stop() }

    @discardableResult
    func run(_ arguments: String...) async -> RunResult { await box.run(arguments) }

    var forecastRequests: [String] { server.requests.filter { $0.hasPrefix("/v1/forecast") } }

    /// One number from wxdb's SQLite file, for what no command prints (see SQLiteBackdoor).
    func scalar(_ sql: String) throws -> Int64 {
        try SQLiteBackdoor(box.db).scalar(sql) ?? -1
    }

    /// How many rows `stats` counts in `table`.
    func count(_ table: String) async throws -> Int64 { try await box.count(table) }

    /// Three locations served from real recorded responses.
    func addThreeRecordedLocations() async throws {
        let places: [(String, Double, Double, String)] = [
            ("Copenhagen", 55.6761, 12.5683, "forecast-current-hourly-daily-iso8601-copenhagen.json"),
            ("Toronto", 43.7, -79.4, "forecast-current-hourly-daily-imperial-toronto-dst-crossing.json"),
            ("Adelaide", -34.93, 138.6, "forecast-hourly-halfhour-offset-adelaide.json")
        ]
        for (name, lat, lon, file) in places {
            server.registerForecast(
                latitude: lat, longitude: lon,
                body: try Data(contentsOf: packageRoot.appendingPathComponent("Fixtures/" + file)))
            #expect(await run("locations", "add", name, "--lat", String(lat), "--lon", String(lon)).code == 0)
        }
    }
}

@Suite("wxdb ingest through the replay server", .serialized)
struct IngestTests {
    @Test(
        "a run fetched with a long past (its window starts a week earlier), then with the default: one run",
        arguments: [("7", "1"), ("1", "7")])
    func sameRunAnotherWindow(_ first: String, _ second: String) async throws {
        let replay = try ReplaySandbox()
        replay.server.now = { Date(timeIntervalSince1970: 1_785_067_200 + 600) }
        #expect(await replay.run("locations", "add", "Field", "--lat", "52.52", "--lon", "13.41").code == 0)
        let a = await replay.run("ingest", "--past-days", first)
        #expect(a.code == 0 && a.stderrText.contains("ingest: 1 stored"), "\(a.stderrText)")
        let b = await replay.run("ingest", "--past-days", second)
        #expect(b.code == 0 && b.stderrText.contains("ingest: 0 stored, 1 repeated"), "\(b.stderrText)")
        #expect(try await replay.count("forecast_runs") == 1)
    }

    @Test(
        "three locations: one HTTP request, three runs with correct UTC instants; again: no new runs, three more fetches"
    )
    func batchedIngest() async throws {
        let replay = try ReplaySandbox()
        try await replay.addThreeRecordedLocations()
        let first = await replay.run("ingest")
        #expect(first.code == 0, "\(first.stderrText)")
        #expect(replay.forecastRequests.count == 1)
        #expect(try await replay.count("forecast_runs") == 3)
        // Toronto's 2026-03-08T02:00 (fixed EST offset) is 07:00Z; Adelaide's first label 00:00 +09:30 was read
        // at 15:00Z the day before (Open-Meteo reads under +09:00 and labels with +09:30).
        let toronto0700 = Int64(CivilTime.days(year: 2026, month: 3, day: 8) * 86400 + 7 * 3600)
        #expect(try await replay.box.exportedForecastHours("Toronto").filter { $0 == toronto0700 }.count == 1)
        let adelaideFirst = Int64(CivilTime.days(year: 2026, month: 7, day: 15) * 86400 + 15 * 3600)
        #expect(try await replay.box.exportedForecastHours("Adelaide").min() == adelaideFirst)
        #expect(try replay.box.storedLocations().allSatisfy { $0.timezone != "auto" })

        let second = await replay.run("ingest")
        #expect(second.code == 0)
        #expect(second.stderrText.contains("0 stored, 3 repeated, 0 failed"))
        #expect(try await replay.count("forecast_runs") == 3)
        #expect(try await replay.count("fetch_log") == 6)
    }

    @Test("500, 500, then 200: stored after retries, every attempt in the fetch log")
    func retriesServerErrors() async throws {
        let replay = try ReplaySandbox()
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20")
        replay.server.enqueue(.status(500, reason: "Something went wrong."), times: 2)
        let result = await replay.run("ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(replay.forecastRequests.count == 3)
        #expect(try await replay.count("forecast_runs") == 1)
        #expect(try replay.box.failedFetches() == ["Here": 2], "both 500s are in the fetch log")
    }

    @Test("400 with a reason: not retried, the reason printed, exit 1")
    func clientErrorNotRetried() async throws {
        let replay = try ReplaySandbox()
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20")
        replay.server.enqueue(
            .status(400, reason: "Cannot initialize WeatherVariable from invalid String value tempeture_2m"))
        let result = await replay.run("ingest")
        #expect(result.code == 1)
        #expect(replay.forecastRequests.count == 1)
        #expect(result.stderrText.contains("tempeture_2m"))
        #expect(result.stderrText.contains("1 failed"))
        #expect(try await replay.count("forecast_runs") == 0)
    }

    // Counted, not timed: both attempts were sent and the run failed on the timeout. Without it the
    // first answer would come after 3000 s and be stored (exit 0), and the time limit (half that)
    // ends a hang; an elapsed-time bound also measured the wait for the cooperative pool under load.
    @Test("a hang past the timeout ends in an error after `attempts` timed-out tries", .timeLimit(.minutes(25)))
    func hangTimesOut() async throws {
        let replay = try ReplaySandbox()
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20")
        replay.server.enqueue(.delay(seconds: 3000), times: 2)
        let result = await replay.run("ingest", "--timeout", "1", "--attempts", "2")
        #expect(result.code == 1)
        #expect(replay.forecastRequests.count == 2)
        #expect(result.stderrText.lowercased().contains("time"))
        #expect(try await replay.count("forecast_runs") == 0)
    }

    @Test(
        "a truncated or otherwise broken 200 stores nothing",
        arguments: [ReplayServer.Fault.truncatedBody, .notJSON, .emptyBody, .wrongContentType])
    func brokenBodies(_ fault: ReplayServer.Fault) async throws {
        let replay = try ReplaySandbox()
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20")
        replay.server.enqueue(fault, times: 4)
        let result = await replay.run("ingest", "--attempts", "2")
        #expect(result.code == 1)
        #expect(try await replay.count("forecast_runs") == 0)
        #expect(try replay.scalar("SELECT count(*) FROM hourly_forecasts") == 0)
        #expect(try await replay.count("observations") == 0)
    }

    @Test("of two batches, one failing: the other's locations are stored and the exit code is 1")
    func oneBatchFails() async throws {
        let replay = try ReplaySandbox()
        await replay.run("locations", "add", "A", "--lat", "10", "--lon", "20")
        await replay.run("locations", "add", "B", "--lat", "11", "--lon", "21", "--models", "icon_seamless")
        replay.server.enqueue(.status(400, reason: "bad request"))
        let result = await replay.run("ingest")
        #expect(result.code == 1)
        #expect(replay.forecastRequests.count == 2)
        #expect(try await replay.count("forecast_runs") == 1)
        #expect(result.stderrText.contains("1 stored"))
    }

    @Test("the API key goes to the server but never into the fetch log or messages")
    func apiKeyHidden() async throws {
        let replay = try ReplaySandbox()
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20")
        replay.server.enqueue(.status(400, reason: "The supplied API key is invalid."))
        let result = await replay.run("--api-key", "s3cret-key", "ingest")
        #expect(result.code == 1)
        #expect(replay.forecastRequests.first?.contains("apikey=s3cret-key") == true)
        #expect(!result.stderrText.contains("s3cret-key"))
        let db = try SQLiteBackdoor(replay.box.db).db
        let logged = try db.rows("SELECT coalesce(request, '') || coalesce(error, '') FROM fetch_log") { $0.string(0) }
        #expect(!logged.isEmpty)
        #expect(logged.allSatisfy { !$0.contains("s3cret") })
    }

    @Test("geocoding takes the first match and says what it chose; no match is a clear error")
    func geocoding() async throws {
        let replay = try ReplaySandbox()
        let added = await replay.run("locations", "add", "Hollywood")
        #expect(added.code == 0)
        #expect(added.stderrText.contains("Hollywood, Florida, United States"))
        let missing = await replay.run("locations", "add", "Qwxzzy")
        #expect(missing.code == 1)
        #expect(missing.stderrText.contains("no place named \"Qwxzzy\""))
    }

    @Test("observe backfill twice over the same range gives the same observation count")
    func backfillIdempotent() async throws {
        let replay = try ReplaySandbox()
        await replay.run(
            "locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin")
        #expect(
            await replay.run(
                "observe", "backfill", "--location", "Berlin", "--from", "2026-01-01", "--to", "2026-04-15"
            ).code == 0)
        let once = try await replay.box.exportedObservationTimes("Berlin", source: "era5")
        #expect(once.count == 105 * 24)
        #expect(
            await replay.run(
                "observe", "backfill", "--location", "Berlin", "--from", "2026-01-01", "--to", "2026-04-15"
            ).code == 0)
        #expect(try await replay.box.exportedObservationTimes("Berlin", source: "era5") == once)
        #expect(replay.server.requests.filter { $0.hasPrefix("/v1/archive") }.count == 4)  // 105 days in chunks of 92
    }

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
        // As the user reads them back: one hour, both values.
        let export = await box.run(
            "export", "observations", "--location", "Here", "--var", "temperature_2m,precipitation")
        #expect(export.code == 0, "\(export.stderrText)")
        #expect(
            export.stdout.split(separator: "\r\n") == [
                "location,source,time,temperature_2m,precipitation", "Here,station,2026-11-01T00:00:00Z,5,1.2"
            ], "\(export.stdout)")
    }
}

@Suite("wxdb observe import")
struct ObserveImportTests {
    @Test("a station CSV with a malformed row is refused with the row's line number, and nothing is stored")
    func malformedRow() async throws {
        let box = Sandbox()
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        let path = box.folder.appendingPathComponent("station.csv").path
        try
            "time,temperature_2m,precipitation\n2026-11-01T00:00Z,3.5,0\n2026-11-01T01:00Z,3.1,\n2026-11-01T02:00Z,warm,0.2\n2026-11-01T03:00Z,2.9,0\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        let refused = await box.run("observe", "import", path, "--location", "Here")
        #expect(refused.code == 1)
        #expect(refused.stderrText.contains("line 4"))
        #expect(refused.stderrText.contains("'warm'"))
        #expect(try counts(box.db)["observations"] == 0)

        let skipped = await box.run(
            "observe", "import", path, "--location", "Here", "--skip-bad-rows", "--source", "station")
        #expect(skipped.code == 0)
        #expect(skipped.stderrText.contains("line 4"))
        #expect(try counts(box.db)["observations"] == 3)
    }

    static let badStationFiles: [(String, String)] = [
        ("", "empty"),
        ("when,temperature_2m\n", "first column must be 'time'"),
        ("time,temperature_3m\n", "unknown variable 'temperature_3m'"),
        ("time,temperature_2m\n2026-11-01T00:00,1\n", "has no zone"),
        ("time,temperature_2m\n2026-11-01T00:00Z,1,2\n", "expected 2 fields"),
        ("time,temperature_2m\n2026-11-01T00:00Z,1\n2026-11-01T01:00+01:00,2\n", "already given on line 2"),
        ("time,temperature_2m\n\"2026-11-01T00:00Z,1\n", "line 2")
    ]

    @Test("bad station files are refused with what is wrong", arguments: badStationFiles)
    func badFiles(_ body: String, _ expected: String) async throws {
        let box = Sandbox()
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        let path = box.folder.appendingPathComponent("bad.csv").path
        try body.write(toFile: path, atomically: true, encoding: .utf8)
        let result = await box.run("observe", "import", path, "--location", "Here")
        #expect(result.code == 1)
        #expect(result.stderrText.contains(expected), "\(result.stderrText)")
        #expect(try counts(box.db)["observations"] == 0)
    }
}

@Suite("Ingest: model runs and the free API's budget", .serialized)
struct IngestBudgetTests {
    @Test("a model with metadata stores its initialisation time as issued_at; a blend falls back to the first fetch")
    func modelRunTime() async throws {
        let replay = try ReplaySandbox()
        replay.server.registerMeta(model: "dwd_icon", lastRunInitialisationTime: 1_785_001_200)
        await replay.run(
            "locations", "add", "Here", "--lat", "10", "--lon", "20", "--models", "icon_seamless,best_match")
        let result = await replay.run("ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        let runs = try replay.box.storedRuns().map { ($0.model, $0.issuedAt, $0.issuedAtSource, $0.firstFetch) }
            .sorted { $0.0 < $1.0 }
        #expect(runs.count == 2)
        #expect(runs[0].0 == "best_match" && runs[0].2 == "first_fetch" && runs[0].1 == runs[0].3)
        #expect(runs[1].0 == "icon_seamless" && runs[1].2 == "model_run" && runs[1].1 == 1_785_001_200)
    }

    @Test("an unreachable metadata server never fails the ingest")
    func metadataDown() async throws {
        let replay = try ReplaySandbox()
        replay.server.enqueue(.reset, times: 5, path: "/data")
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20", "--models", "gfs_seamless")
        let result = await replay.run("ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(try replay.box.storedRuns().map(\.issuedAtSource) == ["first_fetch"])
    }

    @Test("a request that would exceed the free hourly limit is not sent, and the reason says so")
    func hourlyBudget() async throws {
        let replay = try ReplaySandbox()
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20")
        // Pretend 4,998 weighted calls went out this hour.
        let now = Int64(replay.box.now.timeIntervalSince1970)
        try SQLiteStore.open(path: replay.box.db).logFetch(
            FetchRecord(fetchedAt: now - now % 3600, origin: .fetch, apiWeight: 4998), locationID: nil, model: nil,
            outcome: "stored", runID: nil, error: nil)
        let result = await replay.run("ingest")
        #expect(result.code == 1)
        #expect(replay.forecastRequests.isEmpty)
        #expect(result.stderrText.contains("free hourly limit"))
    }

    @Test("the request asks for exactly the kept variables, metric units, unix time and 16 + 1 days")
    func requestShape() async throws {
        let replay = try ReplaySandbox()
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20", "--timezone", "Europe/Berlin")
        #expect(await replay.run("ingest").code == 0)
        let request = try #require(replay.forecastRequests.first)
        for part in [
            "hourly=" + Variables.hourlyNames.joined(separator: ","),
            "daily=" + Variables.dailyNames.joined(separator: ","),
            "timeformat=unixtime", "forecast_days=16", "past_days=1", "temperature_unit=celsius", "wind_speed_unit=kmh",
            "precipitation_unit=mm", "timezone=Europe/Berlin", "models=best_match"
        ] {
            #expect(request.contains(part), "\(part) missing from \(request)")
        }
    }
}
