// What a new user met in the first hour (issue 27), each tried as they tried it.
import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay

@testable import WxCLI

/// A replay server and a database holding `Hamburg`: two models backfilled for `days` days.
private func hamburg(days: Int = 8) async throws -> ReplaySandbox {
    let replay = try ReplaySandbox()
    let clock = Date(timeIntervalSince1970: 1_785_000_000)
    replay.box.now = clock
    replay.server.now = { clock }
    replay.box.environment["WXDB_SINGLE_RUNS_URL"] = replay.server.baseURL + ReplayServer.singleRunsPath
    let added = await replay.run(
        "locations", "add", "Hamburg", "--lat", "53.55", "--lon", "9.99", "--timezone", "Europe/Berlin",
        "--models", "icon_seamless,ecmwf_ifs025")
    #expect(added.code == 0, "\(added.stderrText)")
    let backfill = await replay.run("backfill", "--location", "Hamburg", "--days", "\(days)", "--every", "12")
    #expect(backfill.code == 0, "\(backfill.stderrText)")
    return replay
}

private func object(_ text: String) throws -> [String: Any] {
    try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
}

@Suite("issue 27: how good was it N hours out", .serialized)
struct LeadQuestionTests {
    @Test("verify --lead keeps the bucket holding that lead, for each model; --lead-from/--lead-to a range")
    func verifyLead() async throws {
        let replay = try await hamburg()
        let one = await replay.run(
            "query", "verify", "--location", "Hamburg", "--by", "model", "--lead", "72", "--format", "json")
        #expect(one.code == 0, "\(one.stderrText)")
        let rows = try #require(try object(one.stdout)["rows"] as? [[String: Any]])
        #expect(rows.map { $0["model"] as? String } == ["ecmwf_ifs025", "icon_seamless"])
        #expect(rows.allSatisfy { $0["lead_from_h"] as? Int == 72 && $0["lead_to_h"] as? Int == 96 })

        let range = await replay.run(
            "query", "verify", "--location", "Hamburg", "--lead-from", "24", "--lead-to", "48", "--format", "json")
        #expect(range.code == 0, "\(range.stderrText)")
        let kept = try #require(try object(range.stdout)["rows"] as? [[String: Any]])
        #expect(kept.map { $0["lead_from_h"] as? Int } == [24, 48])

        let table = await replay.run("query", "verify", "--location", "Hamburg", "--lead", "5")
        #expect(table.code == 0)
        #expect(table.stdout.hasPrefix("Forecasts 0–6 hours out"), "\(table.stdout)")
    }

    @Test(
        "verify's lead options: contradictions are usage errors, a lead without pairs is exit 1",
        arguments: [
            (["--lead", "10", "--lead-from", "5"], 64), (["--lead-from", "48", "--lead-to", "24"], 64),
            (["--lead", "400"], 64), (["--lead", "380"], 1)
        ] as [([String], Int32)])
    func verifyLeadErrors(_ extra: [String], _ code: Int32) async throws {
        let replay = try await hamburg(days: 2)
        let result = await replay.box.run(["query", "verify", "--location", "Hamburg"] + extra)
        #expect(result.code == code, "\(result.stderrText)")
        #expect(result.stdout.isEmpty)
        #expect(result.stderrText.hasPrefix("Error: "))
    }

    @Test("compare's narrowed table keeps the adjusted p that its 'better' column is read from")
    func compareKeepsHolm() async throws {
        let replay = try await hamburg()
        let table = await replay.run("query", "compare", "--location", "Hamburg")
        #expect(table.code == 0, "\(table.stderrText)")
        let header = try #require(table.stdout.split(separator: "\n").first { $0.hasPrefix("lead ") })
        #expect(header.contains("p joint") && header.contains("better"), "\(header)")
        #expect(header.count <= 100)
        // Short headers: A and B are named once above the table, the unit once at the header's end,
        // and with them the RMSE columns fit too (before, four headers carried a model name and °C each).
        #expect(header.contains("MAE A") && header.contains("RMSE B") && header.hasSuffix("(°C)"), "\(header)")
        #expect(table.stdout.contains("A = icon_seamless, B = ecmwf_ifs025; diff = "), "\(table.stdout)")
        // The replay's truth is era5, a reanalysis: called model output, as verify calls it, not observations.
        #expect(table.stdout.contains("against era5 (MODEL OUTPUT, not measurements); A = "), "\(table.stdout)")
    }

