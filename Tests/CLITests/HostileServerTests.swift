// Issue 11, points 7-10 and parts of 17, through the in-process CLI and the replay server: a
// server that answers for the wrong place, without end, with a zone that is not one, with 429s
// that say how long to wait, or with the key echoed back; and the small things around them.
import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay
import WxSQLite

@testable import WxCLI

/// Records the waits asked of the HTTP client and returns at once.
final class SleepLog: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [TimeInterval] = []
    var waits: [TimeInterval] { lock.withLock { list } }
    var sleep: @Sendable (TimeInterval) async throws -> Void { { [self] s in lock.withLock { list.append(s) } } }
}

extension ReplaySandbox {
    func text(_ sql: String) throws -> [String] {
        try SQLiteBackdoor(box.db).db.rows(sql) { $0.string(0) }
    }
    func cleanup() { try? FileManager.default.removeItem(at: box.folder) }
}

@Suite("A hostile server, through the CLI", .serialized)
struct HostileServerCLITests {
    /// Each location's runs with their grid point farther than 50 km from it.
    static let farRuns = """
        SELECT count(*) FROM forecast_runs r JOIN locations l ON l.id = r.location_id
        WHERE abs(r.grid_latitude - l.latitude) > 0.5 OR abs(r.grid_longitude - l.longitude) > 0.5
        """

