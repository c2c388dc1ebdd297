import Foundation
import TestSupport
import Testing
import WxStore
import WxStoreSQLite

@testable import WxCLI
@testable import WxCore
@testable import WxQueries

/// Generated two-model histories: 30 days of runs every 6 hours, each 16 days long, against an
/// hourly truth. `error(model, run, validTime, lead)` says how far each forecast is off.
private struct TwoModelHistory {
    static let start: Int64 = 1_780_000_000 / 86_400 * 86_400
    static let days: Int64 = 30
    let store: SQLiteStore
    let location: Location
    let box = Sandbox()

    static func truth(_ t: Int64) -> Double {
        let hours = Double(t - start) / 3600
        return 10 + 5 * sin(2 * .pi * hours / 24) + 3 * sin(2 * .pi * hours / 97)
    }

    init(
        models: [String] = ["icon", "gfs"], runEvery: Int64 = 6,
        error: (_ model: Int, _ run: Int, _ valid: Int64, _ lead: Double) -> Double
    ) throws {
        store = try SQLiteStore.open(path: box.db)
        location = try store.addLocation(
            name: "Testville", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: models, now: 0)
        let runs = Int(Self.days * 24 / runEvery)
        for run in 0..<runs {
            let issued = Self.start + Int64(run) * runEvery * 3600
            for (m, model) in models.enumerated() {
                var forecast = ModelForecast(model: model)
                forecast.hourlyTimes = (0..<384).map { issued + Int64($0) * 3600 }
                forecast.hourly[Variables.hourlyIndex(of: "temperature_2m")!] = forecast.hourlyTimes.map { t in
                    Self.truth(t) + error(m, run, t, Double(t - issued) / 3600)
                }
                let response = ForecastResponse(
                    latitude: 1, longitude: 2, elevation: nil, utcOffsetSeconds: 0, timezone: "GMT",
                    locationID: nil, current: nil, models: [forecast])
                _ = try store.store(
                    response, for: location,
                    fetch: FetchRecord(
                        fetchedAt: issued + 600, origin: .fetch, issuedAt: [model: issued], recordAnalysis: false))
            }
        }
        let index = Variables.hourlyIndex(of: "temperature_2m")!
        for hour in 0..<(Self.days * 24 + 384) {
            let t = Self.start + hour * 3600
            var row = [Double?](repeating: nil, count: Variables.hourly.count)
            row[index] = Self.truth(t)
            try store.upsertObservation(locationID: location.id, source: "station", time: t, values: row, recordedAt: t)
        }
    }

    /// `wxdb ARGS --format json` against this history, parsed.
    func json(_ arguments: String...) async throws -> JSON {
        let result = await box.run(arguments + ["--format", "json"])
        #expect(result.code == 0, "\(result.stderrText)")
        return try parseJSON(result.stdout)
    }

    func json(_ arguments: [String]) async throws -> JSON {
        let result = await box.run(arguments + ["--format", "json"])
        #expect(result.code == 0, "\(result.stderrText)")
        return try parseJSON(result.stdout)
    }
}

/// A pseudo-random draw, roughly standard normal, fixed by its key.
private func draw(_ key: UInt64) -> Double {
    var z = key &+ 0x9E37_79B9_7F4A_7C15
    var sum = 0.0
    for _ in 0..<4 {
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        z ^= z >> 31
        sum += Double(z >> 11) / Double(1 << 53)
    }
    return (sum - 2) * 1.732
}

/// Forecast errors as they look: part shared by all hours of a run (the weather it got wrong),
/// part hour by hour, independent between runs and models, with a spread that grows with lead.
private func runNoise(seed: Int, model: Int, run: Int, valid: Int64, lead: Double) -> Double {
    let base = UInt64(seed) << 48 ^ UInt64(model) << 40 ^ UInt64(run) << 20
    let spread = 0.3 + lead / 192
    return spread * (draw(base) + 0.7 * draw(base ^ UInt64(valid / 3600) << 1 ^ 1))
}

private let temperature = Variables.hourlyVariable(named: "temperature_2m")!

