import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite

@testable import WxCLI

/// Issue 10 point 2: persistence at offsets that are not whole hours.
@Suite("persistence at half- and quarter-hour offsets")
struct PersistenceOffsetTests {
    @Test(
        "the latest observation in the hour before issue is carried forward", arguments: StoreEngine.all,
        [20700, -12600, 34200])
    func persistence(_ engine: StoreEngine, _ offset: Int) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        // Open-Meteo reads whole UTC hours at any offset (issue 25 §2): the reference of a run
        // measured from a fetch 20 minutes past the hour is the observation on that hour.
        let a = utcMidnight(2026, 7, 20) + 12 * 3600
        let issued = a + 1200
        let observed: [Double] = [10.0, 11.0, 12.5, 9.0, 10.5]  // at a, a+1h, ..., a+4h
        let forecast: [Double] = [10.2, 11.5, 12.0, 9.5, 11.5]
        var csv = "time,temperature_2m\n"
        // An older observation (more than an hour before issue) that must not be the reference.
        csv += "\(CivilTime.isoUTC(a - 3600)),30\n"
        for (k, value) in observed.enumerated() { csv += "\(CivilTime.isoUTC(a + Int64(k) * 3600)),\(value)\n" }
        let csvPath = try box.write("station.csv", csv)
        #expect(await box.run("observe", "import", csvPath, "--location", "Here", "--source", "station").code == 0)
        // Unix stamps as Open-Meteo prints them: the label less the actual offset, off the hour.
        let printed = a - Int64(offset - (offset / 3600) * 3600)
        let response = TestResponse(
            offset: offset, start: printed, hours: 5, temperature: { forecast[Int(($0 - printed) / 3600)] })
        let path = try box.write("run.json", response.json())
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(issued)).code == 0)

        let result = await box.run("query", "verify", "--location", "Here", "--source", "station", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        // By hand: errors 0.5, -0.5, 0.5, 1.0 (MSE 0.4375); persistence (10.0) errors -1, -2.5, 1, -0.5 (MSE 2.125).
        #expect(row["n"]?.numberValue == 4)
        #expect(row["persistence_n"]?.numberValue == 4)
        let rmse = try #require(row["persistence_rmse"]?.numberValue)
        #expect(abs(rmse - 2.125.squareRoot()) < 1e-12)
        let skill = try #require(row["persistence_skill"]?.numberValue)
        #expect(abs(skill - (1 - 0.4375 / 2.125)) < 1e-12)
    }
}

/// Issue 10 point 6: units and numbers in machine output.
@Suite("units and numbers in machine output")
struct MachineOutputTests {
    static let day = utcMidnight(2026, 7, 20)
    static let forecast: [Double] = [-29.5, 11.5, 12.0, 9.5]
    static let observed: [Double] = [-29.9, 11.0, 12.5, 9.0]

    /// One run issued at `day` 00:00Z with 390 hours, and station temperatures for every one of them.
    func setUp() async throws -> Sandbox {
        let box = Sandbox()
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let d = Self.day
        let f = Self.forecast
        let run = TestResponse(start: d, hours: 390) { t in
            let k = Int((t - d) / 3600)
            return k < f.count ? f[k] : 10 + Double(k % 9) / 10
        }
        let path = try box.write("run.json", run.json())
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        let o = Self.observed
        let csv = try box.write(
            "station.csv",
            stationCSV(from: d, hours: 390) { t in
                let k = Int((t - d) / 3600)
                return k < o.count ? o[k] : 10.5 + Double(k % 7) / 10
            })
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        return box
    }

    /// Every number cell of a CSV text (cells that parse as a Double).
    func numberCells(_ text: String) -> [String] {
        text.split(separator: "\r\n").dropFirst().flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
            .map(String.init).filter { Double($0) != nil }
    }