    @Test("trend follows every model without --model; --by day is the spelling, --every still works")
    func trendEveryModel() async throws {
        let replay = try await hamburg()
        let json = await replay.run("query", "trend", "--location", "Hamburg", "--lead", "24", "--format", "json")
        #expect(json.code == 0, "\(json.stderrText)")
        let document = try object(json.stdout)
        #expect(document["model"] is NSNull)
        let models = try #require(document["models"] as? [[String: Any]])
        #expect(models.map { $0["model"] as? String } == ["icon_seamless", "ecmwf_ifs025"])
        let rows = try #require(document["rows"] as? [[String: Any]])
        #expect(Set(rows.map { $0["model"] as? String }) == ["icon_seamless", "ecmwf_ifs025"])

        let hourly = await replay.run("query", "trend", "--location", "Hamburg", "--lead", "24")
        // The model-output truth is said once, not on stderr and again in the title.
        let truthNotes = (hourly.stdout + hourly.stderrText).components(separatedBy: "truth is ").count - 1
        #expect(truthNotes == 1, "\(hourly.stderrText)\n\(hourly.stdout.prefix(600))")
        // Each model's headline line states its bias interval (or not); its JSON entry carries the same.
        let lines = hourly.stdout.split(separator: "\n").prefix(2).map(String.init)
        for (model, line) in zip(models, lines) {
            #expect(model.keys.contains("bias_ci_low") && model.keys.contains("bias_ci_high"), "\(model)")
            #expect((model["bias_ci_low"] is Double) == line.contains("95% interval"), "\(line) / \(model)")
        }
        let daily = await replay.run("query", "trend", "--location", "Hamburg", "--lead", "24", "--by", "day")
        #expect(daily.code == 0, "\(daily.stderrText)")
        let hourlyLines = hourly.stdout.split(separator: "\n").prefix(2).map(String.init)
        let dailyLines = daily.stdout.split(separator: "\n").prefix(2).map(String.init)
        #expect(hourlyLines[0].hasPrefix("icon_seamless forecasts issued 24 h ahead"))
        #expect(hourlyLines[1].hasPrefix("ecmwf_ifs025 forecasts issued 24 h ahead"))
        // The same hours, hour by hour or per day: the same headline, period and n included.
        #expect(dailyLines == hourlyLines)

        // Daily totals in the table, hourly scores in the headline: the headline says its unit is per hour.
        let rain = await replay.run(
            "query", "trend", "--location", "Hamburg", "--lead", "24", "--by", "day", "--var", "precipitation")
        #expect(rain.code == 0, "\(rain.stderrText)")
        let rainLines = rain.stdout.split(separator: "\n").prefix(2)
        #expect(rainLines.allSatisfy { $0.contains(" mm/h)") }, "\(rain.stdout)")

        let old = await replay.run("query", "trend", "--location", "Hamburg", "--lead", "24", "--every", "day")
        #expect(old.code == 0)
        #expect(old.stdout == daily.stdout)
        #expect(old.stderrText.contains("--every is deprecated"))
        let both = await replay.run(
            "query", "trend", "--location", "Hamburg", "--lead", "24", "--every", "day", "--by", "day")
        #expect(both.code == 64)

        let single = await replay.run(
            "query", "trend", "--location", "Hamburg", "--lead", "24", "--model", "ecmwf_ifs025", "--format", "json")
        #expect(try object(single.stdout)["model"] as? String == "ecmwf_ifs025")
    }
}