@Suite("query compare and consistency on generated two-model histories")
struct CompareTests {
    @Test("a model with a clear bias is named worse in every bucket; JSON has the documented shape")
    func clearBias() async throws {
        let history = try TwoModelHistory { model, run, valid, lead in
            runNoise(seed: 1, model: model, run: run, valid: valid, lead: lead) + (model == 1 ? 3 : 0)
        }
        let document = try await history.json("query", "compare", "--location", "Testville")
        #expect(document["location"]?.stringValue == "Testville")
        #expect(document["variable"]?.stringValue == "temperature_2m")
        #expect(document["source"]?.stringValue == "station")
        #expect((document["models"]?.arrayValue ?? []).compactMap { $0.stringValue } == ["icon", "gfs"])
        let rows = try #require(document["rows"]?.arrayValue)
        #expect(rows.count == LeadBuckets.all.count)
        for row in rows {
            let keys = Set(row.objectValue?.keys.map { $0 } ?? [])
            #expect(
                keys.isSuperset(of: [
                    "lead_from_h", "lead_to_h", "n", "mae", "rmse", "mean_difference", "ci_low", "ci_high",
                    "dm_statistic", "p_value", "better"
                ]))
            let lead = row["lead_from_h"]?.numberValue ?? -1
            #expect(row["better"]?.stringValue == "icon", "lead \(lead): p \(String(describing: row["p_value"]))")
            let mae = (row["mae"]?.arrayValue ?? []).compactMap { $0.numberValue }
            #expect(mae.count == 2 && mae[0] < mae[1])
            #expect((row["mean_difference"]?.numberValue ?? 0) < 0)
            // diff is the difference of the MAE columns beside it (issue #25), at most 15 digits.
            if mae.count == 2 {
                #expect(abs((row["mean_difference"]?.numberValue ?? 0) - (mae[0] - mae[1])) < 1e-9, "lead \(lead)")
            }
            for value in mae { #expect(NumberText.significantDigits(value.description) <= 15) }
            #expect((row["ci_high"]?.numberValue ?? 1) < 0)
        }
        #expect(document["headline"]?.stringValue?.hasPrefix("icon beat gfs at 0–384 h by") == true)

        // The table says the same in words.
        let table = await history.box.run("query", "compare", "--location", "Testville")
        #expect(table.code == 0)
        #expect(table.stdout.hasPrefix("icon beat gfs at 0–384 h by"))
        #expect(table.stdout.contains("icon"))
    }

    @Test("two models of equal quality show no significant difference in at least 80% of buckets")
    func equalQuality() async throws {
        for seed in [2, 3] {
            let history = try TwoModelHistory { model, run, valid, lead in
                runNoise(seed: seed, model: model, run: run, valid: valid, lead: lead)
            }
            let document = try await history.json("query", "compare", "--location", "Testville", "--by", "day")
            let rows = try #require(document["rows"]?.arrayValue)
            let even = rows.filter { $0["better"]?.isNull == true }.count
            #expect(rows.count == 16)
            #expect(Double(even) >= 0.8 * Double(rows.count), "seed \(seed): \(even) of \(rows.count)")
        }
    }

