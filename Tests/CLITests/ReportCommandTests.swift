import Foundation
import TestSupport
import Testing
import WxStore
import WxStoreSQLite

@testable import WxCLI
@testable import WxCore

/// A generated history for the report: runs every `every` hours over `days` days (each forecasting
/// `horizon` hours), of each model, with hourly station observations when `observed`.
private func reportHistory(
    _ sandbox: Sandbox, name: String = "Testville", days: Int = 4, every: Int = 6, horizon: Int = 96,
    models: [String] = ["best_match"], observed: Bool = true, precipitation: Bool = true
) throws {
    let history = try HistoryBuilder(db: sandbox.db, name: name, models: models)
    let start: Int64 = 1_784_000_000 / 86400 * 86400
    func truth(_ t: Int64) -> (Double, Double, Double) {
        let hour = Double(t / 3600)
        let rain = max(0, 2 * sin(hour / 9)) > 1 ? 0.8 + 0.1 * cos(hour) : 0
        return (8 + 6 * sin(hour * .pi / 12), rain, 12 + 5 * cos(hour / 7))
    }
    for run in 0..<(days * 24 / every) {
        let issued = start + Int64(run * every) * 3600
        for (m, model) in models.enumerated() {
            let times = (0..<horizon).map { issued + Int64($0) * 3600 }
            let drift = { (t: Int64) in Double((t - issued) / 3600) / 48 + Double(m) * 0.3 }
            var columns: [String: [Double?]] = [
                "temperature_2m": times.map { truth($0).0 + drift($0) },
                "wind_speed_10m": times.map { truth($0).2 - drift($0) }
            ]
            if precipitation {
                columns["precipitation"] = times.map { t in truth(t + 3600 * Int64(m)).1 }
                columns["precipitation_probability"] = times.map { t in truth(t).1 > 0 ? 80 : 10 + Double(t / 3600 % 5)
                }
            } else {
                columns["precipitation"] = times.map { _ in nil }
            }
            try history.storeRun(
                model: model, issuedAt: issued, fetchedAt: issued + 600, times: times, columns: columns,
                recordAnalysis: false)
        }
    }
    if observed {
        for hour in 0..<(days * 24) {
            let t = start + Int64(hour) * 3600
            let (temperature, rain, wind) = truth(t)
            var values = ["temperature_2m": temperature + 0.2, "wind_speed_10m": wind]
            if precipitation { values["precipitation"] = rain }
            try history.observe(source: "station", time: t, values)
        }
    }
    sandbox.now = Date(timeIntervalSince1970: TimeInterval(start + Int64(days) * 86400))
}

/// The `<table class="scores" data-variable="...">` rows of a page: key → data-value, per row.
private func scoreRows(_ html: String, variable: String) -> [[String: String]] {
    guard let start = html.range(of: "<table class=\"scores\" data-variable=\"\(variable)\">"),
        let end = html.range(of: "</table>", range: start.upperBound..<html.endIndex)
    else { return [] }
    let table = html[start.upperBound..<end.lowerBound]
    return table.components(separatedBy: "<tr>").dropFirst(2).map { row in
        var cells: [String: String] = [:]
        for cell in row.components(separatedBy: "<td data-key=\"").dropFirst() {
            let key = String(cell.prefix { $0 != "\"" })
            guard let valueStart = cell.range(of: "data-value=\"") else { continue }
            let value = cell[valueStart.upperBound...].prefix { $0 != "\"" }
            cells[key] = unescape(String(value))
        }
        return cells
    }
}

private func unescape(_ text: String) -> String {
    text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
        .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
        .replacingOccurrences(of: "&amp;", with: "&")
}

/// What no page may hold: anything that would reach the network or run code.
private func expectSelfContained(_ html: String, sourceLocation: SourceLocation = #_sourceLocation) {
    for forbidden in [
        "http://", "https://", "<script", "<link", "<img", "<iframe", "url(", "@import", "src=\"", "href=\""
    ] {
        #expect(!html.lowercased().contains(forbidden), "the page holds \(forbidden)", sourceLocation: sourceLocation)
    }
}

