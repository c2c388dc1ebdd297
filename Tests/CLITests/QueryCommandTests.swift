import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI
@testable import WxStore
@testable import WxStoreSQLite

/// A generated history: 10 runs every 6 h, each with 16 days of hourly forecasts (plus 6 past
/// hours), where forecast = truth + bias(lead) + deterministic noise, and a station observing the
/// truth every hour. Run 3 is fetched twice with the same content.
struct GeneratedHistory {
    static let t0: Int64 = 1_780_000_000 / 3600 * 3600
    static let runCount = 10
    static let hour: Int64 = 3600

    static func issued(_ k: Int) -> Int64 { t0 + Int64(k) * 6 * hour }
    static func truth(_ t: Int64) -> Double {
        let h = Double(t / hour)
        return 10 + 8 * sin(2 * Double.pi * h.truncatingRemainder(dividingBy: 24) / 24) + 0.5 * cos(h * 0.13)
    }
    static func bias(leadHours: Double) -> Double { 0.3 + 0.02 * leadHours }
    /// Deterministic pseudo-random noise in [−0.5, 0.5).
    static func noise(_ k: Int, _ t: Int64) -> Double {
        var x = UInt64(k) &* 0x9E37_79B9_7F4A_7C15 ^ UInt64(t) &* 0xBF58_476D_1CE4_E5B9
        x ^= x >> 31
        x &*= 0x94D0_49BB_1331_11EB
        x ^= x >> 29
        return Double(x % 1_000_000) / 1_000_000 - 0.5
    }
    /// The hours of run k: 6 past hours, then 384 hours of forecast.
    static func times(_ k: Int) -> [Int64] { (-6..<384).map { issued(k) + Int64($0) * hour } }
    static func forecast(_ k: Int, _ t: Int64) -> Double {
        truth(t) + bias(leadHours: Double(t - issued(k)) / 3600) + noise(k, t)
    }
    static var lastHour: Int64 { issued(runCount - 1) + 383 * hour }

    static func build(_ sandbox: Sandbox) throws -> HistoryBuilder {
        let history = try HistoryBuilder(db: sandbox.db, name: "Testville", timezone: "Europe/Berlin")
        for k in 0..<runCount {
            let times = times(k)
            try history.storeRun(
                issuedAt: issued(k), fetchedAt: issued(k) + 2 * hour + 1234, times: times,
                columns: ["temperature_2m": times.map { forecast(k, $0) }])
            if k == 3 {
                // The same content again (the store compares with the model's latest run): a fetch,
                // not a run, and no extra pairs.
                let outcome = try history.storeRun(
                    issuedAt: issued(3), fetchedAt: issued(3) + 5 * hour, times: times,
                    columns: ["temperature_2m": times.map { forecast(3, $0) }])
                #expect(outcome.kind == .repeated)
            }
        }
        try history.observeAll(
            source: "station", times: Array(stride(from: t0 - 6 * hour, through: lastHour, by: Int(hour)))
        ) {
            ["temperature_2m": truth($0)]
        }
        return history
    }

    /// Per-bucket sums computed straight from the generator, not through the store or the scorer.
    struct Expected {
        var n = 0
        var sumErr = 0.0
        var sumAbs = 0.0
        var sumSq = 0.0
        var sumRefSq = 0.0
    }
    static func expected() -> [Int: Expected] {
        let edges = [0, 6, 12, 24, 48, 72, 96, 120, 144, 168, 192, 216, 240, 264, 288, 312, 336, 360, 384]
        var buckets: [Int: Expected] = [:]
        for k in 0..<runCount {
            for t in times(k) {
                let lead = Int((t - issued(k)) / hour)
                guard lead >= 0, let from = edges.last(where: { $0 <= lead }), lead < 384 else { continue }
                let error = forecast(k, t) - truth(t)
                let referenceError = truth(issued(k)) - truth(t)
                buckets[from, default: Expected()].n += 1
                buckets[from]!.sumErr += error
                buckets[from]!.sumAbs += abs(error)
                buckets[from]!.sumSq += error * error
                buckets[from]!.sumRefSq += referenceError * referenceError
            }
        }
        return buckets
    }
}

