import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay

@testable import WxCLI

/// Issue 31's `export members` and the ensemble charts of `wxdb report`, through the command line
/// against the replay server's Ensemble API.
@Suite("Ensemble export and report")
struct EnsembleExportReportTests {
    static let now = Date(timeIntervalSince1970: 1_785_067_200)  // 2026-07-26 12:00 UTC

    /// Bern with a deterministic model and icon_d2_eps (20 members, 48 h horizon), ingested, with the
    /// archive's temperature and precipitation imported as a station.
    func setUp(engine: StoreEngine = .sqlite) async throws -> (ReplayServer, Sandbox) {
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
        let add = await box.run(
            "locations", "add", "Bern", "--lat", "46.95", "--lon", "7.45", "--timezone", "GMT", "--models",
            "icon_seamless,icon_d2_eps")
        #expect(add.code == 0, "\(add.stderrText)")
        let ingest = await box.run("ingest")
        #expect(ingest.code == 0 && ingest.stderrText.contains("ensembles 1 stored"), "\(ingest.stderrText)")
        let archive = try Data(
            contentsOf: URL(
                string: server.baseURL
                    + "/v1/archive?latitude=46.95&longitude=7.45&hourly=temperature_2m,precipitation"
                    + "&start_date=2026-07-26&end_date=2026-07-28&timeformat=unixtime")!)
        let object = try #require(try JSONSerialization.jsonObject(with: archive) as? [String: Any])
        let hourly = try #require(object["hourly"] as? [String: Any])
        let times = try #require(hourly["time"] as? [Int])
        let temperature = try #require(hourly["temperature_2m"] as? [Double])
        let precipitation = try #require(hourly["precipitation"] as? [Double])
        var csv = "time,temperature_2m,precipitation\n"
        for (index, time) in times.enumerated() {
            csv += CivilTime.isoUTC(Int64(time)) + ",\(temperature[index]),\(precipitation[index])\n"
        }
        let path = try box.write("truth.csv", csv)
        let imported = await box.run("observe", "import", path, "--location", "Bern", "--source", "station")
        #expect(imported.code == 0, "\(imported.stderrText)")
        return (server, box)
    }

    @Test(
        "export members writes one row per run, variable, hour and member; missing members are empty",
        arguments: StoreEngine.all)
    func exportMembers(engine: StoreEngine) async throws {
        let (server, box) = try await setUp(engine: engine)
        defer {
            server.stop()
            box.remove()
        }
        let export = await box.run("export", "members", "--location", "Bern", "--var", "temperature_2m")
        #expect(export.code == 0, "\(export.stderrText)")
        let lines = export.stdout.split(separator: "\r\n").map(String.init)
        #expect(lines.first == "location,model,issued_at,valid_time,lead_hours,variable,member,value")
        let rows = lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
        #expect(!rows.isEmpty && rows.allSatisfy { $0.count == 8 })
        #expect(rows.allSatisfy { $0[0] == "Bern" && $0[1] == "icon_d2_eps" && $0[5] == "temperature_2m" })
        // 20 members (control 0, then 1...19) at every stored hour.
        #expect(Set(rows.map { Int($0[6]) ?? -1 }) == Set(0..<20))
        #expect(rows.count % 20 == 0)
        // Hours well past the 48 h horizon (counted from the server's own run) have no member: empty, not 0;
        // hours within it have numbers.
        let beyond = rows.filter { (Double($0[4]) ?? 0) > 72 }
        let within = rows.filter { (0...24).contains(Double($0[4]) ?? -1) }
        #expect(!beyond.isEmpty && beyond.allSatisfy { $0[7].isEmpty })
        #expect(!within.isEmpty && within.allSatisfy { Double($0[7]) != nil })
        // Stored binary32 values print with their shortest digits, not a binary expansion.
        #expect(within.allSatisfy { $0[7].count <= 9 }, "\(within.prefix(3))")

        let all = await box.run("export", "members")
        #expect(all.code == 0)
        let header = all.stdout.split(separator: "\r\n").first.map(String.init)
        #expect(header == lines.first)
        #expect(all.stdout.contains(",precipitation,") && all.stdout.contains(",wind_speed_10m,"))

        let deterministic = await box.run("export", "members", "--model", "icon_seamless")
        #expect(deterministic.code == 64 && deterministic.stderrText.contains("is not an ensemble model"))
        let badVariable = await box.run("export", "members", "--var", "weather_code")
        #expect(badVariable.code == 64 && badVariable.stderrText.contains("--var 'weather_code'"))
        let none = await box.run("export", "members", "--location", "Bern", "--from", "2027-01-01")
        #expect(none.code == 1 && none.stderrText.contains("nothing to export: no ensemble runs"))
    }