@Suite struct ReportCommandTests {
    @Test(arguments: StoreEngine.all) func thePageHasEverySectionAndChart(engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        try reportHistory(sandbox, models: ["best_match", "gfs_seamless"])
        let result = await sandbox.run("report", "--location", "Testville")
        #expect(result.code == 0, "\(result.stderrText)")
        let html = result.stdout
        #expect(html.hasPrefix("<!DOCTYPE html>"))
        for section in ["errors-by-lead", "convergence", "over-time", "precipitation", "coverage", "scores"] {
            #expect(html.contains("<section id=\"\(section)\">"), "section \(section)")
        }
        // Lead charts (3), convergence (3), over time (3), POD/FAR/CSI/ETS per model (2), reliability, calendar.
        let charts = html.components(separatedBy: "<svg ").count - 1
        #expect(charts == 13)
        #expect(html.components(separatedBy: "role=\"img\"").count - 1 == charts)
        #expect(html.components(separatedBy: "aria-labelledby=").count - 1 == charts)
        #expect(html.contains("prefers-color-scheme:dark"))
        #expect(html.contains("<table class=\"contingency\">"))
        #expect(html.contains("data-series=\"gfs_seamless MAE\""))
        #expect(!html.contains("class=\"missing\""), "nothing is missing from this history")
        // The findings are verify's and trend's own headlines.
        #expect(html.contains("<p class=\"finding\">best_match forecasts "))
        #expect(html.contains("forecasts issued 24 h ahead"))
        expectSelfContained(html)
    }

    @Test(arguments: StoreEngine.all) func theScoreTableIsVerifysJSON(engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        try reportHistory(sandbox, models: ["best_match", "gfs_seamless"])
        let html = await sandbox.run("report", "--location", "Testville", "--units", "imperial").stdout
        for variable in ["temperature_2m", "precipitation", "wind_speed_10m"] {
            // The page draws the intervals as bands; its table is verify's rows without them (the first
            // table is the first model's).
            let verify = await sandbox.run(
                "query", "verify", "--location", "Testville", "--var", variable, "--units", "imperial", "--model",
                "best_match", "--format", "json", "--confidence", "0")
            #expect(verify.code == 0)
            let rows = try #require(try parseJSON(verify.stdout)["rows"]?.arrayValue)
            let page = scoreRows(html, variable: variable)
            #expect(page.count == rows.count && !rows.isEmpty, "\(variable)")
            for (pageRow, jsonRow) in zip(page, rows) {
                let object = try #require(jsonRow.objectValue)
                #expect(Set(pageRow.keys) == Set(object.keys), "\(variable)")
                for key in object.keys {
                    let value = try parseJSON(try #require(pageRow[key]))
                    #expect(value == object[key], "\(variable) \(key)")
                }
            }
        }
    }

    /// Issue 27 point 7: with two models, the score and precipitation sections give each model its own
    /// headline, n and table (a pool of both is neither model's), in the location's model order.
    @Test(arguments: StoreEngine.all) func twoModelsGetTheirOwnScoresAndPrecipitation(engine: StoreEngine) async throws
    {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        defer { sandbox.remove() }
        let models = ["best_match", "gfs_seamless"]
        try reportHistory(sandbox, models: models)
        let result = await sandbox.run("report", "--location", "Testville")
        #expect(result.code == 0, "\(result.stderrText)")
        let html = result.stdout
        func section(_ id: String) throws -> String {
            let start = try #require(html.range(of: "<section id=\"\(id)\">"))
            let end = try #require(html.range(of: "</section>", range: start.upperBound..<html.endIndex))
            return String(html[start.upperBound..<end.lowerBound])
        }
        let scores = try section("scores")
        let precipitation = try section("precipitation")
        for (variable, text) in [("temperature_2m", scores), ("precipitation", precipitation)] {
            // Each model's part: from its heading to the next heading.
            var parts: [String: String] = [:]
            for model in models {
                let heading = variable == "precipitation" ? "<h3>\(model)</h3>" : "<h4>\(model)</h4>"
                var rest = text
                if variable != "precipitation" {
                    let own = try #require(text.range(of: "<h3>\(variable)</h3>"))
                    rest = String(text[own.upperBound...])
                }
                let start = try #require(rest.range(of: heading), "no \(heading) for \(variable)")
                let after = rest[start.upperBound...]
                let end = after.range(of: "<h")?.lowerBound ?? after.endIndex
                parts[model] = String(after[..<end])
            }
            let level = variable == "precipitation" ? 3 : 4
            let first = try #require(text.range(of: "<h\(level)>best_match"))
            let second = try #require(text.range(of: "<h\(level)>gfs_seamless"))
            #expect(first.lowerBound < second.lowerBound, "\(variable): the location's model order")
            for model in models {
                let verify = await sandbox.run(
                    "query", "verify", "--location", "Testville", "--var", variable, "--model", model, "--format",
                    "json", "--confidence", "0")
                let rows = try #require(try parseJSON(verify.stdout)["rows"]?.arrayValue)
                let own = try #require(parts[model])
                #expect(own.contains("<p class=\"finding\">\(model) forecasts "), "\(variable) \(model): \(own)")
                let n = try #require(own.range(of: "(n=")).upperBound
                let shown = try #require(Int(own[n...].prefix { $0.isNumber }))
                let modelNs = rows.compactMap { $0.objectValue?["n"]?.numberValue.map { Int($0) } }
                #expect(modelNs.contains(shown), "\(variable) \(model): n=\(shown), the model's rows \(modelNs)")
            }
            #expect(!text.contains("<p class=\"finding\">Forecasts "), "\(variable): a headline pools the models")
            if variable == "temperature_2m" {
                #expect(
                    text.components(separatedBy: "<table class=\"scores\" data-variable=\"temperature_2m\"").count - 1
                        == 2)
            } else {
                #expect(text.components(separatedBy: "<table class=\"contingency\">").count - 1 == 2)
            }
        }
    }