@Suite("issue 27: model names are checked against the models wxdb knows")
struct ModelNameTests {
    @Test(
        "a mistyped model is a usage error with a did-you-mean, and nothing is saved",
        arguments: [
            ("icon_seamles,ecmwf_ifs025", "'icon_seamles' is not a model wxdb knows; did you mean 'icon_seamless'?"),
            ("icon_seamless,ecmwf_ifs25", "'ecmwf_ifs25' is not a model wxdb knows; did you mean 'ecmwf_ifs025'?"),
            ("zzzz", "'zzzz' is not a model wxdb knows (e.g. icon_seamless")
        ])
    func mistyped(_ models: String, _ message: String) async throws {
        let box = Sandbox()
        defer { box.remove() }
        let add = await box.run("locations", "add", "Typo", "--lat", "1", "--lon", "2", "--models", models)
        #expect(add.code == 64)
        #expect(add.stderrText.hasPrefix("Error: " + message), "\(add.stderrText)")
        #expect(add.stderrText.contains("--force"))
        #expect(!FileManager.default.fileExists(atPath: box.db))

        #expect(await box.run("locations", "add", "Good", "--lat", "1", "--lon", "2").code == 0)
        let set = await box.run("locations", "set", "Good", "--models", models)
        #expect(set.code == 64)
        #expect(set.stderrText.hasPrefix("Error: " + message))
        let shown = await box.run("locations", "show", "Good", "--format", "json")
        #expect(try object(shown.stdout)["models"] as? [String] == ["best_match"])
    }

    @Test(
        "--force keeps a model wxdb does not know, with a note; known models need no --force",
        arguments: StoreEngine.all)
    func forced(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        let add = await box.run(
            "locations", "add", "New", "--lat", "1", "--lon", "2", "--models", "icon_seamless,brand_new_model",
            "--force")
        #expect(add.code == 0, "\(add.stderrText)")
        #expect(add.stderrText.contains("Note: brand_new_model is not a model wxdb knows; kept because of --force"))
        let set = await box.run("locations", "set", "New", "--models", "future_model", "--force")
        #expect(set.code == 0)
        #expect(set.stderrText.contains("Note: future_model is not a model"))
        for model in ["best_match", "icon_seamless", "ecmwf_ifs025", "gfs_seamless", "meteofrance_seamless"] {
            let known = await box.run("locations", "set", "New", "--models", model)
            #expect(known.code == 0, "\(model): \(known.stderrText)")
            #expect(!known.stderrText.contains("Note:"))
        }
    }
}

@Suite("issue 27: the verif export writes one file per model", .serialized)
struct VerifPerModelTests {
    @Test("several models: refused without --model, one file each with --output-dir or {model}; the header names it")
    func perModel() async throws {
        let replay = try await hamburg(days: 3)
        let base = ["export", "pairs", "--location", "Hamburg", "--format", "verif"]
        let refused = await replay.box.run(base)
        #expect(refused.code == 1)
        #expect(refused.stdout.isEmpty)
        #expect(
            refused.stderrText.contains(
                "Hamburg has runs of 2 models (icon_seamless, ecmwf_ifs025) and a verif file holds one"))

        let csv = await replay.run("export", "pairs", "--location", "Hamburg")
        let perModelPairs = Dictionary(
            grouping: csv.stdout.split(separator: "\r\n").dropFirst().map { $0.split(separator: ",")[1] }, by: { $0 }
        ).mapValues(\.count)
        #expect(perModelPairs.count == 2)

        let folder = replay.box.folder.appendingPathComponent("verif")
        let pattern = replay.box.folder.appendingPathComponent("hamburg-{model}.txt").path
        for extra in [["--output-dir", folder.path], ["--output", pattern]] {
            let result = await replay.box.run(base + extra)
            #expect(result.code == 0, "\(result.stderrText)")
            for model in ["icon_seamless", "ecmwf_ifs025"] {
                let path =
                    extra[0] == "--output-dir"
                    ? folder.appendingPathComponent("\(model).txt").path
                    : pattern.replacingOccurrences(of: "{model}", with: model)
                let text = try String(contentsOfFile: path, encoding: .utf8)
                let lines = text.split(separator: "\n")
                #expect(lines.first == "# variable: temperature_2m (\(model))")
                #expect(lines.count - 3 == perModelPairs[Substring(model)], "\(model)")
                #expect(result.stderrText.contains("Wrote \(lines.count - 3) rows to \(path)"))
            }
        }