@Suite("wxdb query verify: acceptance on a generated history")
struct QueryVerifyAcceptanceTests {
    @Test("n, bias, MAE and RMSE per lead bucket match the generator's own numbers", arguments: StoreEngine.all)
    func verifyMatchesGenerator(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let result = await sandbox.run("query", "verify", "--location", "Testville", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let json = try parseJSON(result.stdout)
        #expect(json["location"]?.stringValue == "Testville")
        #expect(json["variable"]?.stringValue == "temperature_2m")
        // The station beats the analysis hours that every fetch also recorded.
        #expect(json["source"]?.stringValue == "station")
        let rows = try #require(json["rows"]?.arrayValue)
        let expected = GeneratedHistory.expected()
        #expect(rows.count == expected.count)
        for row in rows {
            let from = Int(try #require(row["lead_from_h"]?.numberValue))
            let want = try #require(expected[from], "unexpected bucket \(from)")
            let n = Double(want.n)
            #expect(row["n"]?.numberValue == n, "n in bucket \(from)")
            #expect(near(row["bias"]?.numberValue, want.sumErr / n), "bias in bucket \(from)")
            #expect(near(row["mae"]?.numberValue, want.sumAbs / n), "MAE in bucket \(from)")
            #expect(near(row["rmse"]?.numberValue, (want.sumSq / n).squareRoot()), "RMSE in bucket \(from)")
            #expect(
                near(row["persistence_skill"]?.numberValue, 1 - want.sumSq / want.sumRefSq), "skill in bucket \(from)")
            #expect(row["persistence_n"]?.numberValue == n)
        }
        // Buckets: [0,6) holds 6 leads of 10 runs; each whole day 24 leads of 10 runs.
        #expect(rows.first?["n"]?.numberValue == 60)
        #expect(rows.first(where: { $0["lead_from_h"]?.numberValue == 48 })?["n"]?.numberValue == 240)
    }

    @Test("--units imperial scales the bias by 9/5 without the 32° offset", arguments: StoreEngine.all)
    func imperialBias(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let metric = try parseJSON(
            await sandbox.run("query", "verify", "--location", "Testville", "--format", "json").stdout)
        let imperial = try parseJSON(
            await sandbox.run("query", "verify", "--location", "Testville", "--format", "json", "--units", "imperial")
                .stdout)
        let m = try #require(metric["rows"]?.arrayValue?.first)
        let i = try #require(imperial["rows"]?.arrayValue?.first)
        #expect(near(i["bias"]?.numberValue, try #require(m["bias"]?.numberValue) * 1.8))
        #expect(near(i["rmse"]?.numberValue, try #require(m["rmse"]?.numberValue) * 1.8))
    }

    @Test("the table opens with a headline about 2–3 days out, warm, with n", arguments: StoreEngine.all)
    func headline(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let result = await sandbox.run("query", "verify", "--location", "Testville")
        #expect(result.code == 0)
        let want = GeneratedHistory.expected()[48]!
        let bias = formatNumber(want.sumErr / Double(want.n), places: 1)
        let first = result.stdout.split(separator: "\n").first.map(String.init) ?? ""
        #expect(first.hasPrefix("Forecasts 2–3 days out ran \(bias) °C warm"), "\(first)")
        #expect(first.hasSuffix("(n=240)."), "\(first)")
        #expect(result.stdout.contains("bias") && result.stdout.contains("(°C)"))
    }

    @Test("--by day and --by model group as asked; --from/--to filter on valid time", arguments: StoreEngine.all)
    func grouping(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let byDay = try parseJSON(
            await sandbox.run("query", "verify", "--location", "Testville", "--by", "day", "--format", "json").stdout)
        let dayRows = try #require(byDay["rows"]?.arrayValue)
        #expect(dayRows.count == 16)
        #expect(dayRows.first?["lead_to_h"]?.numberValue == 24)
        #expect(dayRows.first?["n"]?.numberValue == 240)
        let byModel = try parseJSON(
            await sandbox.run("query", "verify", "--location", "Testville", "--by", "model", "--format", "json").stdout)
        #expect(byModel["rows"]?.arrayValue?.allSatisfy { $0["model"]?.stringValue == "best_match" } == true)
        // One valid hour: every run forecasts it once (t0 + 60 h: leads 60, 54, ..., 6).
        let at = CivilTime.isoUTC(GeneratedHistory.t0 + 60 * 3600)
        let one = try parseJSON(
            await sandbox.run(
                "query", "verify", "--location", "Testville", "--from", at, "--to", at, "--format", "json"
            ).stdout)
        let total = one["rows"]?.arrayValue?.compactMap { $0["n"]?.numberValue }.reduce(0, +)
        #expect(total == 10)
    }

    @Test("export pairs and query verify pick the same default observation source")
    func sameDefaultSource() async throws {
        let box = Sandbox()
        _ = try GeneratedHistory.build(box)
        // A second imported source with fewer hours, sorting before "station" by name.
        let store = try SQLiteStore.open(path: box.db)
        let location = try store.requireLocation(named: "Testville")
        var values = [Double?](repeating: nil, count: Variables.hourly.count)
        values[0] = 1
        try store.upsertObservation(
            locationID: location.id, source: "aaa", time: GeneratedHistory.issued(1), values: values, recordedAt: 0)
        let verify = await box.run("query", "verify", "--location", "Testville", "--format", "json")
        #expect(try parseJSON(verify.stdout)["source"]?.stringValue == "station")
        let pairs = await box.run("export", "pairs", "--location", "Testville")
        #expect(pairs.stdout.split(separator: "\r\n").dropFirst().allSatisfy { $0.hasSuffix(",station") })
    }
}

@Suite("wxdb query verify: precipitation")
struct QueryPrecipitationTests {
    /// One run issued at T with six hours of precipitation, observed by a station.
    ///
    ///   hour  forecast  observed  (threshold 0.1 mm)
    ///   0     0.0       0.0       no / no   → d
    ///   1     0.5       0.3       yes / yes → a
    ///   2     0.2       0.0       yes / no  → b
    ///   3     0.0       0.2       no / yes  → c
    ///   4     0.05      0.0       no / no   → d
    ///   5     1.0       0.1       yes / yes → a
    /// a = 2, b = 1, c = 1, d = 2, n = 6: POD = 2/3, FAR = 1/3, CSI = 2/4 = 0.5,
    /// chance hits a_r = (a+b)(a+c)/n = 3·3/6 = 1.5, ETS = (2 − 1.5)/(4 − 1.5) = 0.2.
    ///
    /// Probability forecasts 10, 80, 60, 20, 0, 90 % against events 0, 1, 0, 1, 0, 1:
    /// (0.1)² + (0.2)² + (0.6)² + (0.8)² + 0² + (0.1)² = 0.01 + 0.04 + 0.36 + 0.64 + 0 + 0.01 = 1.06;
    /// Brier = 1.06 / 6 = 0.17666...
    static let T: Int64 = 1_780_002_000 / 3600 * 3600