    @Test("identical models: no verdict, and the note says zero variance, not too few days (issue #27)")
    func identicalModels() async throws {
        let history = try TwoModelHistory { _, run, valid, lead in
            runNoise(seed: 4, model: 0, run: run, valid: valid, lead: lead)
        }
        let document = try await history.json("query", "compare", "--location", "Testville")
        let rows = try #require(document["rows"]?.arrayValue)
        #expect(rows.allSatisfy { $0["better"]?.isNull == true && $0["dm_statistic"]?.isNull == true })
        let notes = (document["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(notes.contains { $0.contains("zero variance") && $0.contains("identical") }, "\(notes)")
        #expect(!notes.contains { $0.contains("too few") }, "\(notes)")
        #expect(document["headline"]?.stringValue?.hasPrefix("No significant difference") == true)
    }

    @Test("a bucket without a test is named as untested in the headline, never as 'no significant difference'")
    func untestedInHeadline() async throws {
        let history = try TwoModelHistory { model, run, valid, lead in
            runNoise(seed: 2, model: model, run: run, valid: valid, lead: lead)
        }
        // 12 valid days: HLN cannot test the buckets whose horizon in days reaches 12 (11 d on).
        let from = String(CivilTime.isoUTC(TwoModelHistory.start + 20 * 86_400).prefix(10))
        let to = String(CivilTime.isoUTC(TwoModelHistory.start + 31 * 86_400).prefix(10))
        for method in ["hln", "hac"] {
            let document = try await history.json(
                "query", "compare", "--location", "Testville", "--method", method, "--from", from, "--to", to)
            let rows = try #require(document["rows"]?.arrayValue)
            let untested = rows.filter { $0["p_value"]?.isNull == true }
            let headline = try #require(document["headline"]?.stringValue)
            if method == "hln" {
                #expect(!untested.isEmpty && untested.count < rows.count)
                #expect(headline.contains("at any tested lead"), "\(headline)")
                #expect(headline.contains("not tested at 264–384 h (too few matched days)"), "\(headline)")
                #expect(headline.contains("(\(rows.count - untested.count) lead bucket(s)"), "\(headline)")
            } else {
                #expect(untested.isEmpty)
                #expect(!headline.contains("not tested"), "\(headline)")
            }
        }
    }

    @Test("verify --by model opens with one sentence per model at the same lead, not one model's")
    func verifyByModelHeadline() async throws {
        let history = try TwoModelHistory { model, run, valid, lead in
            runNoise(seed: 3, model: model, run: run, valid: valid, lead: lead) + (model == 1 ? 1 : 0)
        }
        let table = await history.box.run("query", "verify", "--location", "Testville", "--by", "model")
        #expect(table.code == 0, "\(table.stderrText)")
        let lines = table.stdout.split(separator: "\n").map(String.init)
        let icon = try #require(lines.first { $0.hasPrefix("icon forecasts ") }, "\(table.stdout.prefix(400))")
        let gfs = try #require(lines.first { $0.hasPrefix("gfs forecasts ") }, "\(table.stdout.prefix(400))")
        // Both at the same lead: the words after the model name up to "out".
        func lead(_ line: String) -> String {
            line.split(separator: " ").dropFirst(2).prefix { $0 != "out" }.joined(separator: " ")
        }
        #expect(lead(icon) == lead(gfs), "\(icon) / \(gfs)")
        #expect(gfs.contains("warm"))
        // One model alone still opens with its one sentence.
        let one = await history.box.run("query", "verify", "--location", "Testville", "--by", "model", "--model", "gfs")
        #expect(one.stdout.split(separator: "\n").filter { $0.hasSuffix(")") && $0.contains(" forecasts ") }.count <= 1)
        #expect(!one.stdout.contains("icon forecasts"))
    }

    @Test("--method hln keeps BoM scores' DM figure: the statistic of the daily mean differences at the lead's horizon")
    func hlnMethod() async throws {
        let history = try TwoModelHistory { model, run, valid, lead in
            runNoise(seed: 5, model: model, run: run, valid: valid, lead: lead) + (model == 1 ? 0.4 : 0)
        }
        let hln = try await history.json("query", "compare", "--location", "Testville", "--method", "hln")
        let hac = try await history.json("query", "compare", "--location", "Testville")
        #expect(hln["method"]?.stringValue == "hln" && hac["method"]?.stringValue == "hac")
        let rows = try #require(hln["rows"]?.arrayValue)
        let first = try #require(rows.first)
        #expect(first["horizon_days"]?.numberValue == 1)
        #expect(first["degrees_of_freedom"]?.isNull == true)
        #expect(hac["rows"]?.arrayValue?.first?["degrees_of_freedom"]?.numberValue ?? 0 >= 4)
        // The first bucket's statistic is DieboldMariano's on the daily means of the matched hours.
        let result = try Compare.compare(
            history.store, location: history.location, options: CompareOptions(variable: temperature, method: .hln))
        #expect(first["dm_statistic"]?.numberValue == result.rows[0].statistic.map { NumberText.tidy($0) })
        let notes = (hln["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(notes.contains { $0.hasPrefix("--method hln") })
        let usage = await history.box.run("query", "compare", "--location", "Testville", "--method", "dm")
        #expect(usage.code == 64)
    }

    @Test("matched hours only: MAE, RMSE and n equal an independent count over the hours both models forecast")
    func matchedByHand() throws {
        let folder = Scratch.folder("compare-hand")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(path: folder.appendingPathComponent("wxdb.sqlite").path)
        let location = try store.addLocation(
            name: "Hand", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: ["a", "b"], now: 0)
        let t0: Int64 = 1_780_000_000 / 3600 * 3600
        func run(_ model: String, _ issued: Int64, _ values: [Double]) throws {
            var forecast = ModelForecast(model: model)
            forecast.hourlyTimes = (0..<values.count).map { t0 + Int64($0 + 1) * 3600 }
            forecast.hourly[Variables.hourlyIndex(of: "temperature_2m")!] = values
            _ = try store.store(
                ForecastResponse(
                    latitude: 1, longitude: 2, elevation: nil, utcOffsetSeconds: 0, timezone: "GMT", locationID: nil,
                    current: nil, models: [forecast]),
                for: location,
                fetch: FetchRecord(fetchedAt: issued, origin: .fetch, issuedAt: [model: issued], recordAnalysis: false))
        }
        // Hours 1..4 observed as 10. Model a: two runs; b: one run covering hours 1..3 only.
        try run("a", t0, [11, 12, 9, 14])
        try run("a", t0 + 1800, [13, 10, 10, 10])
        try run("b", t0, [10, 10, 12])
        for hour in 1...4 {
            var row = [Double?](repeating: nil, count: Variables.hourly.count)
            row[Variables.hourlyIndex(of: "temperature_2m")!] = 10
            try store.upsertObservation(
                locationID: location.id, source: "obs", time: t0 + Int64(hour) * 3600, values: row, recordedAt: 0)
        }
        let result = try Compare.compare(store, location: location, options: CompareOptions(variable: temperature))
        let row = try #require(result.rows.first)
        #expect(result.rows.count == 1)
        // Matched hours 1..3 (hour 4 has no b). a's per-hour mean |e|: (1+3)/2, (2+0)/2, (1+0)/2 = 2, 1, 0.5.
        #expect(row.n == 3)
        #expect(abs(row.mae.0 - 3.5 / 3) < 1e-12)
        #expect(abs(row.mae.1 - 2.0 / 3) < 1e-12)
        // a's per-hour mean e²: (1+9)/2, (4+0)/2, (1+0)/2 = 5, 2, 0.5; b's: 0, 0, 4.
        #expect(abs(row.rmse.0 - (7.5 / 3).squareRoot()) < 1e-12)
        #expect(abs(row.rmse.1 - (4.0 / 3).squareRoot()) < 1e-12)
        #expect(abs(row.meanDifference - (3.5 - 2) / 3) < 1e-12)
    }

    @Test("compare needs two different models: a usage error, or what to do when the location has one")
    func needsTwo() async throws {
        let empty = Sandbox()
        await empty.run("locations", "add", "Empty", "--lat", "1", "--lon", "2", "--models", "icon,gfs", "--force")
        let none = await empty.run("query", "compare", "--location", "Empty")
        #expect(none.code == 1)
        #expect(none.stderrText.contains("no forecast runs stored for Empty; run 'wxdb ingest"))

        let history = try TwoModelHistory(models: ["icon"]) { _, _, _, _ in 0 }
        let one = await history.box.run("query", "compare", "--location", "Testville")
        #expect(one.code == 1)
        #expect(one.stderrText.contains("has runs of icon only"))
        let unknown = await history.box.run("query", "compare", "--location", "Testville", "--models", "icon,nope")
        #expect(unknown.code == 1)
        #expect(unknown.stderrText.contains("has no runs of model nope (it has runs of icon)"))
        for models in ["icon,icon", "icon", "icon,gfs,ecmwf"] {
            let usage = await history.box.run("query", "compare", "--location", "Testville", "--models", models)
            #expect(usage.code == 64, "\(models)")
            #expect(usage.stderrText.contains("exactly two different models"))
        }
    }

    @Test("runs alternating ±1 around the truth flip-flop by 2; a monotone drift by 0")
    func flipFlopHistories() async throws {
        let history = try TwoModelHistory(models: ["alternating", "drifting"]) { model, run, _, _ in
            model == 0 ? (run % 2 == 0 ? 1 : -1) : Double(run) * 0.1
        }
        let document = try await history.json("query", "consistency", "--location", "Testville")
        let rows = try #require(document["rows"]?.arrayValue)
        let alternating = try #require(rows.first { $0["model"]?.stringValue == "alternating" })
        let drifting = try #require(rows.first { $0["model"]?.stringValue == "drifting" })
        // Runs every 6 h with leads 24–120 h: 17 runs per valid hour once the history is long enough.
        #expect((alternating["n"]?.numberValue ?? 0) > 0 && alternating["n"]?.numberValue == drifting["n"]?.numberValue)
        for key in ["flip_flop_index", "median", "p90"] {
            #expect(near(alternating[key]?.numberValue, 2, 1e-9), "\(key)")
        }
        #expect(near(drifting["flip_flop_index"]?.numberValue, 0, 1e-9))
        #expect(document["headline"]?.stringValue?.hasPrefix("drifting flip-flops least") == true)

        let byDay = try await history.json("query", "consistency", "--location", "Testville", "--by", "day")
        let dayRows = try #require(byDay["rows"]?.arrayValue)
        #expect(dayRows.compactMap { $0["lead_from_h"]?.numberValue } == [24, 24, 48, 48, 72, 72, 96, 96])
        for row in dayRows where row["model"]?.stringValue == "alternating" {
            #expect(near(row["flip_flop_index"]?.numberValue, 2, 1e-9))
        }

        let imperial = try await history.json("query", "consistency", "--location", "Testville", "--units", "imperial")
        #expect(imperial["unit"]?.stringValue == "°F")
        let row = imperial["rows"]?.arrayValue?.first { $0["model"]?.stringValue == "alternating" }
        #expect(near(row?["flip_flop_index"]?.numberValue, 3.6, 1e-9))
    }
}

@Suite("query verify: score intervals on a generated history")
struct VerifyIntervalCommandTests {
    @Test("every score has its interval around it, the same on every run; 90% is narrower; 0 turns them off")
    func intervals() async throws {
        let history = try TwoModelHistory { model, run, valid, lead in
            runNoise(seed: 6, model: model, run: run, valid: valid, lead: lead) + 0.5
        }
        let document = try await history.json("query", "verify", "--location", "Testville")
        let again = try await history.json("query", "verify", "--location", "Testville")
        #expect(document.serialized() == again.serialized())
        let rows = try #require(document["rows"]?.arrayValue)
        #expect(rows.count == LeadBuckets.all.count)
        for row in rows {
            for score in ["bias", "mae", "rmse", "error_sd", "correlation", "persistence_skill"] {
                let value = try #require(row[score]?.numberValue, "\(score)")
                let low = try #require(row[score + "_ci_low"]?.numberValue, "\(score)_ci_low")
                let high = try #require(row[score + "_ci_high"]?.numberValue, "\(score)_ci_high")
                #expect(low <= value && value <= high && low < high, "\(score): \(low) \(value) \(high)")
            }
        }
        let notes = (document["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(notes.contains { $0.hasPrefix("95% intervals: stationary block bootstrap over the valid days") })

        let narrow = try await history.json("query", "verify", "--location", "Testville", "--confidence", "90")
        for (wide, tight) in zip(rows, narrow["rows"]?.arrayValue ?? []) {
            let w = (wide["mae_ci_high"]?.numberValue ?? 0) - (wide["mae_ci_low"]?.numberValue ?? 0)
            let t = (tight["mae_ci_high"]?.numberValue ?? 0) - (tight["mae_ci_low"]?.numberValue ?? 0)
            #expect(t < w)
        }
        let off = try await history.json("query", "verify", "--location", "Testville", "--confidence", "0")
        #expect(off["rows"]?.arrayValue?.first?["mae_ci_low"] == nil)
        #expect(off["rows"]?.arrayValue?.first?["mae"]?.numberValue == rows.first?["mae"]?.numberValue)

        let table = await history.box.run("query", "verify", "--location", "Testville")
        #expect(table.code == 0)
        let line = try #require(table.stdout.split(separator: "\n").first { $0.hasPrefix("1–2 d") })
        // MAE with its interval at fixed decimals: "1.23 (1.10–1.37)".
        #expect(line.contains(try Regex(#"\d\.\d\d \(\d+\.\d\d–\d+\.\d\d\)"#)), "\(line)")

        let usage = await history.box.run("query", "verify", "--location", "Testville", "--confidence", "20")
        #expect(usage.code == 64)
        #expect(usage.stderrText.contains("--confidence is a level in percent"))
    }

    @Test("fewer than 10 valid days: no interval, and a note saying so")
    func tooFewDays() async throws {
        let history = try TwoModelHistory { model, run, valid, lead in
            runNoise(seed: 7, model: model, run: run, valid: valid, lead: lead)
        }
        let from = CivilTime.isoUTC(TwoModelHistory.start + 2 * 86_400).prefix(10)
        let to = CivilTime.isoUTC(TwoModelHistory.start + 6 * 86_400).prefix(10)
        let document = try await history.json(
            "query", "verify", "--location", "Testville", "--from", String(from), "--to", String(to))
        let rows = try #require(document["rows"]?.arrayValue)
        #expect(!rows.isEmpty)
        #expect(rows.allSatisfy { $0["mae_ci_low"]?.isNull == true && $0["mae"]?.numberValue != nil })
        let notes = (document["notes"]?.arrayValue ?? []).compactMap(\.stringValue)
        #expect(
            notes.contains { $0.hasPrefix("no interval where fewer than 10 valid days have pairs: 0–6 h (5 day(s))") },
            "\(notes)")
        // The note names each bucket as the table does (1–2 d, not 24–48 h).
        let table = await history.box.run(
            "query", "verify", "--location", "Testville", "--from", String(from), "--to", String(to), "--wide")
        let note = notes.first { $0.hasPrefix("no interval") } ?? ""
        let tableLines = table.stdout.split(separator: "\n").map { $0.trimmed(.whitespaces) }
        var daysLong = 0
        for row in rows {
            let (low, high) = (Int(row["lead_from_h"]?.numberValue ?? 0), Int(row["lead_to_h"]?.numberValue ?? 0))
            guard high > 24 else { continue }
            daysLong += 1
            let label = "\(low / 24)–\(high / 24) d"
            #expect(tableLines.contains { $0.hasPrefix(label) }, "\(label) in \(table.stdout)")
            #expect(note.contains(label + " ("), "\(label) in \(note)")
            #expect(!note.contains("\(low)–\(high) h"), "\(note)")
        }
        #expect(daysLong > 0)
    }
}

@Suite("query trend and report: intervals per day and as bands")
struct TrendIntervalTests {
    @Test("trend --every day: each day's mean error has its interval; the headline says whether the bias is noise")
    func trendDays() async throws {
        let history = try TwoModelHistory(models: ["icon"]) { _, run, valid, lead in
            runNoise(seed: 8, model: 0, run: run, valid: valid, lead: lead) + 2
        }
        let document = try await history.json(
            "query", "trend", "--location", "Testville", "--lead", "24", "--every", "day")
        let rows = try #require(document["rows"]?.arrayValue)
        let full = rows.filter { $0["hours"]?.numberValue == 24 }
        #expect(!full.isEmpty)
        for row in full {
            let error = try #require(row["error"]?.numberValue)
            let low = try #require(row["error_ci_low"]?.numberValue)
            let high = try #require(row["error_ci_high"]?.numberValue)
            #expect(low < error && error < high)
        }
        let bias = try #require(document["bias"]?.numberValue)
        let low = try #require(document["bias_ci_low"]?.numberValue)
        let high = try #require(document["bias_ci_high"]?.numberValue)
        #expect(low < bias && bias < high && low > 0)
        let table = await history.box.run("query", "trend", "--location", "Testville", "--lead", "24")
        #expect(table.stdout.contains("The bias is beyond the noise (95% interval +"), "\(table.stdout.prefix(300))")
    }

    @Test("trend --confidence sets the level of every interval and the headline's words; 0 turns them off")
    func trendConfidence() async throws {
        let history = try TwoModelHistory(models: ["icon"]) { _, run, valid, lead in
            runNoise(seed: 8, model: 0, run: run, valid: valid, lead: lead) + 2
        }
        let trend = ["query", "trend", "--location", "Testville", "--lead", "24", "--by", "day"]
        let wide = try await history.json(trend)
        let narrow = try await history.json(trend + ["--confidence", "80"])
        func width(_ document: JSON) -> Double {
            (document["bias_ci_high"]?.numberValue ?? 0) - (document["bias_ci_low"]?.numberValue ?? 0)
        }
        #expect(width(narrow) > 0 && width(narrow) < width(wide))
        let days = zip(wide["rows"]?.arrayValue ?? [], narrow["rows"]?.arrayValue ?? []).filter {
            $0.0["error_ci_low"]?.numberValue != nil
        }
        #expect(!days.isEmpty)
        for (w, n) in days {
            let a = (w["error_ci_high"]?.numberValue ?? 0) - (w["error_ci_low"]?.numberValue ?? 0)
            let b = (n["error_ci_high"]?.numberValue ?? 0) - (n["error_ci_low"]?.numberValue ?? 0)
            #expect(b < a)
        }
        let table = await history.box.run(trend + ["--confidence", "80"])
        #expect(table.code == 0, "\(table.stderrText)")
        #expect(table.stdout.contains("The bias is beyond the noise (80% interval +"), "\(table.stdout.prefix(300))")
        #expect(table.stdout.contains("80% CI") && !table.stdout.contains("95%"))
        let off = try await history.json(trend + ["--confidence", "0"])
        #expect(off["bias_ci_low"]?.isNull == true)
        #expect(off["rows"]?.arrayValue?.allSatisfy { $0["error_ci_low"]?.isNull == true } == true)
        let plain = await history.box.run(trend + ["--confidence", "0"])
        #expect(!plain.stdout.contains("interval"), "\(plain.stdout.prefix(300))")
        let usage = await history.box.run(trend + ["--confidence", "20"])
        #expect(usage.code == 64)
        #expect(usage.stderrText.contains("--confidence is a level in percent"))
    }

    @Test("the over-time chart (trend --format svg --by day, and the report's) draws each day's interval as a band")
    func trendBands() async throws {
        let history = try TwoModelHistory(models: ["icon"]) { _, run, valid, lead in
            runNoise(seed: 8, model: 0, run: run, valid: valid, lead: lead) + 2
        }
        let svg = await history.box.run(
            "query", "trend", "--location", "Testville", "--lead", "24", "--by", "day", "--format", "svg")
        #expect(svg.code == 0, "\(svg.stderrText)")
        #expect(svg.stdout.contains("<path class=\"band c0\""))
        #expect(svg.stdout.contains("the shaded band around a forecast line is the 95% interval of the day"))
        let hourly = await history.box.run(
            "query", "trend", "--location", "Testville", "--lead", "24", "--format", "svg")
        #expect(!hourly.stdout.contains("class=\"band"))
        // 30 days: the report draws the trend per day, with the bands.
        let page = await history.box.run("report", "--location", "Testville", "--var", "temperature_2m")
        #expect(page.code == 0, "\(page.stderrText)")
        let over = try #require(page.stdout.firstRange(of: "observed and forecast over time"))
        let rest = page.stdout[over.lowerBound...]
        let chart = rest[..<(rest.firstRange(of: "</svg>")?.lowerBound ?? rest.endIndex)]
        #expect(chart.contains("the shaded band around a forecast line"))
        #expect(chart.contains("<path class=\"band c0\""))
    }

    @Test("the report draws the MAE's intervals as bands on the error-by-lead chart; its score table stays as it was")
    func reportBands() async throws {
        let history = try TwoModelHistory { model, run, valid, lead in
            runNoise(seed: 9, model: model, run: run, valid: valid, lead: lead)
        }
        let page = await history.box.run("report", "--location", "Testville", "--var", "temperature_2m")
        #expect(page.code == 0, "\(page.stderrText)")
        #expect(page.stdout.contains("<path class=\"band c0\""))
        #expect(page.stdout.contains("the shaded bands are 95% intervals of the MAE"))
        #expect(!page.stdout.contains("mae_ci_low"))
    }
}
