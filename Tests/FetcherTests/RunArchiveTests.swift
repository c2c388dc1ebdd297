import Testing
import WxFetcher

@Suite("Single Runs API: run times, cadence and archive start")
struct RunArchiveTests {
    @Test(
        "an update interval is made a multiple of 3 hours, never finer",
        arguments: [(3600, 10800), (10800, 10800), (14400, 21600), (21600, 21600), (43200, 43200), (0, 10800)])
    func usableInterval(_ given: Int64, _ expected: Int64) {
        #expect(RunArchive.usable(given) == expected)
    }

    @Test("run times are aligned to 00 UTC each day and stay inside [from, to)")
    func aligned() {
        let day: Int64 = 1_785_024_000  // 2026-07-26T00:00Z
        #expect(
            RunArchive.runTimes(from: day - 3600, to: day + 13 * 3600, interval: 21600) == [
                day, day + 21600, day + 43200
            ])
        // 9 hours does not divide a day: each day starts again at 00 UTC.
        #expect(
            RunArchive.runTimes(from: day, to: day + 86400 + 1, interval: 9 * 3600) == [
                day, day + 9 * 3600, day + 18 * 3600, day + 86400
            ])
        #expect(RunArchive.runTimes(from: day, to: day, interval: 21600).isEmpty)
    }

    @Test("the archive starts on 2 April 2026, ECMWF IFS HRES in March 2024; run= is minutes in UTC")
    func starts() {
        #expect(RunArchive.start(of: "icon_seamless") == 1_775_088_000)
        #expect(RunArchive.start(of: "ecmwf_ifs") == 1_709_251_200)
        #expect(RunArchive.runParameter(1_775_109_600) == "2026-04-02T06:00")
    }

    @Test("with an API key, single runs go to the customer- host with apikey=, as ingest's requests do")
    func customerHost() throws {
        let endpoints = Endpoints.from(environment: [:], apiKey: "secret")
        let url = try endpoints.url(endpoints.singleRuns, [("run", "2026-05-01T00:00")])
        #expect(url.host == "customer-single-runs-api.open-meteo.com")
        #expect(url.query?.contains("apikey=secret") == true)
        #expect(
            Endpoints.from(environment: ["WXDB_SINGLE_RUNS_URL": "http://127.0.0.1:1/x"]).singleRuns
                == "http://127.0.0.1:1/x")
    }
}
