import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay

@testable import WxCLI

/// Issue 31: `query verify` and `query compare` on an ensemble, through the command line and the
/// replay server's calibrated Ensemble API.
@Suite("Ensembles in verify and compare")
struct EnsembleVerifyCompareTests {
    static let start: Int64 = 1_785_067_200  // 2026-07-26 12:00 UTC
    static let days = 12

    /// A location with a deterministic model and an ensemble, ingested once a day for `days` days,
    /// and the archive's truth for those days imported as a station.
    func setUp(engine: StoreEngine = .sqlite) async throws -> (ReplayServer, Sandbox) {
        let clock = Clock(Self.start)
        let server = ReplayServer(fixtures: URL(fileURLWithPath: fixturesPath))
        server.now = { Date(timeIntervalSince1970: TimeInterval(clock.value)) }
        try server.start()
        let box = Sandbox()
        if engine == .postgres { box.environment["WXDB_DB"] = try engine.freshDatabase("ensemble") }
        for (name, path) in [
            ("WXDB_FORECAST_URL", "/v1/forecast"), ("WXDB_META_URL", "/data"), ("WXDB_ENSEMBLE_URL", "/v1/ensemble"),
            ("WXDB_ARCHIVE_URL", "/v1/archive")
        ] {
            box.environment[name] = server.baseURL + path
        }
        box.now = Date(timeIntervalSince1970: TimeInterval(Self.start))
        let add = await box.run(
            "locations", "add", "Bern", "--lat", "46.95", "--lon", "7.45", "--timezone", "GMT", "--models",
            "icon_seamless,icon_d2_eps")
        #expect(add.code == 0, "\(add.stderrText)")
        for day in 0..<Self.days {
            let now = Self.start + Int64(day) * 86_400
            clock.value = now
            box.now = Date(timeIntervalSince1970: TimeInterval(now))
            let ingest = await box.run("ingest")
            #expect(ingest.code == 0, "\(ingest.stderrText)")
        }
        let end = CivilTime.isoUTC(Self.start + Int64(Self.days + 1) * 86_400).prefix(10)
        let archive = try Data(
            contentsOf: URL(
                string: server.baseURL
                    + "/v1/archive?latitude=46.95&longitude=7.45&hourly=temperature_2m&start_date=2026-07-26"
                    + "&end_date=\(end)&timeformat=unixtime")!)
        let object = try #require(try JSONSerialization.jsonObject(with: archive) as? [String: Any])
        let hourly = try #require(object["hourly"] as? [String: Any])
        let times = try #require(hourly["time"] as? [Int])
        let values = try #require(hourly["temperature_2m"] as? [Double])
        var csv = "time,temperature_2m\n"
        for (time, value) in zip(times, values) { csv += CivilTime.isoUTC(Int64(time)) + ",\(value)\n" }
        let path = try box.write("truth.csv", csv)
        let imported = await box.run("observe", "import", path, "--location", "Bern", "--source", "station")
        #expect(imported.code == 0, "\(imported.stderrText)")
        return (server, box)
    }