    @Test(
        "report on a location with an ensemble draws CRPS beside MAE, spread-skill, ranks and reliability",
        arguments: StoreEngine.all)
    func reportCharts(engine: StoreEngine) async throws {
        let (server, box) = try await setUp(engine: engine)
        defer {
            server.stop()
            box.remove()
        }
        let report = await box.run("report", "--location", "Bern", "--var", "temperature_2m,precipitation")
        #expect(report.code == 0, "\(report.stderrText)")
        let page = report.stdout
        #expect(page.contains("<section id=\"ensembles\">"))
        for id in [
            "ens-crps-icon-d2-eps-temperature-2m", "ens-spread-icon-d2-eps-temperature-2m",
            "ens-ranks-icon-d2-eps-temperature-2m", "ens-reliability-icon-d2-eps"
        ] {
            #expect(page.contains("id=\"\(id)-t\""), "\(id)")
        }
        // The CRPS chart has the deterministic model's MAE beside the ensemble's CRPS.
        #expect(page.contains("icon_d2_eps CRPS") && page.contains("icon_seamless MAE"))
        #expect(page.contains("spread-skill ratio"))

        // Without an ensemble model the page has no ensemble section.
        #expect(await box.run("locations", "set", "Bern", "--models", "icon_seamless").code == 0)
        let plain = await box.run("report", "--location", "Bern", "--var", "temperature_2m")
        #expect(plain.code == 0 && !plain.stdout.contains("id=\"ensembles\""))
    }
    @Test(
        "export pairs --format verif of an ensemble carries its members as verif's e0…e19, and verif's MAE of the mean and fair CRPS agree with query verify",
        .enabled(
            if: verifExecutable != nil || ProcessInfo.processInfo.environment["CI"] == "true",
            "verif is not installed (pip install verif)"), arguments: StoreEngine.all)
    func verifEnsemble(engine: StoreEngine) async throws {
        let verif = try #require(verifExecutable, "CI=true and verif is not installed (.ci/run installs it)")
        let (server, box) = try await setUp(engine: engine)
        defer {
            server.stop()
            box.remove()
        }
        let file = box.folder.appendingPathComponent("bern eps.txt").path
        let exported = await box.run(
            "export", "pairs", "--location", "Bern", "--model", "icon_d2_eps", "--source", "station", "--format",
            "verif", "--output", file)
        #expect(exported.code == 0, "\(exported.stderrText)")
        let lines = try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
        let columns =
            "unixtime leadtime location lat lon altitude obs fcst " + (0..<20).map { "e\($0)" }.joined(separator: " ")
        #expect(lines.count > 3 && lines[2] == columns, "\(lines.prefix(3))")
        #expect(lines.dropFirst(3).allSatisfy { $0.split(separator: " ").count == 28 })

        let verify = await box.run(
            "query", "verify", "--location", "Bern", "--model", "icon_d2_eps", "--source", "station", "--format",
            "json")
        #expect(verify.code == 0, "\(verify.stderrText)")
        let document = try #require(try JSONSerialization.jsonObject(with: Data(verify.stdout.utf8)) as? [String: Any])
        let all = try #require((document["rows"] as? [[String: Any]])?.last)
        #expect(all["n"] as? Int == lines.count - 3, "\(all)")
        for (metric, key) in [("mae", "mean_mae"), ("fcrps", "crps_fair")] {
            let (status, data) = try Subprocess.run(
                verif, [file, "-m", metric, "-x", "no", "-type", "csv"], in: box.folder)
            #expect(status == 0)
            // "No,<variable>" then "0,<score>".
            let printed = String(decoding: data, as: UTF8.self).split(separator: "\n")
            let theirs = try #require(printed.last?.split(separator: ",").last.flatMap { Double($0) }, "\(printed)")
            let ours = try #require(all[key] as? Double, "\(all)")
            // verif prints six significant digits; members are binary32 written with their shortest digits.
            #expect(abs(theirs - ours) <= 1e-5 * max(1, ours), "\(metric): verif \(theirs), wxdb \(ours)")
        }
    }
}
