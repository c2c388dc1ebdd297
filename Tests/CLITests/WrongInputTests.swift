import Foundation
import Testing
import WxCore
import WxSQLite

@testable import WxCLI

/// Issue 10 point 7: inputs that are wrong but look fine.
@Suite("inputs that are wrong but look fine")
struct WrongInputTests {
    func berlin() async throws -> Sandbox {
        let box = Sandbox()
        #expect(
            await box.run("locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--timezone", "UTC").code
                == 0)
        return box
    }

    @Test("a response for a grid point more than 50 km away is refused, naming both places, unless --force")
    func farGridPoint() async throws {
        let box = try await berlin()
        defer { box.remove() }
        let d = utcMidnight(2026, 7, 20)
        let copenhagen = TestResponse(latitude: 55.68, longitude: 12.57, start: d, hours: 24) { _ in 5 }
        let path = try box.write("copenhagen.json", copenhagen.json())
        let before = try counts(box.db)
        let refused = await box.run("import", path, "--location", "Berlin", "--fetched-at", CivilTime.isoUTC(d))
        #expect(refused.code == 1)
        #expect(refused.stderrText.hasPrefix("Error: "))
        // Both coordinates and the distance (haversine by hand: 355.6 km).
        #expect(refused.stderrText.contains("55.68, 12.57"), "\(refused.stderrText)")
        #expect(refused.stderrText.contains("52.52, 13.41"), "\(refused.stderrText)")
        #expect(refused.stderrText.contains("356 km"), "\(refused.stderrText)")
        #expect(refused.stderrText.contains("--force"))
        #expect(try counts(box.db) == before)
        // A grid point 20 km off (a coarse model's cell) is the same place.
        let near = TestResponse(latitude: 52.7, longitude: 13.41, start: d, hours: 24) { _ in 5 }
        #expect(
            await box.run(
                "import", try box.write("near.json", near.json()), "--location", "Berlin", "--fetched-at",
                CivilTime.isoUTC(d)
            ).code == 0)
        let forced = await box.run(
            "import", path, "--location", "Berlin", "--fetched-at", CivilTime.isoUTC(d + 3600), "--force")
        #expect(forced.code == 0, "\(forced.stderrText)")
    }

    @Test("--fetched-at in the future is refused beyond a few minutes of clock difference")
    func futureFetchTime() async throws {
        let box = try await berlin()
        defer { box.remove() }
        let now = Int64(box.now.timeIntervalSince1970)
        let response = TestResponse(start: now - now % 3600, hours: 24) { _ in 5 }
        let path = try box.write("run.json", response.json())
        let before = try counts(box.db)
        for future in ["2030-01-01T00:00Z", CivilTime.isoUTC(now + 3600)] {
            let refused = await box.run("import", path, "--location", "Berlin", "--fetched-at", future)
            #expect(refused.code == 1)
            #expect(refused.stderrText.contains("is in the future"), "\(refused.stderrText)")
            #expect(try counts(box.db) == before)
        }
        let list = await box.run("locations", "list", "--format", "json")
        #expect(!list.stdout.contains("2030"))
        // A clock a minute behind the machine that saved the file is fine.
        #expect(
            await box.run("import", path, "--location", "Berlin", "--fetched-at", CivilTime.isoUTC(now + 60)).code == 0)
    }
}

@Suite("observe backfill stops at now", .serialized)
struct BackfillNowTests {
    @Test("a range reaching past now stores only past hours, and says where it stopped")
    func stopsAtNow() async throws {
        let replay = try ReplaySandbox()
        defer { replay.box.remove() }
        await replay.run("locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--timezone", "UTC")
        let now = Int64(replay.box.now.timeIntervalSince1970)
        let result = await replay.run(
            "observe", "backfill", "--location", "Berlin", "--from", CivilTime.dateString(unix: now - 5 * 86400),
            "--to", CivilTime.dateString(unix: now + 5 * 86400))
        #expect(result.code == 0, "\(result.stderrText)")
        let lastHour = now - now % 3600
        // What export observations prints: up to the last complete hour, none later.
        let times = try await replay.box.exportedObservationTimes("Berlin", source: "era5")
        let instants = times.compactMap(CivilTime.parse).map { $0.wallSeconds - Int64($0.offset ?? 0) }
        #expect(instants.count == times.count)
        #expect(instants.max() == lastHour)
        // Five whole past days and today's hours up to the last complete one.
        #expect(Int64(times.count) == 5 * 24 + (lastHour - (now - now % 86400)) / 3600 + 1)
        #expect(
            result.stderrText.contains("stopped at \(CivilTime.isoUTC(lastHour)), the last complete hour"),
            "\(result.stderrText)")
        #expect(!replay.server.requests.contains { $0.contains("end_date=" + CivilTime.dateString(unix: now + 86400)) })
        let future = await replay.run(
            "observe", "backfill", "--location", "Berlin", "--from", CivilTime.dateString(unix: now + 86400),
            "--to", CivilTime.dateString(unix: now + 5 * 86400))
        #expect(future.code == 1)
        #expect(future.stderrText.contains("is in the future"), "\(future.stderrText)")
    }
}