    @Test(arguments: StoreEngine.all) func aHostileLocationNameIsEscaped(engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        let name = "<script>alert(\"x\")</script><img src=x onerror=alert(1)> & 'q'"
        try reportHistory(sandbox, name: name, days: 2)
        let result = await sandbox.run("report", "--location", name)
        #expect(result.code == 0, "\(result.stderrText)")
        expectSelfContained(result.stdout)
        #expect(result.stdout.contains("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;"))
        for query in [["verify"], ["trend", "--lead", "24"], ["forecast", "--at", "now"]] {
            let svg = await sandbox.run(["query"] + query + ["--location", name, "--format", "svg"])
            #expect(!svg.stdout.contains("<script") && !svg.stdout.contains("<img"), "\(query)")
        }
    }

    @Test(arguments: [
        (["verify", "--var", "temperature_2m"], "MAE and bias by lead time"),
        (["verify", "--var", "precipitation_probability", "--by", "model"], "Brier score by lead time"),
        (["trend", "--lead", "24"], "observed and forecast over time"),
        (["forecast", "--at", "now"], "run after run")
    ])
    func svgFormatWritesTheChartAlone(query: [String], title: String) async throws {
        let sandbox = Sandbox()
        try reportHistory(sandbox, days: 3)
        let result = await sandbox.run(["query"] + query + ["--location", "Testville", "--format", "svg"])
        #expect(result.code == 0, "\(result.stderrText)")
        let svg = result.stdout
        #expect(svg.hasPrefix("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"wx-chart\" role=\"img\""))
        #expect(svg.hasSuffix("</svg>\n"))
        #expect(svg.contains("<style>") && svg.contains("<title id="))
        #expect(svg.contains(title))
        #expect(svg.components(separatedBy: "<svg").count == 2)
        // The same chart, byte for byte, on a second run.
        #expect(await sandbox.run(["query"] + query + ["--location", "Testville", "--format", "svg"]).stdout == svg)
    }

    @Test func otherCommandsRejectSVG() async throws {
        let sandbox = Sandbox()
        try reportHistory(sandbox, days: 1)
        for command in [["query", "runs"], ["query", "compare"], ["query", "consistency"]] {
            let result = await sandbox.run(command + ["--location", "Testville", "--format", "svg"])
            #expect(result.code == 64, "\(command)")
            #expect(result.stderrText.contains("--format must be one of table, csv, json, not 'svg'"), "\(command)")
        }
    }

    @Test func outputGoesToAFileReplacedWhole() async throws {
        let sandbox = Sandbox()
        try reportHistory(sandbox, days: 2)
        let path = sandbox.folder.appendingPathComponent("report.html").path
        try "old".write(toFile: path, atomically: true, encoding: .utf8)
        let result = await sandbox.run("report", "--location", "Testville", "--output", path)
        #expect(result.code == 0)
        #expect(result.stdout.isEmpty)
        let written = try String(contentsOfFile: path, encoding: .utf8)
        #expect(written.hasPrefix("<!DOCTYPE html>") && written.hasSuffix("</html>\n"))
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: sandbox.folder.path)
            .filter { $0.contains("wxdb-partial") }
        #expect(leftovers.isEmpty)
        // Refused: the database itself.
        let refused = await sandbox.run("report", "--location", "Testville", "--output", sandbox.db)
        #expect(refused.code == 1)
    }

    @Test(arguments: StoreEngine.all) func optionsAreChecked(engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        try reportHistory(sandbox, days: 1)
        for (arguments, message) in [
            (["--lead", "500"], "--lead must be a number of hours from 0 to 384"),
            (["--var", "temprature_2m"], "did you mean"),
            (["--at", "tomorrow"], "is not a time"),
            (["--from", "2026-12-02", "--to", "2026-12-01"], "--from must be before --to")
        ] {
            let result = await sandbox.run(["report", "--location", "Testville"] + arguments)
            #expect(result.code == 64, "\(arguments)")
            #expect(result.stderrText.contains(message), "\(arguments): \(result.stderrText)")
        }
    }
}

