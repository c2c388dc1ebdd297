import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay

@testable import WxCLI

/// Issue 31 through the command line: an ensemble model beside a deterministic one, ingested from the
/// replay server's Ensemble API, scored by `query ensemble`.
@Suite("Ensemble commands")
struct EnsembleCommandTests {
    static let now = Date(timeIntervalSince1970: 1_785_067_200)  // 2026-07-26 12:00 UTC

    func setUp(engine: StoreEngine = .sqlite) throws -> (ReplayServer, Sandbox) {
        let server = ReplayServer(fixtures: URL(fileURLWithPath: fixturesPath))
        server.now = { Self.now }
        try server.start()
        let box = Sandbox()
        if engine == .postgres { box.environment["WXDB_DB"] = try engine.freshDatabase("ensemble") }
        box.now = Self.now
        for (name, path) in [
            ("WXDB_FORECAST_URL", "/v1/forecast"), ("WXDB_META_URL", "/data"), ("WXDB_ENSEMBLE_URL", "/v1/ensemble"),
            ("WXDB_ARCHIVE_URL", "/v1/archive")
        ] {
            box.environment[name] = server.baseURL + path
        }
        return (server, box)
    }

    @Test(
        "locations add takes an ensemble; ingest stores its members once; query ensemble scores them",
        arguments: StoreEngine.all)
    func ingestRepeatAndScore(engine: StoreEngine) async throws {
        let (server, box) = try setUp(engine: engine)
        defer {
            server.stop()
            box.remove()
        }
        let add = await box.run(
            "locations", "add", "Bern", "--lat", "46.95", "--lon", "7.45", "--timezone", "GMT", "--models",
            "icon_seamless,icon_d2_eps")
        #expect(add.code == 0, "\(add.stderrText)")
        let first = await box.run("ingest")
        #expect(first.code == 0, "\(first.stderrText)")
        #expect(first.stderrText.contains("ensembles 1 stored, 0 repeated, 0 failed"))
        // The deterministic model still came from the forecast API, without the ensemble in its request.
        #expect(first.stderrText.contains("ingest: 1 stored"))
        #expect(server.requests.allSatisfy { !$0.hasPrefix("/v1/forecast") || !$0.contains("icon_d2_eps") })
        let again = await box.run("ingest")
        #expect(again.stderrText.contains("ensembles 0 stored, 1 repeated, 0 failed"))

        // Nothing observed yet: a clear error, exit 1.
        let none = await box.run("query", "ensemble", "--location", "Bern", "--source", "station")
        #expect(none.code == 1 && none.stderrText.contains("nothing to show for Bern"))

        // The archive's truth for the run's hours, imported as a station.
        let archive = try Data(
            contentsOf: URL(
                string: server.baseURL
                    + "/v1/archive?latitude=46.95&longitude=7.45&hourly=temperature_2m&start_date=2026-07-26"
                    + "&end_date=2026-07-28&timeformat=unixtime")!)
        let object = try #require(try JSONSerialization.jsonObject(with: archive) as? [String: Any])
        let hourly = try #require(object["hourly"] as? [String: Any])
        let times = try #require(hourly["time"] as? [Int])
        let values = try #require(hourly["temperature_2m"] as? [Double])
        var csv = "time,temperature_2m\n"
        for (time, value) in zip(times, values) { csv += CivilTime.isoUTC(Int64(time)) + ",\(value)\n" }
        let path = try box.write("truth.csv", csv)
        #expect(await box.run("observe", "import", path, "--location", "Bern", "--source", "station").code == 0)

        let scores = await box.run("query", "ensemble", "--location", "Bern", "--format", "json")
        #expect(scores.code == 0, "\(scores.stderrText)")
        let document = try #require(
            try JSONSerialization.jsonObject(with: Data(scores.stdout.utf8)) as? [String: Any])
        #expect(document["model"] as? String == "icon_d2_eps" && document["source"] as? String == "station")
        let rows = try #require(document["rows"] as? [[String: Any]])
        let all = try #require(rows.last)
        #expect((all["n"] as? Int ?? 0) > 40 && all["members"] as? Double == 20)
        #expect((all["crps"] as? Double ?? 0) > 0 && (all["crps_fair"] as? Double ?? 0) > 0)
        #expect((all["crps_fair"] as? Double ?? 1) < (all["crps"] as? Double ?? 0))
        #expect(all["spread_skill"] is Double)

        let ranks = await box.run("query", "ensemble", "--location", "Bern", "--show", "ranks", "--format", "csv")
        #expect(ranks.code == 0)
        #expect(ranks.stdout.split(whereSeparator: { $0.isNewline }).count == 1 + 21, "\(ranks.stdout)")
        let table = await box.run("query", "ensemble", "--location", "Bern", "--show", "ranks")
        #expect(table.stdout.contains("chi-square"))

        let notEnsemble = await box.run("query", "ensemble", "--location", "Bern", "--model", "icon_seamless")
        #expect(notEnsemble.code == 64 && notEnsemble.stderrText.contains("is not an ensemble model"))
        let reliability = await box.run("query", "ensemble", "--location", "Bern", "--show", "reliability")
        #expect(reliability.code == 64 && reliability.stderrText.contains("--threshold"))
        let withThreshold = await box.run(
            "query", "ensemble", "--location", "Bern", "--show", "reliability", "--threshold", "15", "--format", "json")
        #expect(withThreshold.code == 0 && withThreshold.stdout.contains("brier_fair"))
    }
}
