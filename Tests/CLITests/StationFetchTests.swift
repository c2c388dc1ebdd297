import Foundation
import Testing
import WxCore
import WxReplay

/// A sandbox whose station archives (IEM asos.py, ISD-Lite, the ISD station list) are the replay server's.
final class StationArchiveSandbox {
    let box = Sandbox()
    let server: ReplayServer

    init() throws {
        server = ReplayServer(fixtures: packageRoot.appendingPathComponent("Fixtures"))
        try server.start()
        let base = server.baseURL
        box.environment["WXDB_IEM_ASOS_URL"] = base + "/cgi-bin/request/asos.py"
        box.environment["WXDB_ISD_LITE_URL"] = base + "/pub/data/noaa/isd-lite"
        box.environment["WXDB_ISD_HISTORY_URL"] = base + "/pub/data/noaa/isd-history.csv"
    }

    deinit {
        server.stop()
        try? FileManager.default.removeItem(at: box.folder)
    }

    func run(_ arguments: String...) async -> RunResult { await box.run(arguments) }

    func requests(_ prefix: String) -> [String] { server.requests.filter { $0.hasPrefix(prefix) } }
}

private func utc(_ y: Int, _ mo: Int, _ d: Int, _ h: Int) -> Int64 {
    UTCTime.days(fromCivil: y, month: mo, day: d) * 86400 + Int64(h * 3600)
}

@Suite("Official stations fetched (observe stations, observe fetch) from the replay archives")
struct StationFetchTests {
    @Test("observe stations --near lists the stations within --within, nearest first, and caches the list")
    func stationsNear() async throws {
        let s = try StationArchiveSandbox()
        #expect(
            await s.run("locations", "add", "Hamburg", "--lat", "53.55", "--lon", "9.99", "--elevation", "20").code == 0
        )
        let result = await s.run("observe", "stations", "--near", "Hamburg", "--within", "30", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let json = try parseJSON(result.stdout)
        let rows = try #require(json["stations"]?.arrayValue)
        #expect(rows.map { $0["id"]?.stringValue } == ["101470-99999", "101450-99999"])
        #expect(rows.first?["icao"]?.stringValue == "EDDH")
        // 53.633, 9.983 is 9.2 km from 53.55, 9.99; 16 m against 20 m.
        #expect(near(rows.first?["distance_km"]?.numberValue, 9.2, 0.05))
        #expect(rows.first?["height_difference_m"]?.numberValue == -4)
        #expect(rows.first?["first_year"]?.numberValue == 1931)
        let again = await s.run("observe", "stations", "--near", "Hamburg", "--within", "60")
        #expect(again.code == 0)
        #expect(again.stdout.contains("LUBECK BLANKENSEE"))
        #expect(s.requests("/pub/data/noaa/isd-history.csv").count == 1, "the second listing reads the cached list")
        let none = await s.run("observe", "stations", "--near", "Hamburg", "--within", "1")
        #expect(none.code == 1)
        #expect(none.stderrText.contains("no station in NOAA's list within 1 km of Hamburg"))
    }