@Suite struct ReportAwkwardDataTests {
    @Test(arguments: StoreEngine.all) func runsWithoutObservationsSayWhatIsMissing(engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        try reportHistory(sandbox, days: 2, observed: false)
        let result = await sandbox.run("report", "--location", "Testville")
        #expect(result.code == 0, "\(result.stderrText)")
        let html = result.stdout
        #expect(html.contains("<p class=\"missing\">No chart: no observations stored for Testville"))
        #expect(html.contains("nothing is observed for it yet"))
        // Convergence and coverage still draw: they need runs only.
        #expect(html.contains("id=\"conv-temperature-2m-t\""))
        #expect(html.contains("id=\"coverage-t\""))
        expectSelfContained(html)
    }

    @Test(arguments: StoreEngine.all) func allNullPrecipitationSaysSo(engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        try reportHistory(sandbox, days: 2, precipitation: false)
        let result = await sandbox.run("report", "--location", "Testville")
        #expect(result.code == 0, "\(result.stderrText)")
        let html = result.stdout
        #expect(html.contains("No precipitation forecasts pair with an observation"))
        #expect(html.contains("<h3>precipitation_probability</h3>\n<p class=\"missing\">No chart: "))
        #expect(!html.contains("data-variable=\"precipitation\""))
        #expect(html.contains("data-variable=\"temperature_2m\""))
    }

    @Test(arguments: StoreEngine.all) func aSingleDayAndOneModelRender(engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        try reportHistory(sandbox, days: 1, every: 24, horizon: 24)
        let result = await sandbox.run("report", "--location", "Testville", "--lead", "6")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stdout.contains("data-series=\"best_match MAE\""))
        #expect(result.stdout.contains("issued 6 h ahead"))
        expectSelfContained(result.stdout)
    }

    @Test(arguments: StoreEngine.all) func aCategoryAndAProbabilityGetSentencesWhereTheyCannotBeDrawn(
        engine: StoreEngine
    ) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        try reportHistory(sandbox, days: 2)
        let result = await sandbox.run(
            "report", "--location", "Testville", "--var", "weather_code,precipitation_probability")
        #expect(result.code == 0, "\(result.stderrText)")
        let html = result.stdout
        #expect(html.contains("No chart: weather_code cannot be scored this way"))
        #expect(html.contains("weather_code is a category (a WMO code), not a quantity, so it is not drawn over time."))
        #expect(html.contains("precipitation_probability has no observed value of its own"))
        #expect(html.contains("id=\"lead-precipitation-probability-t\""))
        #expect(html.contains("Brier score by lead time"))
    }

    /// Issue 27: a page of seven sections each saying "nothing stored" was one error in disguise.
    @Test(arguments: StoreEngine.all) func aLocationWithNothingStoredIsOneError(engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        defer { sandbox.remove() }
        _ = try HistoryBuilder(db: sandbox.db, name: "Empty")
        let file = sandbox.folder.appendingPathComponent("empty.html").path
        let result = await sandbox.run("report", "--location", "Empty", "--output", file)
        #expect(result.code == 1)
        #expect(result.stdout.isEmpty)
        #expect(result.stderrText.split(separator: "\n").count == 1)
        #expect(result.stderrText.hasPrefix("Error: no forecast runs stored for Empty; run 'wxdb ingest"))
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func manyRunsStaySmall() async throws {
        let sandbox = Sandbox()
        // 10,000 hourly runs of 30 hours each: every series is averaged down to at most 400 points.
        let history = try HistoryBuilder(db: sandbox.db)
        let start: Int64 = 1_784_000_000 / 3600 * 3600
        for run in 0..<10_000 {
            let issued = start + Int64(run) * 3600
            let times = (0..<30).map { issued + Int64($0) * 3600 }
            try history.storeRun(
                issuedAt: issued, fetchedAt: issued + 60, times: times,
                columns: ["temperature_2m": times.map { Double(($0 / 3600) % 24) + Double(run % 7) / 10 }])
        }
        sandbox.now = Date(timeIntervalSince1970: TimeInterval(start + 10_000 * 3600))
        let result = await sandbox.run("report", "--location", "Testville", "--var", "temperature_2m")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stdout.utf8.count < 2_000_000)
        #expect(result.stdout.contains("id=\"coverage-t\""))
        #expect(result.stdout.contains("brought a new forecast"))
    }
}