    @Test("--units imperial names its unit in JSON and CSV of verify and trend")
    func unitsNamed() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let common = ["--location", "Here", "--source", "station", "--units", "imperial"]
        let verify = await box.run(["query", "verify", "--format", "json"] + common)
        #expect(try parseJSON(verify.stdout)["unit"]?.stringValue == "°F")
        let trend = await box.run(["query", "trend", "--lead", "1", "--tolerance", "1", "--format", "json"] + common)
        #expect(try parseJSON(trend.stdout)["unit"]?.stringValue == "°F")
        for command in [["query", "verify"], ["query", "trend", "--lead", "1", "--tolerance", "1"]] {
            let csv = await box.run(command + ["--format", "csv"] + common)
            let lines = csv.stdout.split(separator: "\r\n")
            let header = lines[0].split(separator: ",")
            let column = try #require(header.firstIndex(of: "unit"), "\(command): \(lines[0])")
            #expect(
                lines.dropFirst().allSatisfy {
                    $0.split(separator: ",", omittingEmptySubsequences: false)[column] == "°F"
                })
        }
        // query forecast's CSV names it too (its JSON always did).
        let forecast = await box.run(
            ["query", "forecast", "--at", CivilTime.isoUTC(Self.day + 5 * 3600), "--format", "csv"] + common)
        let lines = forecast.stdout.split(separator: "\r\n")
        #expect(lines[0].split(separator: ",")[6] == "unit")
        #expect(lines[1].split(separator: ",")[6] == "°F")
        let metric = await box.run("query", "verify", "--location", "Here", "--source", "station", "--format", "json")
        #expect(try parseJSON(metric.stdout)["unit"]?.stringValue == "°C")
    }

    @Test("numbers are written without arithmetic noise: -29.9 °C is -21.82 °F")
    func shortestNumbers() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let csv = await box.run(
            "query", "trend", "--location", "Here", "--source", "station", "--units", "imperial",
            "--lead", "1", "--tolerance", "1", "--format", "csv")
        let first = csv.stdout.split(separator: "\r\n")[1].split(separator: ",")
        // location,model,variable,unit,valid_time,issued_at,lead_hours,forecast,observed,...
        #expect(first[7] == "-21.1")  // -29.5 °C
        #expect(first[8] == "-21.82")  // -29.9 °C; computed, -21.819999999999993
        var outputs = [csv.stdout]
        outputs.append(
            await box.run(
                "query", "verify", "--location", "Here", "--source", "station", "--units", "imperial", "--format", "csv"
            ).stdout)
        outputs.append(
            await box.run(
                "query", "trend", "--location", "Here", "--source", "station", "--units", "imperial",
                "--lead", "30", "--every", "day", "--format", "csv"
            ).stdout)
        outputs.append(await box.run("export", "pairs", "--location", "Here", "--source", "station").stdout)
        for output in outputs {
            let noisy = numberCells(output).filter { NumberText.significantDigits($0) > 15 }
            #expect(noisy.isEmpty, "\(noisy)")
        }
        let json = await box.run(
            "query", "verify", "--location", "Here", "--source", "station", "--units", "imperial", "--format", "json")
        let numbers = json.stdout.split(whereSeparator: { ",:[]{}".contains($0) }).map(String.init).filter {
            Double($0) != nil
        }
        #expect(numbers.count > 100)
        #expect(numbers.allSatisfy { NumberText.significantDigits($0) <= 15 })
    }

    @Test("export pairs and verify follow one lead rule, 0 <= lead < 384 h")
    func leadRule() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let verify = await box.run("query", "verify", "--location", "Here", "--source", "station", "--format", "json")
        let rows = try #require(try parseJSON(verify.stdout)["rows"]?.arrayValue)
        let n = rows.compactMap { $0["n"]?.numberValue }.reduce(0, +)
        #expect(n == 384)
        let pairs = await box.run("export", "pairs", "--location", "Here", "--source", "station")
        let lines = pairs.stdout.split(separator: "\r\n").dropFirst()
        #expect(Double(lines.count) == n)
        let leads = lines.compactMap { Double($0.split(separator: ",")[4]) }
        #expect(leads.max() == 383)
        let verif = await box.run("export", "pairs", "--location", "Here", "--source", "station", "--format", "verif")
        #expect(Double(verif.stdout.split(separator: "\n").count - 3) == n)
    }

    @Test("error_sd divides by n - 1, as MET's ESTDEV")
    func errorSD() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let d = Self.day
        let verify = await box.run(
            "query", "verify", "--location", "Here", "--source", "station", "--format", "json",
            "--from", CivilTime.isoUTC(d), "--to", CivilTime.isoUTC(d + 3 * 3600))
        let row = try #require(try parseJSON(verify.stdout)["rows"]?.arrayValue?.first)
        let errors = zip(Self.forecast, Self.observed).map { $0 - $1 }
        let mean = errors.reduce(0, +) / Double(errors.count)
        let expected = (errors.map { ($0 - mean) * ($0 - mean) }.reduce(0, +) / Double(errors.count - 1)).squareRoot()
        #expect(row["n"]?.numberValue == 4)
        let sd = try #require(row["error_sd"]?.numberValue)
        #expect(abs(sd - expected) < 1e-9)
    }

    @Test("trend's headline names the same period and hours for --by hour and --by day")
    func trendHeadline() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let d = Self.day
        let base = [
            "query", "trend", "--location", "Here", "--source", "station", "--lead", "3", "--tolerance", "3",
            "--from", CivilTime.isoUTC(d), "--to", CivilTime.isoUTC(d + 23 * 3600)
        ]
        // Leads 0 to 6 h of the one run: hours 00:00 to 06:00 of one day. Per day or per hour, the
        // headline speaks of the same hours (issue 27: "27 days" hourly beside "28 days" daily).
        let daily = await box.run(base + ["--by", "day"])
        #expect(daily.stdout.contains("over 7 hours (n=7 hours)"), "\(daily.stdout)")
        let hourly = await box.run(base + ["--by", "hour"])
        #expect(hourly.stdout.contains("over 7 hours (n=7 hours)"), "\(hourly.stdout)")
        let days = await box.run([
            "query", "trend", "--location", "Here", "--source", "station", "--lead", "60", "--tolerance", "12",
            "--by", "day"
        ])
        // Leads 48 to 72 h: 2026-07-22 00:00 to 07-23 00:00, two local dates, 25 hours.
        #expect(days.stdout.contains("over 25 hours (n=25 hours)"), "\(days.stdout)")
    }
}