    @Test("observe fetch --station EDDH asks asos.py for routine UTC metric reports and stores metar:EDDH")
    func fetchMETAR() async throws {
        let s = try StationArchiveSandbox()
        #expect(
            await s.run("locations", "add", "Hamburg", "--lat", "53.55", "--lon", "9.99", "--timezone", "Europe/Berlin")
                .code == 0)
        // One 503 first: waited out with backoff, then the answer.
        s.server.enqueue(.status(503, reason: nil), times: 1, path: "/cgi-bin/request/asos.py")
        let result = await s.run(
            "observe", "fetch", "--location", "Hamburg", "--station", "EDDH", "--from", "2026-07-01", "--to",
            "2026-07-01")
        #expect(result.code == 0, "\(result.stderrText)")
        let asked = s.requests("/cgi-bin/request/asos.py")
        #expect(asked.count == 2)
        for part in ["station=EDDH", "report_type=3", "tz=Etc/UTC", "tmpc", "p01m", "year1=2026", "month1=6", "day1=30"]
        {
            #expect(asked.last?.contains(part) == true, "\(part) in \(asked.last ?? "")")
        }
        #expect(result.stderrText.contains("attempt 1 failed (HTTP 503)"), "\(result.stderrText)")
        let stored = try storedObservations(s.box.db, source: "metar:EDDH")
        // The local day 2026-07-01 (CEST) is 2026-06-30 22:00 UTC to 2026-07-01 21:00 UTC at the hour.
        #expect(stored.count == 24)
        #expect(stored.keys.min() == utc(2026, 6, 30, 22))
        // 11:50's report for 12:00: 12.8 / 9.8 °C, calm, no rain over the hour after the 10:50 report.
        #expect(
            stored[utc(2026, 7, 1, 12)] == [
                "temperature_2m": 12.8, "dew_point_2m": 9.8, "wind_speed_10m": 0, "precipitation": 0,
                "pressure_msl": 1013.2
            ])
        // 13:00: 3.5 m/s sent as 6.80 kt = 12.59 km/h from 205°.
        #expect(stored[utc(2026, 7, 1, 13)]?["wind_speed_10m"] == 12.59)
        #expect(stored[utc(2026, 7, 1, 13)]?["wind_direction_10m"] == 205)
        // The download is whole UTC days, so even the first hour has the routine report before it.
        #expect(stored[utc(2026, 6, 30, 22)]?["precipitation"] == 0)
        #expect(
            result.stderrText.contains("Stored 24 of 24 hours for Hamburg (source metar:EDDH)"), "\(result.stderrText)")
    }

    @Test(
        "observe fetch: a lasting 503 is said plainly, stores nothing; the next run resumes with the missing year only")
    func fetchISDResumes() async throws {
        let s = try StationArchiveSandbox()
        #expect(
            await s.run("locations", "add", "Hamburg", "--lat", "53.55", "--lon", "9.99", "--timezone", "UTC").code == 0
        )
        s.server.enqueue(.status(503, reason: nil), times: 20, path: "/pub/data/noaa/isd-lite/2025/")
        let failed = await s.run(
            "observe", "fetch", "--location", "Hamburg", "--station", "101470-99999", "--from", "2024-12-31", "--to",
            "2025-01-01")
        #expect(failed.code == 1)
        let text = failed.stderrText
        #expect(text.contains("Error: "), "\(text)")
        #expect(text.contains("answered 503 Service Unavailable for ISD-Lite 101470-99999 2025"), "\(text)")
        #expect(text.contains("run the same command again"), "\(text)")
        #expect(text.contains("the 1 of 2 parts already downloaded are kept"), "\(text)")
        #expect(try storedObservations(s.box.db, source: "isd:101470-99999").isEmpty)
        #expect(s.requests("/pub/data/noaa/isd-lite/2024/").count == 1, "\(s.server.requests)")

        s.server.resetFaults()  // and the request log
        let resumed = await s.run(
            "observe", "fetch", "--location", "Hamburg", "--station", "101470-99999", "--from", "2024-12-31", "--to",
            "2025-01-01")
        #expect(resumed.code == 0, "\(resumed.stderrText)")
        #expect(s.requests("/pub/data/noaa/isd-lite/2024/").isEmpty, "2024 came from the kept download")
        #expect(s.requests("/pub/data/noaa/isd-lite/2025/").count == 1)
        #expect(resumed.stderrText.contains("Downloaded 1 part(s), reused 1"), "\(resumed.stderrText)")
        let stored = try storedObservations(s.box.db, source: "isd:101470-99999")
        #expect(stored.count == 48)
        // 2025-01-01 03 UTC: 53 → 5.3 °C, 23 → 2.3 °C, 35 → 3.5 m/s = 12.6 km/h from 55°, 12 → 1.2 mm.
        #expect(
            stored[utc(2025, 1, 1, 3)] == [
                "temperature_2m": 5.3, "dew_point_2m": 2.3, "pressure_msl": 1013.2, "wind_speed_10m": 12.6,
                "wind_direction_10m": 55, "precipitation": 1.2
            ])
        #expect(stored[utc(2024, 12, 31, 12)]?["temperature_2m"] == 12.5)
        // The station list says where the station is: 9 km away, no warning.
        #expect(!resumed.stderrText.contains("Warning"), "\(resumed.stderrText)")
    }

    @Test("observe fetch: a station far from the location is stored with a warning naming both")
    func fetchFar() async throws {
        let s = try StationArchiveSandbox()
        #expect(
            await s.run("locations", "add", "Garmisch", "--lat", "47.49", "--lon", "11.09", "--elevation", "708")
                .code == 0)
        let result = await s.run(
            "observe", "fetch", "--location", "Garmisch", "--station", "109610-99999", "--from", "2025-01-01", "--to",
            "2025-01-01")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(
            result.stderrText.contains(
                "Warning: station 109610-99999 (47.4210, 10.9850, 2964 m) is 2256 m higher or lower from Garmisch"),
            "\(result.stderrText)")
    }
}
