import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite

@testable import WxCLI

/// Issue 25 §4: scores that were wrong at the edges.
@Suite("scores at the edges (issue 25)")
struct ScoreEdgeTests {
    static let day = utcMidnight(2026, 7, 1)

    /// Data rows of a CSV text (without the header).
    func dataLines(_ text: String) -> [Substring] {
        Array(text.split(separator: "\r\n").dropFirst())
    }

    @Test(
        "prune, then a new time zone: verify over one new local day counts each stored pair once",
        arguments: StoreEngine.all)
    func pruneThenTimezone(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let d = Self.day
        let csv = try box.write("station.csv", stationCSV(from: d, hours: 72) { t in 10 + Double(t / 3600 % 7) })
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        // Run A (to be pruned) at 00Z, run B (the latest, kept) at 12Z, 48 hours each.
        for (issued, name) in [(d, "a.json"), (d + 12 * 3600, "b.json")] {
            // Different values, so B is a run of its own (not A continued).
            let shift = issued == d ? 0.0 : 0.5
            let run = TestResponse(start: issued, hours: 48) { t in 11 + Double(t / 3600 % 5) + shift }
            let path = try box.write(name, run.json())
            #expect(
                await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(issued)).code == 0)
        }
        let pruned = await box.run("prune", "--keep-days", "1")
        #expect(pruned.stderrText.contains("Pruned 1 runs"), "\(pruned.stderrText)")
        #expect(await box.run("locations", "set", "Here", "--timezone", "Europe/Moscow").code == 0)
        // 2026-07-02 in Moscow (+03:00) is 07-01 21:00Z to 07-02 21:00Z.
        let range = ["--from", "2026-07-02", "--to", "2026-07-02"]
        let pairs = await box.run(["export", "pairs", "--location", "Here", "--source", "station"] + range)
        #expect(pairs.code == 0, "\(pairs.stderrText)")
        let stored = dataLines(pairs.stdout).count
        #expect(stored == 24)
        let verify = await box.run(
            ["query", "verify", "--location", "Here", "--source", "station", "--format", "json"] + range)
        #expect(verify.code == 0, "\(verify.stderrText)")
        let rows = try #require(try parseJSON(verify.stdout)["rows"]?.arrayValue)
        let n = rows.compactMap { $0["n"]?.numberValue }.reduce(0, +)
        // Run A's pruned pairs are kept on UTC days, both cut by the Moscow day: left out (and said).
        #expect(Int(n) == stored)
        // doctor --deep checks exactly these days: verify over them against their kept sums.
        let doctor = await box.run("doctor", "--deep")
        #expect(doctor.code == 0, "\(doctor.stdout)\(doctor.stderrText)")
        #expect(doctor.stdout.contains("verify by day     ok: "), "\(doctor.stdout)")
        #expect(!doctor.stdout.contains("ok: every kept day"), "\(doctor.stdout)")
    }

    /// Imports one run per issue time, each forecasting `hours` hours from `first` with `value(run, hour)`.
    func importRuns(
        _ box: Sandbox, issued: [Int64], first: Int64, hours: Int, _ value: @escaping @Sendable (Int, Int64) -> Double
    ) async throws {
        for (index, time) in issued.enumerated() {
            var run = TestResponse(start: first, hours: hours) { t in value(index, t) }
            // A precipitation of its own, so no run repeats another's content (a repeat is no new run).
            run.precipitation = { _ in Double(index) * 0.1 }
            let path = try box.write("run-\(index).json", run.json())
            let result = await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(time))
            #expect(result.code == 0, "\(result.stderrText)")
        }
    }

    @Test(
        "consistency --by day: lead days are half-open, so a 48 h lead counts in the second day only",
        arguments: StoreEngine.all)
    func consistencyLeadDays(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let valid = utcMidnight(2026, 7, 10)
        // Nine runs every 6 h, leads 72, 66, ..., 24 h for the one valid hour; by lead:
        // 72: 5, 66: 0, 60: 10, 54: 0, 48: 10, 42: 1, 36: 0, 30: 1, 24: 0.
        let byLead: [Int64: Double] = [72: 5, 66: 0, 60: 10, 54: 0, 48: 10, 42: 1, 36: 0, 30: 1, 24: 0]
        let issued = stride(from: Int64(72), through: 24, by: -6).map { valid - $0 * 3600 }
        try await importRuns(box, issued: issued, first: valid, hours: 1) { index, _ in
            byLead[Int64(72 - 6 * index)]!
        }
        let result = await box.run("query", "consistency", "--location", "Here", "--by", "day", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let rows = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue)
        func ffi(_ from: Double) -> Double? {
            rows.first { $0["lead_from_h"]?.numberValue == from }?["flip_flop_index"]?.numberValue
        }
        // Day 1, leads [24, 48): 1, 0, 1, 0 in issue order: (3 − 1) / 2 = 1 (with 48 h: 10, 1, 0, 1, 0 gives 2/3).
        #expect(ffi(24) == 1)
        // Day 2, leads [48, 72): 0, 10, 0, 10: (30 − 10) / 2 = 10 (with 72 h: 5, 0, 10, 0, 10 gives 25/3).
        #expect(ffi(48) == 10)
    }

    @Test(
        "consistency: median and 90th percentile are taken over the hours' indices in order of size",
        arguments: StoreEngine.all)
    func consistencyQuantiles(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let first = utcMidnight(2026, 7, 10)
        // Five valid hours; four runs 6 h apart alternate 10, 10 + A, 10, 10 + A, so hour k's index is A = amplitude[k].
        let amplitude: [Double] = [3, 1, 4, 0, 2]
        let issued = [42, 36, 30, 24].map { first - Int64($0) * 3600 }
        try await importRuns(box, issued: issued, first: first, hours: 5) { index, t in
            10 + amplitude[Int((t - first) / 3600)] * Double(index % 2)
        }
        let result = await box.run(
            "query", "consistency", "--location", "Here", "--lead-from", "24", "--lead-to", "48", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect(row["n"]?.numberValue == 5)
        // Sorted 0, 1, 2, 3, 4: mean 2, median 2, p90 at position 3.6: 3.6.
        #expect(near(row["flip_flop_index"]?.numberValue, 2, 1e-12))
        #expect(near(row["median"]?.numberValue, 2, 1e-12))
        #expect(near(row["p90"]?.numberValue, 3.6, 1e-12))
    }

    @Test(
        "a `current` block's precipitation is stored only when it is an hour's sum, not a quarter-hour's",
        arguments: [(900, nil), (3600, 0.3)] as [(Int, Double?)])
    func currentInterval(_ interval: Int, _ stored: Double?) async throws {
        let box = Sandbox()
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let noon = utcMidnight(2026, 7, 20) + 12 * 3600
        let hours = (0..<3).map { noon + Int64($0) * 3600 }
        let json = """
            {"latitude":52.5,"longitude":13.4,"elevation":40,"utc_offset_seconds":0,"timezone":"GMT",
             "current_units":{"time":"unixtime","interval":"seconds","temperature_2m":"°C","precipitation":"mm"},
             "current":{"time":\(noon),"interval":\(interval),"temperature_2m":20,"precipitation":0.3},
             "hourly_units":{"time":"unixtime","temperature_2m":"°C","precipitation":"mm"},
             "hourly":{"time":[\(hours.map(String.init).joined(separator: ","))],"temperature_2m":[20,21,22],
                       "precipitation":[1.2,0,0]}}
            """
        let path = try box.write("run.json", json)
        let result = await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(noon))
        #expect(result.code == 0, "\(result.stderrText)")
        // An unsuffixed response is best_match's: its current conditions are current:best_match.
        let current = try storedObservations(box.db, source: "current:best_match")
        #expect(current[noon]?["temperature_2m"] == 20)
        #expect(current[noon]?["precipitation"] == stored)
    }

    @Test(
        "report on a pruned database says on the reliability chart that pruned runs are not in its bins",
        arguments: StoreEngine.all)
    func reliabilityPopulation(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let d = Self.day
        var csv = "time,precipitation\n"
        for k in 0..<72 { csv += "\(CivilTime.isoUTC(d + Int64(k) * 3600)),\(k % 3 == 0 ? 1.5 : 0)\n" }
        let station = try box.write("station.csv", csv)
        #expect(await box.run("observe", "import", station, "--location", "Here", "--source", "station").code == 0)
        func run(_ issued: Int64, shift: Int) -> String {
            let hours = (0..<48).map { issued + Int64($0) * 3600 }
            let probability = hours.indices.map { String(($0 + shift) % 10 * 10) }
            let rain = hours.indices.map { $0 % 3 == 0 ? "1" : "0" }
            return """
                {"latitude":52.5,"longitude":13.4,"elevation":40,"utc_offset_seconds":0,"timezone":"GMT",
                 "hourly_units":{"time":"unixtime","precipitation_probability":"%","precipitation":"mm"},
                 "hourly":{"time":[\(hours.map(String.init).joined(separator: ","))],
                           "precipitation_probability":[\(probability.joined(separator: ","))],
                           "precipitation":[\(rain.joined(separator: ","))]}}
                """
        }
        for (issued, shift) in [(d, 0), (d + 12 * 3600, 3)] {
            let path = try box.write("run-\(shift).json", run(issued, shift: shift))
            #expect(
                await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(issued)).code == 0)
        }
        let unpruned = await box.run("report", "--location", "Here", "--source", "station")
        #expect(unpruned.code == 0, "\(unpruned.stderrText)")
        #expect(unpruned.stdout.contains("<section id=\"precipitation\""))
        #expect(!unpruned.stdout.contains("pruned run(s) kept only their sums"))
        #expect(await box.run("prune", "--keep-days", "1").code == 0)
        let pruned = await box.run("report", "--location", "Here", "--source", "station")
        #expect(pruned.code == 0, "\(pruned.stderrText)")
        #expect(pruned.stdout.contains("1 pruned run(s) kept only their sums"), "\(pruned.stdout.suffix(3000))")
    }

    @Test(
        "wind direction: bias and MAE the short way round; circular means, not arithmetic ones, and no Pearson r",
        arguments: StoreEngine.all)
    func windDirection(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let d = utcMidnight(2026, 7, 20)
        let observed: [Double] = [350, 10, 20, 340]
        let forecast: [Double] = [10, 350, 30, 350]
        var csv = "time,wind_direction_10m\n"
        for (k, value) in observed.enumerated() { csv += "\(CivilTime.isoUTC(d + Int64(k) * 3600)),\(value)\n" }
        let station = try box.write("station.csv", csv)
        #expect(await box.run("observe", "import", station, "--location", "Here", "--source", "station").code == 0)
        let hours = (0..<4).map { d + Int64($0) * 3600 }
        let json = """
            {"latitude":52.5,"longitude":13.4,"elevation":40,"utc_offset_seconds":0,"timezone":"GMT",
             "hourly_units":{"time":"unixtime","wind_direction_10m":"°"},
             "hourly":{"time":[\(hours.map(String.init).joined(separator: ","))],
                       "wind_direction_10m":[\(forecast.map { JSON.numberText($0) }.joined(separator: ","))]}}
            """
        let path = try box.write("run.json", json)
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        let result = await box.run(
            "query", "verify", "--location", "Here", "--source", "station", "--var", "wind_direction_10m",
            "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        // Errors +20, −20, +10, +10 (not −340, +340): bias 5, MAE 15.
        #expect(row["n"]?.numberValue == 4)
        #expect(near(row["bias"]?.numberValue, 5, 1e-12))
        #expect(near(row["mae"]?.numberValue, 15, 1e-12))
        // The arithmetic means (185 and 180) say south for winds from the north; the circular ones
        // are north: observed 350/10 and 20/340 cancel east–west (0°), forecast 10/350 cancel and
        // 30 and 350 are left with 3·cos 10° + cos 30° north and sin 30° − sin 10° east.
        let radians = Double.pi / 180
        let forecastMean = atan2(sin(30 * radians) - sin(10 * radians), 3 * cos(10 * radians) + cos(30 * radians))
        #expect(near(row["mean_forecast"]?.numberValue, forecastMean / radians, 1e-9), "\(row)")
        #expect(near(row["mean_forecast"]?.numberValue, 4.88, 0.01))
        #expect(near(row["mean_observed"]?.numberValue, 0, 1e-9), "\(row)")
        #expect(row["correlation"] != nil && row["correlation"]?.numberValue == nil)
        // The same means from the kept sums of a pruned run (verify reads the summaries then).
        // A later run (hours without observations), so prune may take the first: it keeps each model's latest.
        let laterRun = """
            {"latitude":52.5,"longitude":13.4,"elevation":40,"utc_offset_seconds":0,"timezone":"GMT",
             "hourly_units":{"time":"unixtime","wind_direction_10m":"°"},
             "hourly":{"time":[\(d + 12 * 3600),\(d + 13 * 3600)],"wind_direction_10m":[90,90]}}
            """
        let laterPath = try box.write("later.json", laterRun)
        #expect(
            await box.run("import", laterPath, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d + 12 * 3600))
                .code == 0)
        let prune = await box.run("prune", "--keep-days", "1")
        #expect(prune.stderrText.contains("Pruned 1 runs"), "\(prune.stderrText)")
        let pruned = await box.run(
            "query", "verify", "--location", "Here", "--source", "station", "--var", "wind_direction_10m",
            "--format", "json")
        let kept = try #require(try parseJSON(pruned.stdout)["rows"]?.arrayValue?.first)
        #expect(near(kept["mean_forecast"]?.numberValue, forecastMean / radians, 1e-9), "\(pruned.stdout)")
        #expect(near(kept["mean_observed"]?.numberValue, 0, 1e-9))
    }
}