/// Issue 10 point 4: the default observation source is one that pairs.
@Suite("the default observation source pairs, and query and export agree on it")
struct DefaultSourceTests {
    static let day = utcMidnight(2026, 7, 20)

    func setUp() async throws -> Sandbox {
        let box = Sandbox()
        #expect(
            await box.run("locations", "add", "Berlin", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0
        )
        let d = Self.day
        let run = TestResponse(start: d, hours: 48) { 10 + Double(($0 / 3600) % 6) / 10 }
        let path = try box.write("run.json", run.json())
        #expect(await box.run("import", path, "--location", "Berlin", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        let era5 = try box.write("era5.csv", stationCSV(from: d, hours: 48) { 10.2 + Double(($0 / 3600) % 4) / 10 })
        #expect(await box.run("observe", "import", era5, "--location", "Berlin", "--source", "era5").code == 0)
        return box
    }

    func answers(_ box: Sandbox) async throws -> (
        verifySource: String?, n: Double, trendSource: String?, pairs: [String], note: String
    ) {
        let verify = await box.run("query", "verify", "--location", "Berlin", "--format", "json")
        #expect(verify.code == 0, "\(verify.stderrText)")
        let doc = try parseJSON(verify.stdout)
        let n = (doc["rows"]?.arrayValue ?? []).compactMap { $0["n"]?.numberValue }.reduce(0, +)
        let trend = await box.run("query", "trend", "--location", "Berlin", "--lead", "12", "--format", "json")
        #expect(trend.code == 0, "\(trend.stderrText)")
        let export = await box.run("export", "pairs", "--location", "Berlin")
        #expect(export.code == 0)
        let sources = export.stdout.split(separator: "\r\n").dropFirst().map { String($0.split(separator: ",").last!) }
        return (
            doc["source"]?.stringValue, n, try parseJSON(trend.stdout)["source"]?.stringValue, sources,
            verify.stderrText + "\n" + export.stderrText
        )
    }