    @Test("swapped batch order: each element stored for the location its location_id names")
    func swappedOrder() async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        #expect(
            await replay.run(
                "locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin"
            ).code == 0)
        #expect(
            await replay.run(
                "locations", "add", "Florida", "--lat", "27.0", "--lon", "-81.0", "--timezone", "America/New_York"
            ).code == 0)
        replay.server.enqueue(.swappedOrder)
        let result = await replay.run("ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(try await replay.count("forecast_runs") == 2)
        #expect(try replay.scalar(Self.farRuns) == 0)
        #expect(
            try replay.text(
                "SELECT r.timezone FROM forecast_runs r JOIN locations l ON l.id = r.location_id WHERE l.name = 'Berlin'"
            ) == ["Europe/Berlin"])
    }

    @Test("location_ids pointing at the other location: both refused and logged, nothing stored")
    func wrongLocationID() async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        await replay.run("locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--timezone", "UTC")
        await replay.run("locations", "add", "Florida", "--lat", "27.0", "--lon", "-81.0", "--timezone", "UTC")
        replay.server.enqueue(.wrongLocationID)
        let result = await replay.run("ingest")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("more than 50 km away"), "\(result.stderrText)")
        #expect(try await replay.count("forecast_runs") == 0)
        #expect(try replay.box.failedFetches() == ["Berlin": 1, "Florida": 1])
    }

    @Test("a grid point far from the location: that location refused and logged, the rest of the batch stored")
    func farGridPoint() async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        await replay.run("locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--timezone", "UTC")
        await replay.run("locations", "add", "Tokyo", "--lat", "35.68", "--lon", "139.69", "--timezone", "UTC")
        replay.server.enqueue(.farGridPoint(latitude: 27.0, longitude: -81.0))
        let result = await replay.run("ingest")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("1 stored, 0 repeated, 1 failed"), "\(result.stderrText)")
        #expect(result.stderrText.contains("Berlin: the response describes the grid point 27, -81"))
        #expect(
            try replay.box.locationsWithRuns() == ["Tokyo"])
        #expect(try replay.box.failedFetches() == ["Berlin": 1, "Tokyo": 0])
    }

    @Test("an endless body is cut off at the documented limit: clear error, nothing stored, logged")
    func endlessBody() async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20", "--timezone", "UTC")
        replay.server.enqueue(.endlessBody, times: 4)
        let result = await replay.run("ingest")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("grew past 64 MiB"), "\(result.stderrText)")
        #expect(replay.forecastRequests.count == 1, "an oversized answer is not fetched again")
        #expect(try await replay.count("forecast_runs") == 0)
        #expect(try replay.scalar("SELECT count(*) FROM fetch_log WHERE outcome = 'failed'") == 1)
    }

    @Test(
        "a time zone from the server that is no zone is never adopted", arguments: [(60_007, Int32(1)), (40, Int32(0))])
    func serverZoneNotAdopted(length: Int, code: Int32) async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20")
        replay.server.enqueue(.hugeTimezone(length: length))
        let result = await replay.run("ingest")
        #expect(result.code == code, "\(result.stderrText)")
        #expect(result.stderrText.utf8.count < 2000)
        #expect(try replay.box.storedLocations().map(\.timezone) == ["auto"])
        // The next, honest answer teaches the zone as before.
        #expect(await replay.run("ingest").code == 0)
        #expect(try replay.box.storedLocations().map(\.timezone) == ["GMT"])
    }

    @Test("a geocoder's zone that is no zone is not adopted; the location waits for the first ingest")
    func geocoderZoneNotAdopted() async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        let zone = String(repeating: "Z", count: 60_007)
        replay.server.registerGeocoding(
            name: "Hugeville",
            body: Data(
                """
                {"results":[{"name":"Hugeville","latitude":10,"longitude":20,"elevation":1e300,"timezone":"\(zone)","country_code":"XX","country":"X"}]}
                """.utf8))
        let result = await replay.run("locations", "add", "Hugeville")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.utf8.count < 1000)
        #expect(try replay.box.storedLocations().map(\.timezone) == ["auto"])
        #expect(
            try replay.box.storedLocations().map(\.elevation) == [nil], "an impossible elevation is dropped")
    }

    @Test(
        "a model run time from the future or long ago in meta.json is not believed",
        arguments: [86_400 * 3, -86_400 * 30])
    func implausibleModelRun(offset: Int) async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        replay.server.registerMeta(model: "dwd_icon", lastRunInitialisationTime: 1_785_000_000 + offset)
        await replay.run(
            "locations", "add", "Here", "--lat", "10", "--lon", "20", "--timezone", "UTC", "--models", "icon_seamless")
        #expect(await replay.run("ingest").code == 0)
        #expect(try replay.box.storedRuns().map(\.issuedAtSource) == ["first_fetch"])
    }

    @Test("locations list renders a 120,000-character name (a linear table), without trailing blanks")
    func hugeNameTable() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let name = String(repeating: "n", count: 120_000)
        #expect(await box.run("locations", "add", "--lat", "1", "--lon", "2", "--", name).code == 0)
        #expect(await box.run("locations", "add", "--lat", "3", "--lon", "4", "--", "Short").code == 0)
        // --wide: every column, however long the name (without it the table is cut to 100 characters).
        let list = await box.run("locations", "list", "--wide")
        #expect(list.code == 0)
        let lines = list.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
        #expect(lines.count == 4)
        #expect(lines.contains { $0.hasPrefix(name + "  ") })
        #expect(lines.allSatisfy { !$0.hasSuffix(" ") })
        // The short name's row is padded to the long one's width, then its numbers follow.
        #expect(lines.contains { $0.hasPrefix("Short" + String(repeating: " ", count: 120_000 - 5) + "  ") })
    }

    struct RateCase: Sendable, CustomStringConvertible {
        var kind: String
        var fault: ReplayServer.Fault
        var code: Int32
        var waits: [TimeInterval]
        var requests: Int
        var says: String
        var description: String { kind }
    }

    @Test(
        "429: Retry-After and the minutely limit are waited out; the hourly limit is not retried",
        arguments: [
            RateCase(
                kind: "Retry-After 30",
                fault: .tooManyRequests(reason: "Too many concurrent requests", retryAfter: "30"),
                code: 0, waits: [30], requests: 2, says: "1 stored"),
            // The sandbox's clock is on a whole minute: the next one starts in 60 s, plus 1 s of margin.
            RateCase(kind: "minutely", fault: .rateLimit, code: 0, waits: [61], requests: 2, says: "1 stored"),
            RateCase(
                kind: "hourly", fault: .tooManyRequests(reason: ReplayServer.hourlyLimitReason, retryAfter: nil),
                code: 1, waits: [], requests: 1, says: "try again next hour")
        ])
    func rateLimits(_ c: RateCase) async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        let sleeps = SleepLog()
        replay.box.sleep = sleeps.sleep
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20", "--timezone", "UTC")
        replay.server.enqueue(c.fault)
        let result = await replay.run("ingest")
        #expect(result.code == c.code, "\(result.stderrText)")
        #expect(sleeps.waits == c.waits)
        #expect(replay.forecastRequests.count == c.requests)
        #expect(result.stderrText.contains(c.says), "\(result.stderrText)")
    }

    @Test("a key echoed in the server's reason reaches neither stderr nor the fetch log")
    func keyEcho() async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20", "--timezone", "UTC")
        replay.server.enqueue(.echoKey(status: 400))
        let ingest = await replay.run("ingest", "--api-key", "S3CRETKEY")
        #expect(ingest.code == 1)
        #expect(ingest.stderrText.contains("Invalid API key [API key]"), "\(ingest.stderrText)")
        replay.server.enqueue(.echoKey(status: 400), path: "/v1/archive")
        let backfill = await replay.run(
            "observe", "backfill", "--location", "Here", "--from", "2026-01-01", "--to", "2026-01-02", "--api-key",
            "S3CRETKEY")
        #expect(backfill.code == 1)
        replay.server.enqueue(.echoKey(status: 401), path: "/v1/search")
        let geocode = await replay.run("locations", "add", "Somewhere", "--api-key", "S3CRETKEY")
        #expect(geocode.code == 1)
        for text in [ingest.stderrText, backfill.stderrText, geocode.stderrText] {
            #expect(!text.contains("S3CRETKEY"), "\(text)")
            #expect(!text.isEmpty)
        }
        let logged = try replay.text("SELECT coalesce(error, '') || coalesce(request, '') FROM fetch_log")
        #expect(!logged.isEmpty)
        #expect(logged.allSatisfy { !$0.contains("S3CRETKEY") }, "\(logged)")
    }

    @Test("a backfill that fails partway says what it stored and where to go on")
    func backfillPartway() async throws {
        let replay = try ReplaySandbox()
        defer { replay.cleanup() }
        await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20", "--timezone", "UTC")
        // The first 92-day chunk is served, the second refused (400 is not retried).
        replay.server.enqueue(.delay(seconds: 0), path: "/v1/archive")
        replay.server.enqueue(.status(400, reason: "Something is wrong"), path: "/v1/archive")
        let result = await replay.run(
            "observe", "backfill", "--location", "Here", "--from", "2025-01-01", "--to", "2025-06-30")
        #expect(result.code == 1)
        #expect(
            result.stderrText.contains(
                "2208 hours of era5 observations from 2025-01-01 through 2025-04-02 were stored and are kept"),
            "\(result.stderrText)")
        #expect(result.stderrText.contains("--from 2025-04-03"))
        #expect(try await replay.box.exportedObservationTimes("Here", source: "era5").count == 2208)
        // A failure in the first chunk says nothing was stored.
        replay.server.enqueue(.status(400, reason: "Something is wrong"), path: "/v1/archive")
        let first = await replay.run(
            "observe", "backfill", "--location", "Here", "--from", "2024-01-01", "--to", "2024-01-02")
        #expect(first.code == 1)
        #expect(first.stderrText.contains("Nothing was stored"), "\(first.stderrText)")
    }
}