        let one = await replay.box.run(base + ["--model", "ecmwf_ifs025"])
        #expect(one.code == 0)
        #expect(one.stdout.hasPrefix("# variable: temperature_2m (ecmwf_ifs025)\n"))

        for wrong in [["--output-dir", folder.path, "--format", "csv"], ["--output", pattern, "--format", "csv"]] {
            let usage = await replay.box.run(["export", "pairs", "--location", "Hamburg"] + wrong)
            #expect(usage.code == 64)
        }

        // verif itself reads the two files as two systems, each under its model's name.
        guard let verif = verifExecutable else { return }
        let (status, data) = try Subprocess.run(
            verif,
            [
                folder.appendingPathComponent("icon_seamless.txt").path,
                folder.appendingPathComponent("ecmwf_ifs025.txt").path,
                "-m", "mae", "-type", "csv"
            ])
        #expect(status == 0)
        let header = String(decoding: data, as: UTF8.self).split(separator: "\n").first ?? ""
        // (verif's legend is the file name with spaces for underscores.)
        #expect(header.contains("icon seamless") && header.contains("ecmwf ifs025"), "\(header)")
    }
}

@Suite("issue 27: the report with two models", .serialized)
struct ReportTwoModelTests {
    @Test("every model over time and in the headlines, the convergence at the latest observed hour, headers in words")
    func twoModels() async throws {
        let replay = try await hamburg(days: 16)
        let report = await replay.run("report", "--location", "Hamburg")
        #expect(report.code == 0, "\(report.stderrText)")
        let html = report.stdout
        func section(_ id: String) -> String {
            guard let start = html.range(of: "<section id=\"\(id)\"") else { return "" }
            let rest = html[start.upperBound...]
            return String(rest[..<(rest.range(of: "</section>")?.lowerBound ?? rest.endIndex)])
        }
        let errors = section("errors-by-lead")
        for model in ["icon_seamless", "ecmwf_ifs025"] {
            #expect(errors.contains("<p class=\"finding\">\(model) forecasts"), "\(model)")
            for lead in ["24", "72"] {
                #expect(section("over-time").contains("\(model) issued \(lead) h ahead"), "\(model) \(lead)")
            }
        }
        #expect(!errors.contains("<p class=\"finding\">Forecasts"))
        let convergence = section("convergence")
        #expect(convergence.contains("The charts follow the latest hour with an observation"))
        #expect(!convergence.contains("nothing is observed for it yet"))
        #expect(section("over-time").contains("precipitation: observed and forecast over time (daily totals)"))
        let scores = section("scores")
        #expect(!scores.contains(">lead_from_h<") && scores.contains(">lead from <span class=\"unit\">(h)</span>"))
    }

    @Test("precipitation per day is the day's total, in query trend --by day as in the report")
    func dailyTotals() async throws {
        let replay = try await hamburg(days: 4)
        let base = [
            "query", "trend", "--location", "Hamburg", "--var", "precipitation", "--lead", "24", "--model",
            "icon_seamless", "--format", "json"
        ]
        let hourly = try #require(try object((await replay.box.run(base)).stdout)["rows"] as? [[String: Any]])
        let daily = try #require(
            try object((await replay.box.run(base + ["--by", "day"])).stdout)["rows"] as? [[String: Any]])
        var sums: [String: (forecast: Double, observed: Double)] = [:]
        for row in hourly {
            let time = try #require(CivilTime.parse(row["valid_time"] as? String ?? ""))
            let date = ZoneTime.date(of: time.wallSeconds, timezone: "Europe/Berlin")
            sums[date, default: (0, 0)].forecast += row["forecast"] as? Double ?? .nan
            sums[date, default: (0, 0)].observed += row["observed"] as? Double ?? .nan
        }
        #expect(daily.count == sums.count)
        for row in daily {
            let sum = try #require(sums[row["date"] as? String ?? ""])
            #expect(abs((row["forecast"] as? Double ?? .nan) - sum.forecast) < 1e-9)
            #expect(abs((row["observed"] as? Double ?? .nan) - sum.observed) < 1e-9)
        }
    }
}

