import WxCharts
import WxCore
import WxQueries
import WxStore

/// `wxdb report`: one self-contained HTML page of charts for a location (inline CSS and SVG, no
/// script, no URL), every number from the same query results `query ... --format json` prints.
enum ReportCommand {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var variables: [String] = []
        var range = TimeRangeOptions()
        var at: String?
        var leads: [String] = []
        var source: String?
        var units = UnitsOption()
        var output: String?

        static let defaultVariables = ["temperature_2m", "precipitation", "wind_speed_10m"]

        static var table: [Opt<Options>] {
            LocationOption.options(\.location)
                + [
                    VariableListOption.option(
                        \.variables, help: "Hourly variables to chart.",
                        default: "those of \(defaultVariables.joined(separator: ", ")) that have pairs",
                        completions: Variables.hourlyNames)
                ]
                + TimeRangeOptions.options(\.range, on: "forecast hours valid")
                + [
                    AtOption.option(
                        \.at,
                        help:
                            "The hour whose forecasts the convergence chart follows (ISO 8601; without offset: the location's zone).",
                        default: "the latest hour with an observation, else the next hour"),
                    .list(
                        "lead", "hours", "Leads (hours, 0 to 384) of the forecast-against-observed charts.",
                        default: "24,72", \.leads),
                    SourceOption.option(\.source),
                    OutputPathOption.option(
                        \.output, help: "Write the page to this file instead of stdout (replaced only when complete).")
                ]
                + UnitsOption.options(\.units) + DatabaseOption.options(\.database)
        }