    static func build(_ sandbox: Sandbox) throws {
        let history = try HistoryBuilder(db: sandbox.db, name: "Rainy")
        let times = (0..<6).map { T + Int64($0) * 3600 }
        try history.storeRun(
            issuedAt: T, fetchedAt: T + 600, times: times,
            columns: [
                "precipitation": [0, 0.5, 0.2, 0, 0.05, 1.0],
                "precipitation_probability": [10, 80, 60, 20, 0, 90]
            ], recordAnalysis: false)
        for (t, observed) in zip(times, [0, 0.3, 0, 0.2, 0, 0.1]) {
            try history.observe(source: "station", time: t, ["precipitation": observed])
        }
    }

    @Test("POD, FAR, CSI and ETS from the hand-worked table", arguments: StoreEngine.all)
    func contingency(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        try Self.build(sandbox)
        let result = await sandbox.run(
            "query", "verify", "--location", "Rainy", "--var", "precipitation", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect(row["lead_from_h"]?.numberValue == 0 && row["lead_to_h"]?.numberValue == 6)
        #expect(
            row["a"]?.numberValue == 2 && row["b"]?.numberValue == 1 && row["c"]?.numberValue == 1
                && row["d"]?.numberValue == 2)
        #expect(near(row["pod"]?.numberValue, 2.0 / 3))
        #expect(near(row["far"]?.numberValue, 1.0 / 3))
        #expect(near(row["csi"]?.numberValue, 0.5))
        #expect(near(row["ets"]?.numberValue, 0.2))
    }