@Suite("issue 27: tables for people", .serialized)
struct TableTests {
    @Test("tables fit 100 characters unless --wide; a column's numbers have one number of decimals; forecast by model")
    func tables() async throws {
        let replay = try await hamburg(days: 3)
        let queries: [[String]] = [
            ["query", "verify", "--location", "Hamburg", "--by", "model"],
            ["query", "compare", "--location", "Hamburg"],
            ["query", "runs", "--location", "Hamburg"],
            ["query", "trend", "--location", "Hamburg", "--lead", "24"],
            // Runs every 12 h: leads 24, 36 and 48 h lie in the half-open [24, 60).
            ["query", "consistency", "--location", "Hamburg", "--lead-from", "24", "--lead-to", "60"],
            ["locations", "list"]
        ]
        var cut = 0
        for query in queries {
            let narrow = await replay.box.run(query)
            #expect(narrow.code == 0, "\(query): \(narrow.stderrText)")
            // The headline sentences and notes around a table may be longer; the table's lines are not.
            let lines = narrow.stdout.split(separator: "\n")
            let dashes = try #require(lines.firstIndex { $0.hasPrefix("---") }, "\(query)")
            let table = lines[(dashes - 1)...].prefix { !$0.hasPrefix("Note:") && !$0.hasPrefix("forecast ") }
            let widest = table.map(\.count).max() ?? 0
            #expect(widest <= 100, "\(query): \(widest) wide")
            let wide = await replay.box.run(query + ["--wide"])
            if narrow.stderrText.contains("left out to fit 100 characters") {
                cut += 1
                #expect(narrow.stderrText.contains("--wide shows them"))
                #expect((wide.stdout.split(separator: "\n").map(\.count).max() ?? 0) > 100)
            } else {
                #expect(wide.stdout == narrow.stdout)
            }
        }
        #expect(cut >= 2, "compare and runs were wider than 100 characters")

        // Fixed decimals: every MAE and bias cell of the verify table has two.
        let verify = await replay.box.run("query", "verify", "--location", "Hamburg", "--by", "model")
        let lines = verify.stdout.split(separator: "\n")
        let header = try #require(lines.firstIndex { $0.hasPrefix("model") })
        let columns = lines[header].split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let mae = try #require(columns.firstIndex(of: "MAE"))
        for row in lines[(header + 2)...] {
            let cells = row.split(separator: " ", omittingEmptySubsequences: true)
            // model, lead ("0–6 h" is two words), n, bias, MAE ...
            let value = cells[mae + 1]
            #expect(value.split(separator: ".").last?.count == 2, "MAE \(value) in \(row)")
        }

        // query forecast: each model's runs together, not interleaved.
        let forecast = await replay.box.run(
            "query", "forecast", "--location", "Hamburg", "--at", "2026-07-24T12:00Z", "--format", "json")
        #expect(forecast.code == 0, "\(forecast.stderrText)")
        let runs = try #require(try object(forecast.stdout)["runs"] as? [[String: Any]])
        let models = runs.compactMap { $0["model"] as? String }
        var blocks: [String] = []
        for model in models where blocks.last != model { blocks.append(model) }
        #expect(blocks.count == 2 && Set(blocks).count == 2, "\(blocks)")

        // ...and its value column has one decimal in every row (2.0 above 1.1, not 2).
        let forecastTable = await replay.box.run(
            "query", "forecast", "--location", "Hamburg", "--at", "2026-07-24T12:00Z")
        #expect(forecastTable.code == 0, "\(forecastTable.stderrText)")
        let forecastLines = forecastTable.stdout.split(separator: "\n")
        let dashes = try #require(forecastLines.firstIndex { $0.hasPrefix("---") })
        #expect(forecastLines[dashes - 1].contains("lead h  temperature_2m  change"))
        // model, issued date, issued time, lead h, then the value
        let values = forecastLines[(dashes + 1)...].prefix { !$0.hasPrefix("Observed") }.compactMap { line in
            let cells = line.split(separator: " ")
            return cells.count > 4 ? String(cells[4]) : nil
        }
        #expect(values.count > 2)
        for value in values {
            #expect(value.split(separator: ".").last?.count == 1 && value.contains("."), "forecast value \(value)")
        }
    }
}