        func validate() throws {
            for name in variables { _ = try VariableOption.hourly(name) }
            try range.validate()
            if let at, at != "now", CivilTime.parse(at) == nil { throw TimeInput.notATime(at, option: "at") }
            for lead in leads {
                guard let hours = Double(lead), hours.isFinite, (0...384).contains(hours) else {
                    throw UsageError("--lead must be a number of hours from 0 to 384, not '\(lead)'")
                }
            }
        }
    }

    static var command: Command {
        Command(
            name: "report",
            abstract: "Write one self-contained HTML page of charts: errors by lead, convergence, trends, coverage.",
            discussion: """
                The page has inline CSS and SVG only (no script, no font or image to fetch), opens offline and prints.
                Sections: MAE and bias by lead time per model; for an ensemble model, CRPS beside that MAE, spread
                against the mean's RMSE, the rank histogram and the reliability diagram; how the forecast for one hour (--at) converged run after
                run; observed against the forecast issued --lead hours ahead, over time; precipitation's 2x2 table,
                POD/FAR/CSI/ETS and the reliability of precipitation_probability; a calendar of hours fetched, repeated
                and missed; and the query verify table by lead bucket. Each chart has a one-sentence finding (the
                headline of query verify or trend) and says in words when data is missing.
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let store = try options.database.open(context, access: .read)
        let location = try options.location.resolve(store)
        let range = try options.range.resolve(timezone: location.timezone, now: context.nowUnix)
        let at = try options.at.map {
            try TimeInput.resolve($0, timezone: location.timezone, now: context.nowUnix, option: "at")
        }
        let leads = options.leads.isEmpty ? [24.0, 72] : options.leads.compactMap(Double.init)
        let page = try Page(
            store: store, location: location, variables: options.variables, range: range, at: at, leads: leads,
            source: options.source, units: options.units.units, now: context.nowUnix
        ).html()
        try context.finishOutput()
        let output = try options.database.outputFile(options.output, context)
        do {
            let bytes = Array(page.utf8)
            try bytes.withUnsafeBytes { try output.write($0) }
            try output.commit()
            if let path = options.output { context.note("Wrote the report (\(bytes.count) bytes) to \(path)") }
        } catch {
            output.abandon()
            throw error
        }
    }

    /// The page, section by section. A section whose query finds nothing says what is missing in
    /// place of its chart; errors other than "nothing to show" stop the report.
    struct Page {
        let store: any Store
        let location: Location
        let variables: [String]
        let range: TimeRange
        let at: Int64?
        let leads: [Double]
        let source: String?
        let units: UnitSystem
        let now: Int64

        func html() throws -> String {
            // Verify by lead (the headline and the closing table) and by model (the lines).
            var scored: [(Variable, Result<VerifyResult, Error>)] = []
            let names = variables.isEmpty ? Options.defaultVariables : variables
            for name in names {
                let variable = Variables.hourlyVariable(named: name)!
                scored.append((variable, Result { try verify(variable, .lead) }))
            }
            let everyVariable = scored
            if variables.isEmpty {
                let withPairs = scored.filter { (try? $0.1.get()) != nil }
                if !withPairs.isEmpty { scored = withPairs } else { scored = Array(scored.prefix(1)) }
            }
            let chosen = scored.map(\.0)
            let models = try TrendQuery.models(store, location: location)
            // Nothing stored at all: one error, not a page of sections each saying so.
            guard !models.isEmpty else { throw QueryError.noRuns(location: location.name, model: nil) }
            // The per-model score tables and 2x2 tables; an ensemble has its own section.
            let scoredModels = models.filter { !EnsembleModels.isEnsemble($0) }
            var body = ""
            // <bdi>: a right-to-left name must not carry ": forecast report" along with it.
            body += "<header><h1><bdi>\(SVG.escape(location.name))</bdi>: forecast report</h1>"
            body += "<p class=\"meta\">\(SVG.escape(metaLine(chosen)))</p></header>\n"

            // 1. Errors by lead.
            body += "<section id=\"errors-by-lead\"><h2>Error by lead time</h2>\n"
            for (variable, result) in scored {
                body += "<h3>\(SVG.escape(variable.name))</h3>\n"
                switch result {
                case .success(let pooled):
                    // One model: its rows by model are the pooled rows (no second pass over the pairs).
                    if models.count == 1 {
                        body += finding(Query.Verify.headline(pooled, unit: unit(pooled)))
                        var single = pooled
                        single.rows = pooled.rows.map { row in
                            var row = row
                            row.model = models[0]
                            return row
                        }
                        body += figure(ChartViews.verify(single, id: "lead-\(variable.name)"))
                    } else if let byModel = try? verify(variable, .model) {
                        // A headline per model, as the chart draws them (a blend of both matches neither line).
                        body += modelHeadlines(byModel)
                        body += figure(ChartViews.verify(byModel, id: "lead-\(variable.name)"))
                    } else {
                        body += finding(Query.Verify.headline(pooled, unit: unit(pooled)))
                    }
                case .failure(let error): body += missing(error)
                }
            }
            body += "</section>\n"

            // 1b. Ensembles (issue 31), only for a location with an ensemble model.
            body += try ensembleSection(chosen)

            // 2. Convergence.
            body += "<section id=\"convergence\"><h2>Forecast convergence</h2>\n"
            let hour = try convergenceHour(scored)
            if !hour.note.isEmpty { body += "<p class=\"note\">\(SVG.escape(hour.note))</p>\n" }
            for variable in chosen {
                body += "<h3>\(SVG.escape(variable.name))</h3>\n"
                guard let time = hour.time else {
                    body += missingText("No stored run forecasts any hour of \(location.name) yet.")
                    continue
                }
                do {
                    let history = try ForecastHistoryQuery.history(
                        store, location: location, validTime: time, variable: variable, source: source, units: units)
                    body += finding(convergenceFinding(history))
                    body += figure(ChartViews.convergence(history, location: location, id: "conv-\(variable.name)"))
                } catch let error as QueryError {
                    body += missing(error)
                }
            }
            body += "</section>\n"

            // 3. Observed against forecasts over time.
            body += "<section id=\"over-time\"><h2>Observed and forecast over time</h2>\n"
            for variable in chosen {
                body += "<h3>\(SVG.escape(variable.name))</h3>\n"
                guard !variable.isProbability, variable.verification != .categorical else {
                    body += missingText(
                        variable.isProbability
                            ? "\(variable.name) has no observed value of its own to draw beside it; see its reliability below."
                            : "\(variable.name) is a category (a WMO code), not a quantity, so it is not drawn over time."
                    )
                    continue
                }
                var trends: [TrendResult] = []
                var problems: [String] = []
                // Every model at every lead, each its own line (one model alone would hide the others).
                var trendSource = source
                for lead in leads {
                    for model in models {
                        do {
                            let result = try trend(
                                variable, lead: lead, every: .hour, model: model, source: trendSource)
                            trendSource = result.source
                            trends.append(result)
                        } catch let error as QueryError {
                            problems.append("\(model): " + userMessage(for: error))
                        }
                    }
                }
                // A long period is drawn per day: a year of hours would not fit a page (or 2 MB).
                if let first = trends.first?.points.first?.time, let last = trends.first?.points.last?.time,
                    last - first > 14 * 86400
                {
                    trends = trends.map { hourly in
                        var daily = hourly
                        daily.points = TrendQuery.daily(
                            hourly.points, timezone: location.timezone, sum: variable.quantity == .precipitation,
                            confidence: hourly.confidence)
                        daily.every = .day
                        return daily
                    }
                }
                for trend in trends {
                    body += finding(Query.Trend.headline(trend, unit: units.unit(variable.quantity)))
                }
                for problem in problems { body += missingText("No chart for this lead: " + problem) }
                if let chart = ChartViews.trend(trends, location: location, id: "trend-\(variable.name)") {
                    body += figure(chart)
                }
            }
            body += "</section>\n"

            // 4. Precipitation.
            body += try precipitationSection(everyVariable, models: scoredModels)

            // 5. Coverage.
            body += "<section id=\"coverage\"><h2>Coverage</h2>\n"
            let coverage = try CoverageQuery.coverage(store, location: location, range: range)
            if let first = coverage.hours.first?.hour, let last = coverage.hours.last?.hour {
                body += finding(
                    "Of the hours from \(Query.local(first, location)) to \(Query.local(last, location)), \(coverage.count(.fetched)) brought a new forecast, \(coverage.count(.repeated)) the same content again and \(coverage.count(.missed)) missed a fetch (usual interval \(coverage.cadenceHours) h)."
                )
                body += figure(
                    ChartViews.coverage(coverage, location: location, range: (first, last), id: "coverage"))
            } else {
                body += missingText(
                    "No fetch or import of \(location.name) is logged\(range.from == nil && range.to == nil ? "" : " in this period"); run 'wxdb ingest' to start."
                )
            }
            body += "</section>\n"

            // 6. Scores.
            body += "<section id=\"scores\"><h2>Scores by lead time</h2>\n"
            for (variable, result) in scored {
                body += "<h3>\(SVG.escape(variable.name))</h3>\n"
                switch result {
                case .success(let pooled) where scoredModels.count <= 1:
                    body += finding(Query.Verify.headline(pooled, unit: unit(pooled)))
                    // The intervals are drawn as bands; the table keeps the scores.
                    var scores = pooled
                    scores.options.confidence = nil
                    body += scoreTable(Query.Verify.report(scores, location), variable: variable)
                case .success:
                    // Issue 27: one headline and table per model; a pool of models scores none of them.
                    for model in scoredModels {
                        body += "<h4>\(SVG.escape(model))</h4>\n"
                        do {
                            let own = try verify(variable, .lead, model: model, confidence: nil)
                            body += finding(Query.Verify.headline(own, unit: unit(own)))
                            body += scoreTable(Query.Verify.report(own, location), variable: variable)
                        } catch let error as QueryError {
                            body += missing(error)
                        }
                    }
                case .failure(let error): body += missing(error)
                }
            }
            body += "</section>\n"
            return Self.document(title: "\(location.name): forecast report", body: body)
        }

        /// Per ensemble model of the location: CRPS beside the deterministic models' MAE, spread against
        /// the RMSE of the mean, the rank histogram and the reliability diagram (precipitation ≥ 0.1 mm),
        /// from the same results `query ensemble` prints. Empty for a location without an ensemble.
        func ensembleSection(_ chosen: [Variable]) throws -> String {
            let models = location.models.filter(EnsembleModels.isEnsemble)
            guard !models.isEmpty else { return "" }
            var body = "<section id=\"ensembles\"><h2>Ensemble forecasts</h2>\n"
            guard let observed = try source ?? ObservationSources.ranked(store, locationID: location.id).first else {
                return body
                    + missingText(
                        "No observations of \(location.name) are stored, so the ensemble is not scored; run 'wxdb observe backfill' first."
                    ) + "</section>\n"
            }
            let precipitation = Variables.hourlyVariable(named: "precipitation")!
            let threshold = 0.1
            let variables = chosen.filter { EnsembleModels.variables.contains($0) }
            func scores(_ model: String, _ variable: Variable) throws -> EnsembleVerification {
                try EnsembleVerify.run(
                    store: store, location: location, model: model, variable: variable, source: observed,
                    from: range.from ?? .min, to: range.to.map { $0 - 1 } ?? .max,
                    thresholds: variable == precipitation ? [threshold] : [])
            }
            for model in models {
                var reliabilityDrawn = false
                for variable in variables {
                    body += "<h3>\(SVG.escape(model)): \(SVG.escape(variable.name))</h3>\n"
                    let result = try scores(model, variable)
                    guard result.total.n > 0 else {
                        body += missingText(
                            "No stored run of \(model) has a member of \(variable.name) at an hour observed by \(observed) (\(result.runs) runs read)."
                        )
                        continue
                    }
                    body += finding(ensembleFinding(result))
                    let key = "\(model)-\(variable.name)"
                    body += figure(
                        EnsembleChartViews.crps(
                            result, deterministic: try? verify(variable, .model), units: units, id: "ens-crps-\(key)"))
                    body += figure(EnsembleChartViews.spreadSkill(result, units: units, id: "ens-spread-\(key)"))
                    body += figure(EnsembleChartViews.rankHistogram(result, id: "ens-ranks-\(key)"))
                    if let events = result.events.first, events.n > 0 {
                        body += figure(EnsembleChartViews.reliability(events, result, id: "ens-reliability-\(model)"))
                        reliabilityDrawn = true
                    }
                }
                // The reliability diagram is of an event, and precipitation has the natural one.
                if !reliabilityDrawn {
                    let result = try scores(model, precipitation)
                    body += "<h3>\(SVG.escape(model)): precipitation ≥ \(formatNumber(threshold, places: 1)) mm</h3>\n"
                    if let events = result.events.first, events.n > 0 {
                        body += figure(EnsembleChartViews.reliability(events, result, id: "ens-reliability-\(model)"))
                    } else {
                        body += missingText(
                            "No stored run of \(model) has precipitation members at an hour observed by \(observed), so there is no reliability diagram."
                        )
                    }
                }
            }
            return body + "</section>\n"
        }

        func ensembleFinding(_ result: EnsembleVerification) -> String {
            let variable = Variables.hourlyVariable(named: result.variable)!
            let unit = units.unit(variable.quantity)
            func shown(_ value: Double?) -> String {
                value.map { "\(formatNumber(units.convertDifference($0, variable.quantity), places: 2)) \(unit)" }
                    ?? "n/a"
            }
            let s = result.total
            var sentence =
                "Over \(s.n) cases from \(result.runs) run(s), \(result.model)'s CRPS is \(shown(s.crps)) (fair \(shown(s.fairCRPS))), the RMSE of its mean \(shown(s.meanRMSE)) and its spread \(shown(s.spread))"
            if let ratio = s.spreadSkillRatio {
                sentence +=
                    "; spread-skill ratio \(formatNumber(ratio, places: 2)) ("
                    + (ratio < 0.9 ? "under-dispersive" : ratio > 1.1 ? "over-dispersive" : "about right") + ")"
            }
            return sentence + "."
        }

        func unit(_ result: VerifyResult) -> String {
            result.variable.isProbability ? "%" : result.options.units.unit(result.variable.quantity)
        }

        /// `query verify`'s result; with a model, that model's alone, its rows naming it (so its headline does).
        func verify(
            _ variable: Variable, _ grouping: VerifyGrouping, model: String? = nil, confidence: Double? = 0.95
        ) throws -> VerifyResult {
            var result = try VerifyQuery.verify(
                store, location: location,
                options: {
                    var options = VerifyOptions(
                        variable: variable, source: source, range: range, grouping: grouping, units: units)
                    options.model = model
                    options.confidence = confidence
                    return options
                }())
            if let model {
                result.rows = result.rows.map { row in
                    var row = row
                    row.model = row.model ?? model
                    return row
                }
            }
            return result
        }

        func trend(
            _ variable: Variable, lead: Double, every: TrendInterval, model: String? = nil, source: String? = nil
        ) throws -> TrendResult {
            try TrendQuery.trend(
                store, location: location,
                options: TrendOptions(
                    variable: variable, leadHours: lead, range: range, every: every, source: source ?? self.source,
                    model: model, units: units))
        }

        /// One finding per model, from the rows by model (the same sentence `query verify --model M` opens with).
        func modelHeadlines(_ byModel: VerifyResult) -> String {
            var models: [String] = []
            for row in byModel.rows { if let m = row.model, !models.contains(m) { models.append(m) } }
            return models.map { model in
                var one = byModel
                one.rows = byModel.rows.filter { $0.model == model }
                return finding(Query.Verify.headline(one, unit: unit(one)))
            }.joined()
        }

        func metaLine(_ variables: [Variable]) -> String {
            var parts = [
                "lat \(formatNumber(location.latitude, places: 4)), lon \(formatNumber(location.longitude, places: 4))",
                "times in \(Query.zoneLabel(location))",
                "variables \(variables.map(\.name).joined(separator: ", "))", "\(units.rawValue) units"
            ]
            if range.from != nil || range.to != nil { parts.append("valid \(Query.Runs.rangeWords(range))") }
            parts.append("made by wxdb \(WXDB.version) at \(CivilTime.isoUTC(now)) from Open-Meteo forecasts")
            return parts.joined(separator: " · ")
        }

        /// The hour to follow: --at, else the latest hour with an observation that runs forecast (so
        /// the chart ends at what happened), else the next whole hour a run forecasts, else the last
        /// forecast hour stored.
        func convergenceHour(_ scored: [(Variable, Result<VerifyResult, Error>)]) throws -> (time: Int64?, note: String)
        {
            if let at { return (at, "") }
            let lastPaired = scored.compactMap { try? $0.1.get() }.flatMap(\.rows).map(\.lastValidTime).max()
            if let lastPaired {
                return (
                    lastPaired,
                    "The charts follow the latest hour with an observation, \(Query.local(lastPaired, location)); choose another with --at."
                )
            }
            let next = (now / 3600 + 1) * 3600
            let span = try store.forecastSpan(locationID: location.id)
            if let last = span.last, last >= next {
                return (next, "Nothing is observed yet, so the charts follow the next hour; choose another with --at.")
            }
            if let last = span.last {
                return (last, "No stored run forecasts the next hour; the charts follow the last forecast hour stored.")
            }
            return (nil, "")
        }

        func convergenceFinding(_ history: ForecastHistory) -> String {
            let variable = history.variable
            let unit = units.unit(variable.quantity)
            // As `query forecast` shows values: codes with their label, directions with a compass point.
            func shown(_ value: Double) -> String {
                switch variable.quantity {
                case .code, .direction: return display(value, variable)
                default: return "\(formatNumber(value, places: 1)) \(unit)"
                }
            }
            let values = history.entries.compactMap(\.value)
            guard let first = values.first, let last = values.last else {
                return "No run held a value of \(variable.name) for this hour."
            }
            var sentence =
                "\(history.entries.count) run(s) forecast this hour, from \(shown(first)) in the first to \(shown(last)) in the last"
            if let observed = history.observed, let source = history.observedSource {
                sentence += "; \(source) observed \(shown(observed))."
            } else {
                sentence += "; nothing is observed for it yet."
            }
            return sentence
        }

        func precipitationSection(_ scored: [(Variable, Result<VerifyResult, Error>)], models: [String]) throws
            -> String
        {
            var body = "<section id=\"precipitation\"><h2>Precipitation</h2>\n"
            let precipitation = Variables.hourlyVariable(named: "precipitation")!
            let pooled: VerifyResult?
            if let scoredAlready = scored.first(where: { $0.0 == precipitation }) {
                pooled = try? scoredAlready.1.get()
            } else {
                pooled = try? verify(precipitation, .lead)
            }
            func scores(_ result: VerifyResult, id: String) {
                var total = Contingency()
                for row in result.rows { if let t = row.contingency { total.merge(t) } }
                body += finding(Query.Verify.headline(result, unit: unit(result)))
                body += contingencyTable(total, threshold: result.options.thresholdMillimetres)
                if let chart = ChartViews.categorical(result, id: id) { body += figure(chart) }
            }
            if let pooled, models.count <= 1 {
                scores(pooled, id: "precip-scores")
            } else if pooled != nil {
                // Per model, in the location's order, as the charts above draw them.
                for (index, model) in models.enumerated() {
                    body += "<h3>\(SVG.escape(model))</h3>\n"
                    do {
                        scores(try verify(precipitation, .lead, model: model), id: "precip-scores-\(index)")
                    } catch let error as QueryError {
                        body += missing(error)
                    }
                }
            } else {
                body += missingText(
                    "No precipitation forecasts pair with an observation, so there is no 2x2 table or POD/FAR/CSI/ETS.")
            }
            let probability = Variables.hourlyVariable(named: "precipitation_probability")!
            body += "<h3>precipitation_probability</h3>\n"
            do {
                let reliability = try ReliabilityQuery.reliability(
                    store, location: location, variable: probability, source: source, range: range)
                if let verified = try? verify(probability, .lead) {
                    body += finding(Query.Verify.headline(verified, unit: "%"))
                }
                body += figure(ChartViews.reliability(reliability, id: "reliability"))
            } catch let error as QueryError {
                body += missing(error)
            }
            return body + "</section>\n"
        }

        func contingencyTable(_ t: Contingency, threshold: Double) -> String {
            let event = "≥ \(formatNumber(threshold, places: 3)) mm"
            func cell(_ key: String, _ value: Int) -> String {
                "<td class=\"num\" data-key=\"\(key)\" data-value=\"\(value)\">\(value)</td>"
            }
            return """
                <table class="contingency"><caption>All leads together: forecast against observed precipitation \(SVG.escape(event)) (per lead in the score table)</caption>
                <tr><th></th><th scope="col">observed yes</th><th scope="col">observed no</th></tr>
                <tr><th scope="row">forecast yes</th>\(cell("a", t.a))\(cell("b", t.b))</tr>
                <tr><th scope="row">forecast no</th>\(cell("c", t.c))\(cell("d", t.d))</tr>
                </table>

                """
        }

        /// The `query verify` rows: the JSON columns, each cell's JSON value in `data-value` (full
        /// precision, as `--format json` prints it) and the table text for people.
        func scoreTable(_ report: Report, variable: Variable) -> String {
            let shown = report.columns(for: .json)
            var out = "<div class=\"wide\"><table class=\"scores\" data-variable=\"\(SVG.escape(variable.name))\"><tr>"
            for (_, column) in shown {
                let (label, unit) = Self.header(column)
                out +=
                    "<th scope=\"col\">\(SVG.escape(label))\(unit.map { " <span class=\"unit\">(\(SVG.escape($0)))</span>" } ?? "")</th>"
            }
            out += "</tr>\n"
            for row in report.rows {
                let json = report.jsonRow(row)
                out += "<tr>"
                for (index, column) in shown {
                    let key = column.jsonName ?? column.name
                    let value = json[key]?.serialized() ?? "null"
                    // Times as the minute they name: the seconds and "T" only widen a table read by people.
                    var text = report.text(row[index], column.kind)
                    if case .time = column.kind, text.count == 20 {
                        text = String(text.prefix(16)).replacing("T", with: " ") + "Z"
                    }
                    out +=
                        "<td data-key=\"\(SVG.escape(key))\" data-value=\"\(SVG.escape(value))\">\(SVG.escape(text))</td>"
                }
                out += "</tr>\n"
            }
            return out + "</table></div>\n"
        }

        /// A score-table header for people: the table's label, else the JSON key in words with its
        /// unit suffix as the unit (`lead_from_h` → "lead from (h)").
        static func header(_ column: Report.Column) -> (String, String?) {
            if let label = column.label { return (label, column.unit) }
            var name = column.jsonName ?? column.name
            var unit = column.unit
            for suffix in ["_h", "_mm"] where name.hasSuffix(suffix) {
                name.removeLast(suffix.count)
                unit = unit ?? String(suffix.dropFirst())
            }
            let short = ["persistence": "persist", "first_valid_time": "first valid", "last_valid_time": "last valid"]
            if let words = short[name] { return (words, unit) }
            return (
                name.replacing("persistence_", with: "persist ").replacing("_", with: " "), unit
            )
        }

        func finding(_ sentence: String) -> String {
            sentence.isEmpty ? "" : "<p class=\"finding\">\(SVG.escape(sentence))</p>\n"
        }

        /// A chart with its description shown below it (what a point is, and the n behind it).
        func figure(_ chart: LineChart) -> String {
            "<figure>\(chart.svg())<figcaption>\(SVG.escape(chart.description))</figcaption></figure>\n"
        }

        func figure(_ chart: CoverageCalendar) -> String {
            "<figure>\(chart.svg())<figcaption>\(SVG.escape(chart.description))</figcaption></figure>\n"
        }

        func missing(_ error: Error) -> String { missingText("No chart: " + userMessage(for: error) + ".") }

        func missingText(_ sentence: String) -> String {
            "<p class=\"missing\">\(SVG.escape(sentence))</p>\n"
        }

        static func document(title: String, body: String) -> String {
            """
            <!DOCTYPE html>
            <html lang="en">
            <head>
            <meta charset="utf-8">
            <meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="color-scheme" content="light dark">
            <title>\(SVG.escape(title))</title>
            <style>
            :root{color-scheme:light dark}
            body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0 auto;padding:1rem 1.5rem;max-width:60rem;color:#1a1a1a;background:#fff}
            h1{font-size:1.5rem;margin:.5rem 0}h2{font-size:1.25rem;border-bottom:1px solid #bbb;padding-bottom:.2rem;margin-top:2rem}
            h3{font-size:1rem;margin:1.2rem 0 .3rem}
            .meta{color:#555;font-size:.9rem}.finding{font-weight:500}.missing{font-style:italic;color:#8a3b00}.note{color:#555}
            figure{margin:.5rem 0 1rem}figcaption{font-size:.8rem;color:#555;max-width:45rem}
            table{border-collapse:collapse;font-size:.8rem;margin:.5rem 0}th,td{border:1px solid #ccc;padding:.15rem .4rem;text-align:right;white-space:nowrap}
            th{background:#f2f2f2}caption{text-align:left;font-size:.85rem;padding:.2rem 0;width:max-content;max-width:40rem}.wide{overflow-x:auto}
            .unit{font-weight:normal;color:#555}
            #scores .wide{width:min(96vw,84rem);position:relative;left:50%;transform:translateX(-50%)}
            table.scores th{white-space:normal;vertical-align:bottom}table.scores th,table.scores td{padding:.15rem .3rem}
            \(SVG.css)
            @media (prefers-color-scheme:dark){body{color:#e6e6e6;background:#161616}th{background:#262626}th,td{border-color:#444}.meta,.note,.unit,figcaption{color:#aaa}.missing{color:#f0a060}}
            @media print{body{max-width:none;color:#000;background:#fff}section{break-inside:auto}figure,table{break-inside:avoid}.wide{overflow:visible}}
            </style>
            </head>
            <body>
            \(body)</body>
            </html>

            """
        }
    }
}