    @Test(
        "a higher --threshold changes the table: at 0.25 mm only hours 1 and 3 are observed events",
        arguments: StoreEngine.all)
    func threshold(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        try Self.build(sandbox)
        // forecast ≥ 0.25: hours 1, 5; observed ≥ 0.25: hour 1 → a = 1, b = 1, c = 0, d = 4
        let result = await sandbox.run(
            "query", "verify", "--location", "Rainy", "--var", "precipitation", "--threshold", "0.25", "--format",
            "json")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect(
            row["a"]?.numberValue == 1 && row["b"]?.numberValue == 1 && row["c"]?.numberValue == 0
                && row["d"]?.numberValue == 4)
    }

    @Test("Brier score of precipitation_probability against observed precipitation", arguments: StoreEngine.all)
    func brier(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        try Self.build(sandbox)
        let result = await sandbox.run(
            "query", "verify", "--location", "Rainy", "--var", "precipitation_probability", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect(row["n"]?.numberValue == 6)
        #expect(near(row["brier"]?.numberValue, 1.06 / 6))
    }
}

@Suite("wxdb query runs, forecast and trend")
struct QueryOtherCommandsTests {
    @Test("runs lists every run once, with the repeated fetch counted", arguments: StoreEngine.all)
    func runs(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let result = await sandbox.run("query", "runs", "--location", "Testville", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let runs = try #require(try parseJSON(result.stdout)["runs"]?.arrayValue)
        #expect(runs.count == 10)
        #expect(runs.map { $0["repeats"]?.numberValue } == [0, 0, 0, 1, 0, 0, 0, 0, 0, 0])
        let third = runs[3]
        #expect(third["issued_at"]?.stringValue == CivilTime.isoUTC(GeneratedHistory.issued(3)))
        #expect(third["issued_at_source"]?.stringValue == "model_run")
        #expect(third["first_fetch"]?.stringValue == CivilTime.isoUTC(GeneratedHistory.issued(3) + 2 * 3600 + 1234))
        #expect(third["last_fetch"]?.stringValue == CivilTime.isoUTC(GeneratedHistory.issued(3) + 5 * 3600))
        #expect(third["hour_count"]?.numberValue == 390)
        let table = await sandbox.run("query", "runs", "--location", "Testville")
        #expect(table.stdout.contains("issued (Europe/Berlin)"))
    }

    @Test(
        "forecast shows each run's value for the hour, its lead and change, and the observation",
        arguments: StoreEngine.all)
    func forecastConvergence(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let at = GeneratedHistory.t0 + 30 * 3600
        let result = await sandbox.run(
            "query", "forecast", "--location", "Testville", "--at", CivilTime.isoUTC(at), "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let json = try parseJSON(result.stdout)
        let runs = try #require(json["runs"]?.arrayValue)
        // Runs 0–5 were issued by then; run 6 (issued at +36 h) holds it only as a past hour.
        #expect(runs.count == 6)
        for (k, run) in runs.enumerated() {
            #expect(run["lead_hours"]?.numberValue == Double(30 - 6 * k))
            #expect(near(run["value"]?.numberValue, GeneratedHistory.forecast(k, at), 1e-9))
            if k == 0 {
                #expect(run["change"]?.isNull == true)
            } else {
                #expect(
                    near(
                        run["change"]?.numberValue,
                        GeneratedHistory.forecast(k, at) - GeneratedHistory.forecast(k - 1, at), 1e-9))
            }
        }
        #expect(json["observed"]?["source"]?.stringValue == "station")
        #expect(near(json["observed"]?["value"]?.numberValue, GeneratedHistory.truth(at), 1e-9))

        let table = await sandbox.run("query", "forecast", "--location", "Testville", "--at", CivilTime.isoUTC(at))
        #expect(table.stdout.contains("Observed (station): \(formatNumber(GeneratedHistory.truth(at), places: 1)) °C"))
        #expect(table.stderrText.contains("1 run(s) issued after this hour"))
    }

    @Test("forecast labels weather codes and wind directions in tables", arguments: StoreEngine.all)
    func labels(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        let history = try HistoryBuilder(db: sandbox.db, name: "Windy")
        let t: Int64 = 1_780_000_000 / 3600 * 3600
        try history.storeRun(
            issuedAt: t, fetchedAt: t, times: [t + 3600],
            columns: ["weather_code": [61], "wind_direction_10m": [270]], recordAnalysis: false)
        let codes = await sandbox.run(
            "query", "forecast", "--location", "Windy", "--at", CivilTime.isoUTC(t + 3600), "--var", "weather_code")
        #expect(codes.stdout.contains("61 Slight rain"))
        let wind = await sandbox.run(
            "query", "forecast", "--location", "Windy", "--at", CivilTime.isoUTC(t + 3600), "--var",
            "wind_direction_10m")
        #expect(wind.stdout.contains("270 W"))
        #expect(wind.stdout.contains("Observed: none stored for this hour."))
    }

    @Test(
        "trend takes the run closest to the lead (the earlier on a tie) and keeps a running bias",
        arguments: StoreEngine.all)
    func trend(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let result = await sandbox.run(
            "query", "trend", "--location", "Testville", "--var", "temperature_2m", "--lead", "24", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let json = try parseJSON(result.stdout)
        #expect(json["model"]?.stringValue == "best_match")
        let rows = try #require(json["rows"]?.arrayValue)
        let t0 = GeneratedHistory.t0
        // The first hour with a run 21–27 h ahead is t0 + 21 h (run 0, lead 21).
        #expect(rows.first?["valid_time"]?.stringValue == CivilTime.isoUTC(t0 + 21 * 3600))
        var sum = 0.0
        for (i, row) in rows.prefix(12).enumerated() {
            let valid = t0 + Int64(21 + i) * 3600
            // Leads available are (valid − issued_k) for runs every 6 h: pick |lead − 24| smallest, ties → earlier run.
            let k = (0..<GeneratedHistory.runCount)
                .filter { abs(Double(valid - GeneratedHistory.issued($0)) / 3600 - 24) <= 3 }
                .min { a, b in
                    let da = abs(Double(valid - GeneratedHistory.issued(a)) / 3600 - 24)
                    let db = abs(Double(valid - GeneratedHistory.issued(b)) / 3600 - 24)
                    return da != db ? da < db : a < b
                }!
            #expect(row["issued_at"]?.stringValue == CivilTime.isoUTC(GeneratedHistory.issued(k)), "row \(i)")
            let error = GeneratedHistory.forecast(k, valid) - GeneratedHistory.truth(valid)
            sum += error
            #expect(near(row["error"]?.numberValue, error, 1e-9))
            #expect(near(row["running_bias"]?.numberValue, sum / Double(i + 1), 1e-9))
        }
        // t0 + 24 h: run 0 at exactly 24 h. t0 + 27 h: runs 0 (27 h) and 1 (21 h) tie → run 0.
        #expect(rows[3]["lead_hours"]?.numberValue == 24)
        #expect(rows[6]["lead_hours"]?.numberValue == 27)

        let table = await sandbox.run(
            "query", "trend", "--location", "Testville", "--var", "temperature_2m", "--lead", "24", "--every", "day")
        #expect(table.code == 0)
        #expect(table.stdout.hasPrefix("best_match forecasts issued 24 h ahead ran"))
    }

    @Test("a weather code far outside WMO's range prints as a number instead of crashing", arguments: StoreEngine.all)
    func hugeWeatherCode(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        let history = try HistoryBuilder(db: box.db, name: "Odd")
        let t: Int64 = 1_780_000_000 / 3600 * 3600
        try history.storeRun(issuedAt: t, fetchedAt: t, times: [t + 3600], columns: ["weather_code": [1e300]])
        let result = await box.run(
            "query", "forecast", "--location", "Odd", "--var", "weather_code", "--at", CivilTime.isoUTC(t + 3600))
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(!result.stdout.contains("Code "))
    }
}

@Suite("wxdb query: nothing to show is an error that says what to do")
struct QueryErrorTests {
    @Test("no database file", arguments: ["runs", "verify"])
    func noDatabase(_ sub: String) async throws {
        let sandbox = Sandbox()
        let result = await sandbox.run("query", sub, "--location", "Berlin")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("no database at"))
        #expect(result.stdout.isEmpty)
    }

    @Test(
        "unknown location",
        arguments: StoreEngine.all,
        [
            ["runs"], ["verify"], ["trend", "--var", "temperature_2m", "--lead", "24"],
            ["forecast", "--at", "2026-01-01T00:00Z"]
        ])
    func unknownLocation(_ engine: StoreEngine, _ args: [String]) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try HistoryBuilder(db: sandbox.db, name: "Berlin")
        let result = await sandbox.run(["query"] + args + ["--location", "Nowhere"])
        #expect(result.code == 1)
        #expect(result.stderrText.contains("no location named \"Nowhere\""))
    }