@Suite("issue 27: small things", .serialized)
struct SmallThingsTests {
    @Test("a model the location does not fetch, empty consistency, relative dates, a name in another case, % bias")
    func smallThings() async throws {
        let replay = try await hamburg(days: 3)
        let other = await replay.run("query", "verify", "--location", "Hamburg", "--model", "gfs_seamless")
        #expect(other.code == 1)
        #expect(other.stderrText.contains("it is not one of its models (icon_seamless, ecmwf_ifs025)"))
        #expect(
            other.stderrText.contains("wxdb locations set \"Hamburg\" --models icon_seamless,ecmwf_ifs025,gfs_seamless")
        )
        #expect(!other.stderrText.contains("run 'wxdb ingest"))

        let nothing = await replay.run(
            "query", "consistency", "--location", "Hamburg", "--lead-from", "300", "--lead-to", "310")
        #expect(nothing.code == 1)
        #expect(nothing.stdout.isEmpty)
        #expect(nothing.stderrText.hasPrefix("Error: nothing to show for Hamburg"))

        // The sandbox's clock is 2026-07-25 17:20 UTC: -1d and yesterday are 07-24; the runs start 07-23.
        let all = await replay.run("query", "verify", "--location", "Hamburg", "--format", "json")
        for (from, to) in [("-1d", "today"), ("yesterday", "today"), ("2026-07-24", "2026-07-25")] {
            let relative = await replay.run(
                "query", "verify", "--location", "Hamburg", "--from", from, "--to", to, "--format", "json")
            #expect(relative.code == 0, "\(from) \(to): \(relative.stderrText)")
            #expect(relative.stdout != all.stdout, "\(from) \(to) filtered nothing")
        }
        let same = [
            await replay.run(
                "query", "verify", "--location", "Hamburg", "--from", "yesterday", "--to", "today", "--format", "json"),
            await replay.run(
                "query", "verify", "--location", "Hamburg", "--from", "2026-07-24", "--to", "2026-07-25", "--format",
                "json")
        ]
        #expect(same[0].stdout == same[1].stdout)
        #expect(await replay.run("query", "verify", "--location", "Hamburg", "--from", "tomorrow").code == 64)

        let lower = await replay.run("query", "runs", "--location", "hamburg")
        #expect(lower.code == 0, "\(lower.stderrText)")

        let humidity = await replay.run(
            "query", "verify", "--location", "Hamburg", "--var", "relative_humidity_2m", "--model", "icon_seamless")
        #expect(humidity.code == 0)
        #expect(humidity.stdout.contains("percentage points too") || humidity.stdout.contains("showed no bias"))
        #expect(!humidity.stdout.contains("% too"))

        let again = await replay.run("backfill", "--location", "Hamburg", "--days", "3", "--every", "12")
        #expect(again.stderrText.contains("Backfill: 0 forecast request(s)"))
        #expect(again.stderrText.contains("then the observed weather from the archive API"))
    }

    @Test("a name that differs only in case from two saved names is not guessed", arguments: StoreEngine.all)
    func ambiguousCase(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        for name in ["Paris", "PARIS"] {
            #expect(await box.run("locations", "add", name, "--lat", "1", "--lon", "2").code == 0)
        }
        #expect(await box.run("locations", "show", "Paris").code == 0)
        let ambiguous = await box.run("locations", "show", "paris")
        #expect(ambiguous.code == 1)
        #expect(ambiguous.stderrText.contains("did you mean"))
    }
}