@Suite("Import: a continued run and a byte order mark")
struct ImportContinuedTests {
    /// The Copenhagen sample written with unix times, and the same forecast with the window moved
    /// a day on (first 24 hours dropped, 24 new ones without values, no daily rows).
    static func files(in folder: URL) throws -> (original: String, moved: String) {
        let raw = try Data(
            contentsOf: packageRoot.appendingPathComponent(
                "Fixtures/forecast-current-hourly-daily-iso8601-copenhagen.json"))
        let times = try ForecastDecoder.decodeSingle(raw, defaultModel: "best_match").models[0].hourlyTimes
        var doc = try #require(try JSONSerialization.jsonObject(with: raw) as? [String: Any])
        var hourly = try #require(doc["hourly"] as? [String: Any])
        hourly["time"] = times.map { NSNumber(value: $0) }
        doc["hourly"] = hourly
        let original = folder.appendingPathComponent("original.json")
        try JSONSerialization.data(withJSONObject: doc).write(to: original)
        var moved = hourly
        for (key, value) in hourly {
            let column = try #require(value as? [Any])
            moved[key] = Array(column.dropFirst(24)) + Array(repeating: NSNull(), count: 24)
        }
        moved["time"] =
            times.dropFirst(24).map { NSNumber(value: $0) }
            + (1...24).map { NSNumber(value: times.last! + Int64($0) * 3600) }
        doc["hourly"] = moved
        doc.removeValue(forKey: "daily")
        doc.removeValue(forKey: "daily_units")
        let movedURL = folder.appendingPathComponent("moved.json")
        try JSONSerialization.data(withJSONObject: doc).write(to: movedURL)
        return (original.path, movedURL.path)
    }

    @Test("a continued-window import says the run grew, not '0 new, 1 repeated'")
    func continuedSaysSo() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let (original, moved) = try Self.files(in: box.folder)
        #expect(
            await box.run("locations", "add", "Copenhagen", "--lat", "55.68", "--lon", "12.57", "--timezone", "UTC")
                .code == 0)
        let first = await box.run("import", original, "--location", "Copenhagen", "--fetched-at", "2026-07-20T06:00Z")
        #expect(first.stderrText.contains("1 new run(s)"), "\(first.stderrText)")
        let second = await box.run("import", moved, "--location", "Copenhagen", "--fetched-at", "2026-07-21T06:00Z")
        #expect(second.code == 0)
        #expect(
            second.stderrText.contains("0 new run(s) (0 hours), 1 run(s) continued (+24 hours), 0 repeated"),
            "\(second.stderrText)")
        let again = await box.run("import", moved, "--location", "Copenhagen", "--fetched-at", "2026-07-21T07:00Z")
        #expect(again.stderrText.contains("0 new run(s) (0 hours), 1 repeated"), "\(again.stderrText)")
    }

    @Test("a response file that starts with a UTF-8 byte order mark is imported")
    func byteOrderMark() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let raw = try Data(
            contentsOf: packageRoot.appendingPathComponent(
                "Fixtures/forecast-current-hourly-daily-iso8601-copenhagen.json"))
        let path = box.folder.appendingPathComponent("bom.json")
        try (Data([0xEF, 0xBB, 0xBF]) + raw).write(to: path)
        await box.run("locations", "add", "Copenhagen", "--lat", "55.68", "--lon", "12.57", "--timezone", "UTC")
        let result = await box.run("import", path.path, "--location", "Copenhagen", "--fetched-at", "2026-07-20T06:00Z")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("1 new run(s)"))
    }
}