    @Test(
        "a location without runs",
        arguments: StoreEngine.all, [["runs"], ["verify"], ["trend", "--var", "temperature_2m", "--lead", "24"]])
    func noRuns(_ engine: StoreEngine, _ args: [String]) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try HistoryBuilder(db: sandbox.db, name: "Berlin")
        let result = await sandbox.run(["query"] + args + ["--location", "Berlin"])
        #expect(result.code == 1)
        #expect(result.stderrText.contains("no forecast runs stored for Berlin; run 'wxdb ingest --location Berlin'"))
    }

    @Test(
        "runs but no observations; a source that is not stored; observations at other hours", arguments: StoreEngine.all
    )
    func noObservations(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        let history = try HistoryBuilder(db: sandbox.db, name: "Berlin")
        let t: Int64 = 1_780_000_000 / 3600 * 3600
        try history.storeRun(
            issuedAt: t, fetchedAt: t, times: [t, t + 3600], columns: ["temperature_2m": [1, 2]], recordAnalysis: false)
        let none = await sandbox.run("query", "verify", "--location", "Berlin")
        #expect(none.code == 1)
        #expect(
            none.stderrText.contains("no observations stored for Berlin; run 'wxdb observe backfill --location Berlin"))

        try history.observe(source: "station", time: t - 7200, ["temperature_2m": 3])
        let era5 = await sandbox.run("query", "verify", "--location", "Berlin", "--source", "era5")
        #expect(era5.code == 1)
        #expect(era5.stderrText.contains("no observations for Berlin from source era5 (stored sources: station"))