    func json(_ result: RunResult) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    }

    @Test(
        "verify scores an ensemble by lead; compare tests its CRPS against a deterministic model's MAE",
        arguments: StoreEngine.all)
    func verifyAndCompare(engine: StoreEngine) async throws {
        let (server, box) = try await setUp(engine: engine)
        defer {
            server.stop()
            box.remove()
        }

        // verify --model <ensemble>: CRPS, the mean's errors and spread by lead bucket, then "all".
        let verify = await box.run(
            "query", "verify", "--location", "Bern", "--model", "icon_d2_eps", "--format", "json")
        #expect(verify.code == 0, "\(verify.stderrText)")
        let document = try json(verify)
        #expect(document["model"] as? String == "icon_d2_eps" && document["ensemble"] as? Bool == true)
        let rows = try #require(document["rows"] as? [[String: Any]])
        #expect(rows.count >= 3 && rows.allSatisfy { ($0["n"] as? Int ?? 0) > 0 }, "\(rows)")
        let all = try #require(rows.last)
        #expect(all["lead_from_h"] as? Int == 0 && all["members"] as? Double == 20)
        #expect((all["n"] as? Int ?? 0) == rows.dropLast().reduce(0) { $0 + ($1["n"] as? Int ?? 0) })
        for key in ["crps", "crps_fair", "mean_bias", "mean_mae", "mean_rmse", "spread", "spread_skill"] {
            #expect(all[key] is Double, "\(key)")
        }
        // Intervals from the kept day sums, as deterministic rows have them (a day-block bootstrap).
        for key in ["crps", "crps_fair", "mean_mae", "mean_rmse", "spread", "spread_skill"] {
            let value = try #require(all[key] as? Double)
            let low = try #require(all[key + "_ci_low"] as? Double, "\(key)_ci_low in \(all)")
            let high = try #require(all[key + "_ci_high"] as? Double, "\(key)_ci_high")
            #expect(low < value && value < high, "\(key): \(low) \(value) \(high)")
        }
        let intervalNotes = try #require(document["notes"] as? [String])
        #expect(
            intervalNotes.contains { $0.contains("block bootstrap over the valid days' kept ensemble sums") },
            "\(intervalNotes)")
        let ensembleTable = await box.run("query", "verify", "--location", "Bern", "--model", "icon_d2_eps")
        // CRPS printed with its interval, as "0.811 (0.74–0.90)".
        #expect(ensembleTable.stdout.contains(#/\d\.\d{3} \(\d\.\d+–\d\.\d+\)/#), "\(ensembleTable.stdout)")
        // The replay ensemble is calibrated: its spread matches its mean's error.
        let ratio = try #require(all["spread_skill"] as? Double)
        #expect(abs(ratio - 1) < 0.25, "\(ratio)")
        // --lead keeps one bucket, and "all" is then that bucket.
        let one = try json(
            await box.run(
                "query", "verify", "--location", "Bern", "--model", "icon_d2_eps", "--lead", "30", "--format",
                "json"))
        let oneRows = try #require(one["rows"] as? [[String: Any]])
        #expect(oneRows.count == 2 && oneRows[0]["lead_from_h"] as? Int == 24)
        #expect(oneRows[0]["crps"] as? Double == oneRows[1]["crps"] as? Double)

        // Without --model, the deterministic rows as before and the ensemble's after them.
        let both = await box.run("query", "verify", "--location", "Bern", "--format", "json")
        #expect(both.code == 0, "\(both.stderrText)")
        let ensembles = try #require(try json(both)["ensembles"] as? [[String: Any]])
        #expect(ensembles.count == 1 && ensembles[0]["model"] as? String == "icon_d2_eps")
        let table = await box.run("query", "verify", "--location", "Bern")
        #expect(table.stdout.contains("icon_d2_eps at Bern") && table.stdout.contains("crps_fair"), "\(table.stdout)")
        let svg = await box.run("query", "verify", "--location", "Bern", "--model", "icon_d2_eps", "--format", "svg")
        #expect(svg.code == 64)

        // compare: the ensemble's CRPS against the deterministic model's absolute error, same hours.
        let compare = await box.run(
            "query", "compare", "--location", "Bern", "--models", "icon_d2_eps,icon_seamless", "--source", "station",
            "--format", "json")
        #expect(compare.code == 0, "\(compare.stderrText)")
        let verdict = try json(compare)
        #expect(verdict["loss"] as? [String] == ["crps", "mae"])
        let headline = try #require(verdict["headline"] as? String)
        let compared = try #require(verdict["rows"] as? [[String: Any]])
        let tested = compared.filter { $0["p_value"] is Double }
        #expect(!tested.isEmpty, "\(compared)")
        for row in compared {
            let mae = try #require(row["mae"] as? [Double])
            #expect(mae.count == 2 && mae[0] > 0 && mae[1] > 0)
            let difference = try #require(row["mean_difference"] as? Double)
            if let better = row["better"] as? String {
                // The winner is the lower loss, and the headline names it as significant.
                #expect(better == (difference < 0 ? "icon_d2_eps" : "icon_seamless"))
                #expect(headline.contains("\(better) beat"), "\(headline)")
            }
        }
        if !compared.contains(where: { $0["better"] is String }) {
            #expect(headline.hasPrefix("No significant difference"), "\(headline)")
        }
        #expect(headline.contains("CRPS icon_d2_eps") || headline.hasPrefix("No significant"), "\(headline)")
        let notes = try #require(verdict["notes"] as? [String])
        #expect(notes.contains { $0.contains("CRPS (ecdf") }, "\(notes)")
        // Where the deterministic model forecast every hour the ensemble did, compare's CRPS is verify's.
        var same = 0
        for row in compared {
            guard
                let scored = rows.first(where: {
                    $0["lead_from_h"] as? Int == row["lead_from_h"] as? Int && $0["n"] as? Int == row["n"] as? Int
                }), let crps = scored["crps"] as? Double, let mae = row["mae"] as? [Double]
            else { continue }
            same += 1
            #expect(abs(mae[0] - crps) < 1e-4, "\(row) \(scored)")
        }
        // The ensemble's runs carry meta.json's initialisation time (icon_d2_eps every 3 h, 2 h before
        // the fetch; icon_seamless every 6 h), so the two models' lead buckets part at the edges and
        // fewer buckets match hour for hour than when the ensemble's time was a cadence estimate.
        #expect(same >= 1)

        // Two deterministic models' JSON keeps its shape (no loss key).
        let tableCompare = await box.run(
            "query", "compare", "--location", "Bern", "--models", "icon_d2_eps,icon_seamless", "--source", "station")
        #expect(tableCompare.stdout.contains("CRPS A") && tableCompare.stdout.contains("MAE B"))
    }
}

/// The replay server's clock, moved a day at a time by the test.
private final class Clock: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Int64
    init(_ value: Int64) { stored = value }
    var value: Int64 {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}

/// A deterministic forecast is a one-member ensemble: its CRPS is its absolute error (issue 31).
@Suite("One-member ensemble")
struct OneMemberEnsembleTests {
    @Test("a one-member ensemble's CRPS is its MAE", arguments: [(1.5, 0.0), (-2.25, 3.0), (4.0, 4.0), (0.1, -7.3)])
    func crpsIsAbsoluteError(forecast: Double, observed: Double) throws {
        let parts = try #require(WxCore.EnsembleScore.crps(members: [forecast], observed: observed))
        #expect(abs(parts.total - abs(forecast - observed)) < 1e-12)
        var scores = EnsembleScores()
        scores.add(members: [forecast], observed: observed)
        scores.add(members: [forecast + 1, .nan], observed: observed)
        let mae = (abs(forecast - observed) + abs(forecast + 1 - observed)) / 2
        #expect(abs((scores.crps ?? .nan) - mae) < 1e-12 && abs((scores.meanMAE ?? .nan) - mae) < 1e-12)
    }
}