    @Test("a station file whose hours no forecast covers does not take the default from era5")
    func stationThatDoesNotPair() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let before = try await answers(box)
        #expect(before.verifySource == "era5" && before.n == 48)
        // Two rows a week before any forecast: imported sources rank first, but these pair with nothing.
        let good = try box.write("good.csv", stationCSV(from: Self.day - 7 * 86400, hours: 2) { _ in 5 })
        #expect(await box.run("observe", "import", good, "--location", "Berlin", "--source", "mystation").code == 0)
        let after = try await answers(box)
        #expect(after.verifySource == "era5")
        #expect(after.trendSource == "era5")
        #expect(after.n == 48)
        #expect(Double(after.pairs.count) == after.n)
        #expect(after.pairs.allSatisfy { $0 == "era5" })
        #expect(after.note.contains("mystation has no observation at these forecasts' hours"), "\(after.note)")
        #expect(after.note.contains("Pairs of temperature_2m for Berlin use source era5"), "\(after.note)")
    }

    @Test(
        "compare's default source pairs with both models: a station file no forecast covers is skipped, as in verify",
        arguments: StoreEngine.all)
    func compareSkipsStationThatDoesNotPair(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run(
                "locations", "add", "Berlin", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC", "--models",
                "icon_seamless,ecmwf_ifs025"
            ).code == 0)
        let d = Self.day
        for (model, offset) in [("icon_seamless", 0.0), ("ecmwf_ifs025", 0.3)] {
            let run = TestResponse(start: d, hours: 48) { 10 + offset + Double(($0 / 3600) % 6) / 10 }
            let path = try box.write("\(model).json", run.json())
            let stored = await box.run(
                "import", path, "--location", "Berlin", "--model", model, "--fetched-at", CivilTime.isoUTC(d))
            #expect(stored.code == 0, "\(stored.stderrText)")
        }
        let era5 = try box.write("era5.csv", stationCSV(from: d, hours: 48) { 10.2 + Double(($0 / 3600) % 4) / 10 })
        #expect(await box.run("observe", "import", era5, "--location", "Berlin", "--source", "era5").code == 0)
        // A station file of other days (a Delhi file imported for Berlin): ranked first, pairs with nothing.
        let other = try box.write("other.csv", stationCSV(from: d - 7 * 86400, hours: 2) { _ in 5 })
        #expect(await box.run("observe", "import", other, "--location", "Berlin", "--source", "mystation").code == 0)
        let compare = await box.run("query", "compare", "--location", "Berlin", "--format", "json")
        #expect(compare.code == 0, "\(compare.stderrText)")
        #expect(try parseJSON(compare.stdout)["source"]?.stringValue == "era5")
        #expect(
            compare.stderrText.contains("mystation has no observation at these forecasts' hours"),
            "\(compare.stderrText)")
        // Asked for by name, the station is still used, and says why nothing pairs.
        let asked = await box.run("query", "compare", "--location", "Berlin", "--source", "mystation")
        #expect(asked.code == 1)
    }

    @Test("a station file that pairs keeps its precedence, in query and export alike")
    func stationThatPairs() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let good = try box.write("good.csv", stationCSV(from: Self.day + 3 * 3600, hours: 2) { _ in 5 })
        #expect(await box.run("observe", "import", good, "--location", "Berlin", "--source", "mystation").code == 0)
        let result = try await answers(box)
        #expect(result.verifySource == "mystation")
        #expect(result.n == 2)
        #expect(result.pairs == ["mystation", "mystation"])
    }
}

/// Issue 10 point 5: prune keeps what ingest cannot bring back, and says what it removed.
@Suite("prune keeps the latest run and says what it pruned")
struct PruneEdgeTests {
    static let day = utcMidnight(2026, 7, 20)