        let apart = await sandbox.run("query", "verify", "--location", "Berlin")
        #expect(apart.code == 1)
        #expect(
            apart.stderrText.contains("no temperature_2m forecast for Berlin has an observation from source station"))
        #expect(apart.stdout.isEmpty)

        let trend = await sandbox.run(
            "query", "trend", "--location", "Berlin", "--var", "temperature_2m", "--lead", "1")
        #expect(trend.code == 1)
        #expect(trend.stderrText.contains("has an observation"))
    }

    @Test("an hour no run forecasts", arguments: StoreEngine.all)
    func noForecastForHour(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let result = await sandbox.run("query", "forecast", "--location", "Testville", "--at", "2001-01-01T00:00Z")
        #expect(result.code == 1)
        #expect(
            result.stderrText.contains(
                "no stored run forecasts Testville at 2001-01-01T00:00:00Z (stored forecasts cover"))
    }

    @Test("usage mistakes exit 64", arguments: StoreEngine.all)
    func usage(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try HistoryBuilder(db: sandbox.db, name: "Berlin")
        #expect(await sandbox.run("query", "verify", "--location", "Berlin", "--var", "snow").code == 64)
        #expect(await sandbox.run("query", "verify", "--location", "Berlin", "--by", "week").code == 64)
        #expect(await sandbox.run("query", "trend", "--location", "Berlin", "--var", "temperature_2m").code == 64)
        #expect(await sandbox.run("query", "verify", "--location", "Berlin", "--units", "kelvin").code == 64)
    }
}