    /// Run A issued `day` 00:00Z and run B a day later, 72 hours each, with station temperatures
    /// and precipitation for every hour.
    func setUp() async throws -> (Sandbox, String) {
        let box = Sandbox()
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let d = Self.day
        let a = TestResponse(
            start: d, hours: 72, temperature: { 10 + Double(($0 / 3600) % 5) / 10 },
            precipitation: { Double(($0 / 3600) % 3) / 10 })
        let b = TestResponse(
            start: d + 86400, hours: 72, temperature: { 12 + Double(($0 / 3600) % 7) / 10 },
            precipitation: { Double(($0 / 3600) % 4) / 10 })
        #expect(
            await box.run(
                "import", try box.write("a.json", a.json()), "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)
            ).code == 0)
        let bPath = try box.write("b.json", b.json())
        #expect(
            await box.run("import", bPath, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d + 86400)).code == 0)
        var csv = "time,temperature_2m,precipitation\n"
        for k in 0..<(4 * 24) {
            let t = d + Int64(k) * 3600
            csv += "\(CivilTime.isoUTC(t)),\(11 + Double(k % 6) / 10),\(Double(k % 5) / 10)\n"
        }
        #expect(
            await box.run(
                "observe", "import", try box.write("station.csv", csv), "--location", "Here", "--source", "station"
            ).code == 0)
        return (box, bPath)
    }

    @Test("--keep-days 0 keeps the latest run; --dry-run changes nothing; runs and forecast say what was pruned")
    func keepsLatest() async throws {
        let (box, bPath) = try await setUp()
        defer { box.remove() }
        let d = Self.day
        let before = try counts(box.db)
        let dry = await box.run("prune", "--keep-days", "0", "--dry-run")
        #expect(dry.code == 0)
        #expect(dry.stdout.contains("Would prune 1 runs: 72 hourly and 3 daily rows"), "\(dry.stdout)")
        #expect(try counts(box.db) == before)

        #expect(await box.run("prune", "--keep-days", "0").code == 0)
        #expect(try counts(box.db)["hourly_forecasts"] == 72)  // run B, the latest, keeps every hour
        // The latest run's content again is recognised, and its hours are still there to ask about.
        let again = await box.run(
            "import", bPath, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d + 86400 + 3600))
        #expect(again.stderrText.contains("0 new run(s)"))
        let latest = await box.run(
            "query", "forecast", "--location", "Here", "--at", CivilTime.isoUTC(d + 2 * 86400), "--format", "json")
        #expect(latest.code == 0, "\(latest.stderrText)")
        #expect(try parseJSON(latest.stdout)["pruned_runs"]?.numberValue == 1)
        #expect(latest.stderrText.contains("1 run(s) that forecast this hour were pruned"))
        // An hour only the pruned run held.
        let gone = await box.run("query", "forecast", "--location", "Here", "--at", CivilTime.isoUTC(d + 6 * 3600))
        #expect(gone.code == 1)
        #expect(gone.stderrText.contains("were pruned: their hourly rows are gone"), "\(gone.stderrText)")

        let runs = await box.run("query", "runs", "--location", "Here", "--format", "json")
        let list = try #require(try parseJSON(runs.stdout)["runs"]?.arrayValue)
        #expect(list.map { $0["pruned_at"]?.stringValue != nil } == [true, false])
        let table = await box.run("query", "runs", "--location", "Here")
        #expect(table.stdout.contains("72, pruned"), "\(table.stdout)")
        #expect(table.stderrText.contains("1 run(s) were pruned"))
    }

    @Test("rows made only from pruned sums carry every key; the range note is in JSON")
    func prunedRowsAndNotes() async throws {
        let (box, _) = try await setUp()
        defer { box.remove() }
        #expect(await box.run("prune", "--keep-days", "0").code == 0)
        // Day 1 holds only the pruned run's pairs; at a threshold other than 0.1 mm its table is unknown.
        let verify = await box.run(
            "query", "verify", "--location", "Here", "--source", "station", "--var", "precipitation",
            "--threshold", "0.25", "--from", "2026-07-20", "--to", "2026-07-20", "--format", "json", "--confidence", "0"
        )
        #expect(verify.code == 0, "\(verify.stderrText)")
        let doc = try parseJSON(verify.stdout)
        let rows = try #require(doc["rows"]?.arrayValue)
        #expect(!rows.isEmpty)
        for row in rows {
            for key in [
                "threshold_mm", "a", "b", "c", "d", "pod", "far", "csi", "ets", "persistence_n", "persistence_skill"
            ] {
                #expect(row[key] != nil, "missing \(key)")
            }
            #expect(row["a"] == .null)
        }
        // The 2x2 table at another threshold comes from the pairs, which pruned runs no longer have: said so.
        let thresholdNotes = try #require(doc["notes"]?.arrayValue)
        #expect(thresholdNotes.count == 1)
        #expect(thresholdNotes.first?.stringValue?.contains("pruned runs are left out of it") == true)
        // A range that cuts the pruned day: left out, and said so in the document itself.
        let cut = await box.run(
            "query", "verify", "--location", "Here", "--source", "station", "--format", "json",
            "--from", "2026-07-20T06:00Z", "--to", "2026-07-22", "--confidence", "0")
        let notes = try #require(try parseJSON(cut.stdout)["notes"]?.arrayValue)
        #expect(notes.count == 2)
        #expect(notes.contains { $0.stringValue?.contains("scored from the stored pairs") == true })
        #expect(
            notes.contains {
                $0.stringValue?.contains("partly inside --from/--to: their pruned runs' pairs were left out") == true
            })
    }
}
