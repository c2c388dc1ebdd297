import Foundation
import WxCore
import WxQueries
import WxStore

/// `wxdb query runs|forecast|verify|trend`: thin wrappers that parse options, call `WxQueries`
/// and print tables (local times, units in headers), CSV (UTC) or one JSON document.
enum QueryCommand {
    static var command: Command {
        Command(
            name: "query",
            abstract: "Ask what was forecast, what happened, and how good the forecasts were.",
            subcommands: [runs, forecast, verify, trend]
        )
    }

    // MARK: Shared options

    static let locationOption = OptionSpec.option("location", "name", "The saved location.")
    static let formatOption = OptionSpec.option("format", "format", "table, csv or json.", default: "table")
    static let unitsOption = OptionSpec.option("units", "system", "metric or imperial (°F, mph, inch), applied when printing.", default: "metric")
    static let varOption = OptionSpec.option("var", "variable", "Hourly variable, as Open-Meteo names it.", default: "temperature_2m")
    static let sourceOption = OptionSpec.option(
        "source", "name", "Observation source.",
        default: "the first of imported sources, era5, analysis, current that has observations at the forecast hours asked for")
    static let modelOption = OptionSpec.option("model", "model", "Only this model's runs.")
    static let fromOption = OptionSpec.option("from", "time", "Start (ISO 8601; a bare date is the location's local midnight).")
    static let toOption = OptionSpec.option("to", "time", "End, inclusive (a bare date includes that whole local day).")

    static func openLocation(_ args: ParsedArguments, _ context: Context) throws -> (Store, Location) {
        let name = try args.require("location")
        let store = try context.openStore(create: false)
        return (store, try store.requireLocation(named: name))
    }

    static func variable(_ args: ParsedArguments, default name: String? = "temperature_2m") throws -> Variable {
        guard let text = args.value("var") ?? name else { throw UsageError("missing --var") }
        guard let variable = Variables.hourlyVariable(named: text) else {
            throw UsageError("--var '\(text)' is not an hourly variable wxdb keeps; use one of: \(Variables.hourlyNames.joined(separator: ", "))")
        }
        return variable
    }

    static func units(_ args: ParsedArguments) throws -> UnitSystem {
        guard let text = args.value("units") else { return .metric }
        guard let units = UnitSystem(rawValue: text) else { throw UsageError("--units must be metric or imperial, not '\(text)'") }
        return units
    }

    /// `--from` (inclusive) and `--to` (inclusive; a bare date includes its whole local day).
    static func range(_ args: ParsedArguments, _ location: Location, _ context: Context) throws -> TimeRange {
        let (from, to) = try TimeInput.range(args, timezone: location.timezone, now: context.nowUnix)
        return TimeRange(from: from, to: to)
    }

    static func choice<T: RawRepresentable & CaseIterable>(_ args: ParsedArguments, _ name: String, _ fallback: T) throws -> T where T.RawValue == String {
        guard let text = args.value(name) else { return fallback }
        guard let value = T(rawValue: text) else {
            throw UsageError("--\(name) must be one of \(T.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'")
        }
        return value
    }

    // MARK: Formatting

    static func local(_ instant: Int64, _ location: Location) -> String { TimeInput.local(instant, timezone: location.timezone) }

    static func zoneLabel(_ location: Location) -> String {
        TimeZone(identifier: location.timezone) == nil ? "UTC" : location.timezone
    }

    /// A value for people: weather codes with their label, directions with their compass point.
    static func display(_ value: Double?, _ variable: Variable) -> String {
        guard let value else { return "" }
        switch variable.quantity {
        case .code:
            // A code outside WMO's 0...99 (hostile or broken input) prints as the number it is.
            guard let code = Int(exactly: value.rounded()), (0...99).contains(code) else { return formatNumber(value, places: 1) }
            return "\(code) \(WeatherCode.label(code))"
        case .direction: return "\(formatNumber(value, places: 0)) \(WeatherCode.compass(value))"
        default: return formatNumber(value, places: 1)
        }
    }

    static func signed(_ value: Double?, places: Int = 2) -> String {
        guard let value else { return "" }
        let text = formatNumber(value, places: places)
        return value > 0 && text != "0" ? "+" + text : text
    }

    static func hours(_ value: Double) -> String { formatNumber(value, places: 1) }

    static func json(_ value: Int) -> JSON { .number(Double(value)) }
    /// A computed number for JSON, at 15 significant digits (`NumberText.tidy`), or null.
    static func number(_ value: Double?) -> JSON { JSON.number(NumberText.tidy(value)) }
    static func json(_ value: Int64?) -> JSON { JSON.int(value) }
    static func time(_ value: Int64?) -> JSON { value.map { .string(CivilTime.isoUTC($0)) } ?? .null }

    static func span(_ seconds: Int64) -> String {
        let hours = Int((Double(seconds) / 3600).rounded()) + 1
        if hours < 48 { return "\(hours) hour\(hours == 1 ? "" : "s")" }
        return "\(Int((Double(hours) / 24).rounded())) days"
    }

    /// Says so when the default source is not the best-ranked one, because better-ranked ones had
    /// no observation at any forecast hour asked for.
    static func noteSkippedSources(_ store: Store, _ location: Location, chosen: String, requested: String?, _ context: Context) throws {
        guard requested == nil else { return }
        let ranked = try ObservationSources.ranked(store, locationID: location.id)
        guard let position = ranked.firstIndex(of: chosen), position > 0 else { return }
        context.note("Using source \(chosen): \(ranked[..<position].joined(separator: ", ")) has no observation at these forecasts' hours; choose one with --source")
    }

    // MARK: runs

    static var runs: Command {
        Command(
            name: "runs",
            abstract: "List a location's stored forecast runs.",
            discussion: "--from/--to filter on the run's issue time. 'repeats' counts later fetches that returned the same forecast.",
            options: [locationOption, fromOption, toOption, modelOption, formatOption],
            run: { args, context in try runRuns(args, context) }
        )
    }

    static func runRuns(_ args: ParsedArguments, _ context: Context) throws {
        let format = try context.format()
        let (store, location) = try openLocation(args, context)
        let range = try range(args, location, context)
        let runs = try RunsQuery.runs(store, location: location, issued: range, model: args.value("model"))
        guard !runs.isEmpty else {
            throw CLIError("no runs of \(location.name) were issued \(rangeWords(range)); drop or widen --from/--to (see all with 'wxdb query runs --location \(location.name)')")
        }
        switch format {
        case "json":
            let doc = JSON.object([
                ("location", .string(location.name)),
                ("runs", .array(runs.map { r in
                    .object([
                        ("run_id", json(r.id)), ("model", .string(r.model)), ("issued_at", time(r.issuedAt)),
                        ("issued_at_source", .string(r.issuedAtSource)), ("first_fetch", time(r.firstFetch)),
                        ("last_fetch", time(r.lastFetch)), ("repeats", json(r.repeats)),
                        ("first_valid_time", time(r.firstValidTime)), ("last_valid_time", time(r.lastValidTime)),
                        ("hour_count", json(r.hourCount)), ("pruned_at", time(r.prunedAt)),
                    ])
                })),
            ])
            context.out(doc.serialized() + "\n")
        case "csv":
            let csv = context.csvWriter()
            csv.header(["location", "run_id", "model", "issued_at", "issued_at_source", "first_fetch", "last_fetch", "repeats",
                        "first_valid_time", "last_valid_time", "hour_count", "pruned_at"])
            for r in runs {
                csv.text(location.name)
                csv.integer(r.id)
                csv.text(r.model)
                csv.isoUTC(r.issuedAt)
                csv.text(r.issuedAtSource)
                csv.isoUTC(r.firstFetch)
                csv.isoUTC(r.lastFetch)
                csv.integer(Int64(r.repeats))
                if let t = r.firstValidTime { csv.isoUTC(t) } else { csv.empty() }
                if let t = r.lastValidTime { csv.isoUTC(t) } else { csv.empty() }
                csv.integer(Int64(r.hourCount))
                if let t = r.prunedAt { csv.isoUTC(t) } else { csv.empty() }
                csv.endRow()
            }
            try csv.flush()
        default:
            let zone = zoneLabel(location)
            var table = Table(headers: ["model", "issued (\(zone))", "issued from", "first fetch", "last fetch", "repeats",
                                        "first hour", "last hour", "hours"])
            table.rightAligned = [5, 8]
            for r in runs {
                table.rows.append([
                    r.model, local(r.issuedAt, location), r.issuedAtSource == "model_run" ? "model run" : "first fetch",
                    local(r.firstFetch, location), local(r.lastFetch, location), String(r.repeats),
                    r.firstValidTime.map { local($0, location) } ?? "", r.lastValidTime.map { local($0, location) } ?? "",
                    r.prunedAt == nil ? String(r.hourCount) : "\(r.hourCount), pruned",
                ])
            }
            let pruned = runs.filter { $0.prunedAt != nil }.count
            if pruned > 0 {
                context.note("Note: \(pruned) run(s) were pruned: their hourly and daily rows are gone (their scores are kept for 'query verify')")
            }
            context.out(table.render())
        }
    }

    static func rangeWords(_ range: TimeRange) -> String {
        switch (range.from, range.to) {
        case (let f?, let t?): return "from \(CivilTime.isoUTC(f)) to \(CivilTime.isoUTC(t - 1))"
        case (let f?, nil): return "from \(CivilTime.isoUTC(f)) on"
        case (nil, let t?): return "up to \(CivilTime.isoUTC(t - 1))"
        default: return "at all"
        }
    }

    // MARK: forecast

    static var forecast: Command {
        Command(
            name: "forecast",
            abstract: "Every stored run's forecast for one hour, with its lead time, and the observed value.",
            discussion: "Shows how the forecast converged: runs by issue time, each with the change from the previous run of the same model.",
            options: [locationOption, .option("at", "time", "The hour (ISO 8601; without offset: the location's zone)."),
                      varOption, sourceOption, modelOption, unitsOption, formatOption],
            run: { args, context in try runForecast(args, context) }
        )
    }

    static func runForecast(_ args: ParsedArguments, _ context: Context) throws {
        let format = try context.format()
        let variable = try variable(args)
        let units = try units(args)
        let atText = try args.require("at")
        let (store, location) = try openLocation(args, context)
        let at = try TimeInput.resolve(atText, timezone: location.timezone, now: context.nowUnix, option: "at")
        let history = try ForecastHistoryQuery.history(
            store, location: location, validTime: at, variable: variable, source: args.value("source"),
            model: args.value("model"), units: units)
        let unit = units.unit(variable.quantity)
        if history.prunedRuns > 0 {
            context.note("Note: \(history.prunedRuns) run(s) that forecast this hour were pruned (their hourly rows are gone); not listed.")
        }
        if history.laterRuns > 0 {
            context.note("\(history.laterRuns) run(s) issued after this hour hold it as a past hour; not listed.")
        }
        switch format {
        case "json":
            let observed: JSON = history.observed.map {
                .object([("source", .string(history.observedSource)), ("value", number($0))])
            } ?? .null
            let doc = JSON.object([
                ("location", .string(location.name)), ("variable", .string(variable.name)), ("unit", .string(unit)),
                ("valid_time", time(at)),
                ("runs", .array(history.entries.map { e in
                    .object([("model", .string(e.model)), ("issued_at", time(e.issuedAt)), ("lead_hours", number(e.leadHours)),
                             ("value", number(e.value)), ("change", number(e.change))])
                })),
                ("observed", observed), ("pruned_runs", json(history.prunedRuns)),
            ])
            context.out(doc.serialized() + "\n")
        case "csv":
            let csv = context.csvWriter()
            csv.header(["location", "model", "issued_at", "valid_time", "lead_hours", "variable", "unit", "value", "change", "observed",
                        "observed_source"])
            for e in history.entries {
                csv.text(location.name)
                csv.text(e.model)
                csv.isoUTC(e.issuedAt)
                csv.isoUTC(at)
                csv.number(tidy: e.leadHours)
                csv.text(variable.name)
                csv.text(unit)
                csv.number(tidy: e.value)
                csv.number(tidy: e.change)
                csv.number(tidy: history.observed)
                if let source = history.observedSource { csv.text(source) } else { csv.empty() }
                csv.endRow()
            }
            try csv.flush()
        default:
            let showUnit = variable.quantity != .code
            var table = Table(headers: ["model", "issued (\(zoneLabel(location)))", "lead h",
                                        showUnit ? "\(variable.name) \(unit)" : variable.name,
                                        showUnit ? "change \(unit)" : "change"])
            table.rightAligned = [2, 4]
            if variable.quantity != .code && variable.quantity != .direction { table.rightAligned.insert(3) }
            for e in history.entries {
                let change: String
                if variable.quantity == .code {
                    change = e.change.map { $0 == 0 ? "" : "changed" } ?? ""
                } else {
                    change = signed(e.change, places: 1)
                }
                table.rows.append([e.model, local(e.issuedAt, location), hours(e.leadHours), display(e.value, variable), change])
            }
            var text = "\(location.name), \(variable.name) for \(local(at, location)) (\(zoneLabel(location)))\n"
            text += table.render()
            if let observed = history.observed, let source = history.observedSource {
                text += "Observed (\(source)): \(display(observed, variable))\(showUnit && variable.quantity != .direction ? " \(unit)" : "")\n"
            } else {
                text += "Observed: none stored for this hour.\n"
            }
            context.out(text)
        }
    }

    // MARK: verify

    static var verify: Command {
        Command(
            name: "verify",
            abstract: "Score forecasts against observations: n, bias, MAE, RMSE per lead-time bucket (and more).",
            discussion: """
                Each run's forecast is paired with the observation at exactly its valid time (lead >= 0; the
                forecast_observation_pairs view), for leads from 0 up to 384 h. --from/--to filter on valid time.
                Persistence skill is the MSE skill score against the latest observation at or before the run's
                issue time (less than an hour before it) carried forward, over the pairs that have one
                (persistence n). error_sd divides by n - 1, as MET's ESTDEV. precipitation adds POD, FAR, CSI and ETS at --threshold;
                precipitation_probability adds the Brier score against observed precipitation >= --threshold.
                """,
            options: [locationOption, varOption, sourceOption, fromOption, toOption,
                      .option("by", "grouping", "lead (buckets 0-6, 6-12, 12-24 h, then days), day (lead days), or model (lead buckets per model).", default: "lead"),
                      modelOption,
                      .option("threshold", "mm", "Precipitation event threshold in mm, for precipitation and precipitation_probability.", default: "0.1"),
                      unitsOption, formatOption],
            run: { args, context in try runVerify(args, context) }
        )
    }

    static func runVerify(_ args: ParsedArguments, _ context: Context) throws {
        let format = try context.format()
        let variable = try variable(args)
        let units = try units(args)
        let grouping: VerifyGrouping = try choice(args, "by", .lead)
        let threshold = try args.double("threshold", in: 0...10_000) ?? 0.1
        let (store, location) = try openLocation(args, context)
        let options = VerifyOptions(
            variable: variable, source: args.value("source"), range: try range(args, location, context), grouping: grouping,
            model: args.value("model"), thresholdMillimetres: threshold, units: units)
        let result = try VerifyQuery.verify(store, location: location, options: options)
        try noteSkippedSources(store, location, chosen: result.source, requested: options.source, context)
        let notes = result.prunedDaysLeftOut > 0
            ? ["\(result.prunedDaysLeftOut) day(s) of pruned runs are only partly inside --from/--to and were left out; give whole local dates to include them"]
            : []
        for note in notes { context.note("Note: " + note) }
        let isProbability = variable.name == "precipitation_probability"
        let unit = isProbability ? "%" : units.unit(variable.quantity)

        switch format {
        case "json":
            let doc = JSON.object([
                ("location", .string(location.name)), ("variable", .string(variable.name)), ("unit", .string(unit)),
                ("source", .string(result.source)),
                ("rows", .array(result.rows.map { .object(verifyFields(row: $0, result: result)) })),
                ("notes", .array(notes.map { .string($0) })),
            ])
            context.out(doc.serialized() + "\n")
        case "csv":
            let csv = context.csvWriter()
            let sample = verifyFields(row: result.rows[0], result: result)
            // Every row has the same keys except `model`, present for every row or none.
            csv.header(["location", "variable", "unit", "source"] + sample.map(\.0))
            for row in result.rows {
                csv.text(location.name)
                csv.text(variable.name)
                csv.text(unit)
                csv.text(result.source)
                for (_, value) in verifyFields(row: row, result: result) {
                    switch value {
                    case .number(let n): csv.number(n)
                    case .string(let s): csv.text(s)
                    default: csv.empty()
                    }
                }
                csv.endRow()
            }
            try csv.flush()
        default:
            var headers = ["lead", "n", "bias \(unit)", "MAE \(unit)", "RMSE \(unit)", "error SD \(unit)", "corr",
                           "mean fcst \(unit)", "mean obs \(unit)"]
            if !isProbability { headers += ["skill vs persist", "persist n"] }
            let isPrecipitation = variable.name == "precipitation"
            if isPrecipitation { headers += ["a", "b", "c", "d", "POD", "FAR", "CSI", "ETS"] }
            if isProbability { headers += ["Brier"] }
            let byModel = grouping == .model
            if byModel { headers.insert("model", at: 0) }
            var table = Table(headers: headers)
            table.rightAligned = Set((byModel ? 2 : 1)..<headers.count)
            for row in result.rows {
                let s = row.scores
                var cells = [leadLabel(row.leadFromHours, row.leadToHours), String(s.n), signed(s.bias), formatNumber(s.mae),
                             formatNumber(s.rmse), formatNumber(s.errorStdDev), formatNumber(s.correlation, places: 3),
                             formatNumber(s.meanForecast), formatNumber(s.meanObserved)]
                if !isProbability {
                    cells += [formatNumber(row.persistenceSkill, places: 3), row.persistence.n > 0 ? String(row.persistence.n) : ""]
                }
                if isPrecipitation, let t = row.contingency {
                    cells += [String(t.a), String(t.b), String(t.c), String(t.d), formatNumber(t.pod, places: 3),
                              formatNumber(t.far, places: 3), formatNumber(t.csi, places: 3), formatNumber(t.ets, places: 3)]
                } else if isPrecipitation {
                    cells += Array(repeating: "", count: 8)  // pruned sums only, at another threshold
                }
                if isProbability { cells.append(formatNumber(row.brier?.score, places: 3)) }
                if byModel { cells.insert(row.model ?? "", at: 0) }
                table.rows.append(cells)
            }
            var text = verifyHeadline(result, unit: unit) + "\n"
            var context2 = "\(location.name), \(variable.name) against \(result.source) observations"
            if let model = options.model { context2 += ", model \(model)" }
            if isPrecipitation || isProbability { context2 += ", event: precipitation >= \(formatNumber(threshold, places: 3)) mm" }
            text += context2 + "\n" + table.render()
            context.out(text)
        }
    }

    /// The keys of one JSON row (and CSV columns), unrounded.
    static func verifyFields(row: VerifyRow, result: VerifyResult) -> [(String, JSON)] {
        let s = row.scores
        var fields: [(String, JSON)] = []
        if result.options.grouping == .model { fields.append(("model", .string(row.model))) }
        fields += [
            ("lead_from_h", json(row.leadFromHours)), ("lead_to_h", json(row.leadToHours)), ("n", json(s.n)),
            ("bias", number(s.bias)), ("mae", number(s.mae)), ("rmse", number(s.rmse)),
            ("error_sd", number(s.errorStdDev)), ("correlation", number(s.correlation)),
            ("mean_forecast", number(s.meanForecast)), ("mean_observed", number(s.meanObserved)),
            ("first_valid_time", time(row.firstValidTime)), ("last_valid_time", time(row.lastValidTime)),
        ]
        if result.variable.name != "precipitation_probability" {
            fields += [("persistence_n", json(row.persistence.n)), ("persistence_rmse", number(row.persistence.rmse)),
                       ("persistence_skill", number(row.persistenceSkill))]
        }
        // Every row of a kind has the same keys: a row made only from pruned sums (kept at the default
        // threshold) has null scores at another threshold, not missing ones.
        if result.variable.hasEvent {
            let t = row.contingency
            fields += [("threshold_mm", number(result.options.thresholdMillimetres)),
                       ("a", json(t.map { Int64($0.a) })), ("b", json(t.map { Int64($0.b) })),
                       ("c", json(t.map { Int64($0.c) })), ("d", json(t.map { Int64($0.d) })),
                       ("pod", number(t?.pod)), ("far", number(t?.far)), ("csi", number(t?.csi)), ("ets", number(t?.ets))]
        }
        if result.variable.isProbability {
            let brier = row.brier
            fields += [("threshold_mm", number(result.options.thresholdMillimetres)), ("brier", number(brier?.score)),
                       ("brier_skill", number(brier?.skillScore)), ("base_rate", number(brier?.baseRate))]
        }
        return fields
    }

    /// `0–6 h`, `12–24 h`, `1–2 d`.
    static func leadLabel(_ from: Int, _ to: Int) -> String {
        to <= 24 ? "\(from)–\(to) h" : "\(from / 24)–\(to / 24) d"
    }

    /// "hours" below a day, "days" beyond.
    static func leadWords(_ from: Int, _ to: Int) -> String {
        to <= 24 ? "\(from)–\(to) hours" : (to - from == 24 && from == 0 ? "up to 1 day" : "\(from / 24)–\(to / 24) days")
    }

    /// One sentence on the row with the most pairs at 48 h lead or more (else the most pairs).
    static func verifyHeadline(_ result: VerifyResult, unit: String) -> String {
        guard let row = result.headlineRow, let bias = row.scores.bias, let mae = row.scores.mae else { return "" }
        let who = row.model.map { "\($0) forecasts" } ?? "Forecasts"
        let isProbability = result.variable.name == "precipitation_probability"
        let subject = isProbability ? "Rain chances" : who
        let unitText = unit == "%" ? "%" : " \(unit)"
        let direction = biasPhrase(bias, unitText: unitText, variable: result.variable)
        var extra = "MAE \(formatNumber(mae, places: 1))\(unitText)"
        if let t = row.contingency, let csi = t.csi { extra += ", CSI \(formatNumber(csi, places: 2))" }
        if let brier = row.brier?.score { extra = "Brier \(formatNumber(brier, places: 3))" }
        let lead = "\(leadWords(row.leadFromHours, row.leadToHours)) out"
        let over = span(row.lastValidTime - row.firstValidTime)
        return "\(subject)\(row.model != nil && isProbability ? " (\(row.model!))" : "") \(lead) \(direction) (\(extra)) over \(over) (n=\(row.scores.n))."
    }

    // MARK: trend

    static var trend: Command {
        Command(
            name: "trend",
            abstract: "Observed against the forecast issued a given lead ahead, hour by hour or day by day.",
            discussion: """
                For each valid hour with an observation, takes the run of one model whose lead is closest to
                --lead among runs within --tolerance hours of it (the earlier run on a tie), and shows its error
                and the running (cumulative) bias. --every day averages per local day; the running bias stays the
                mean over all hours so far. The model defaults to the location's first model.
                """,
            options: [locationOption, varOption, .option("lead", "hours", "The lead time to follow, in hours."),
                      .option("tolerance", "hours", "How far a run's lead may be from --lead.", default: "3"),
                      fromOption, toOption, .option("every", "interval", "hour or day.", default: "hour"),
                      sourceOption, modelOption, unitsOption, formatOption],
            run: { args, context in try runTrend(args, context) }
        )
    }

    static func runTrend(_ args: ParsedArguments, _ context: Context) throws {
        let format = try context.format()
        let variable = try variable(args)
        let units = try units(args)
        guard let lead = try args.double("lead", in: 0...384) else { throw UsageError("missing --lead (hours, e.g. --lead 24)") }
        let tolerance = try args.double("tolerance", in: 0...48) ?? 3
        let every: TrendInterval = try choice(args, "every", .hour)
        let (store, location) = try openLocation(args, context)
        let options = TrendOptions(
            variable: variable, leadHours: lead, toleranceHours: tolerance, range: try range(args, location, context),
            every: every, source: args.value("source"), model: args.value("model"), units: units)
        let result = try TrendQuery.trend(store, location: location, options: options)
        try noteSkippedSources(store, location, chosen: result.source, requested: options.source, context)
        let unit = units.unit(variable.quantity)
        let daily = every == .day

        switch format {
        case "json":
            let rows: [JSON] = result.points.map { p in
                var fields: [(String, JSON)] = daily
                    ? [("date", .string(p.date)), ("hours", json(p.hours))]
                    : [("valid_time", time(p.time)), ("issued_at", time(p.issuedAt)), ("lead_hours", number(p.leadHours))]
                fields += [("forecast", number(p.forecast)), ("observed", number(p.observed)), ("error", number(p.error)),
                           ("running_bias", number(p.runningBias))]
                return .object(fields)
            }
            let doc = JSON.object([
                ("location", .string(location.name)), ("variable", .string(variable.name)), ("unit", .string(unit)),
                ("source", .string(result.source)), ("model", .string(result.model)), ("lead_h", number(lead)), ("tolerance_h", number(tolerance)),
                ("every", .string(every.rawValue)), ("n", json(result.overall.n)), ("bias", number(result.overall.bias)),
                ("mae", number(result.overall.mae)), ("rows", .array(rows)),
            ])
            context.out(doc.serialized() + "\n")
        case "csv":
            let csv = context.csvWriter()
            csv.header(["location", "model", "variable", "unit"] + (daily ? ["date", "hours"] : ["valid_time", "issued_at", "lead_hours"])
                       + ["forecast", "observed", "error", "running_bias"])
            for p in result.points {
                csv.text(location.name)
                csv.text(result.model)
                csv.text(variable.name)
                csv.text(unit)
                if daily {
                    csv.text(p.date ?? "")
                    csv.integer(Int64(p.hours))
                } else {
                    csv.isoUTC(p.time)
                    if let issued = p.issuedAt { csv.isoUTC(issued) } else { csv.empty() }
                    csv.number(tidy: p.leadHours)
                }
                csv.number(tidy: p.forecast)
                csv.number(tidy: p.observed)
                csv.number(tidy: p.error)
                csv.number(tidy: p.runningBias)
                csv.endRow()
            }
            try csv.flush()
        default:
            let zone = zoneLabel(location)
            var headers = daily ? ["date (\(zone))", "hours"] : ["valid (\(zone))", "issued", "lead h"]
            headers += ["forecast \(unit)", "observed \(unit)", "error \(unit)", "running bias \(unit)"]
            var table = Table(headers: headers)
            table.rightAligned = Set((daily ? 1 : 2)..<headers.count)
            for p in result.points {
                var cells = daily ? [p.date ?? "", String(p.hours)]
                                  : [local(p.time, location), p.issuedAt.map { local($0, location) } ?? "", p.leadHours.map(hours) ?? ""]
                cells += [formatNumber(p.forecast, places: 1), formatNumber(p.observed, places: 1), signed(p.error, places: 1),
                          signed(p.runningBias, places: 2)]
                table.rows.append(cells)
            }
            var text = trendHeadline(result, unit: unit) + "\n"
            text += table.render()
            if context.stdoutIsTerminal {
                let forecasts = result.points.map(\.forecast)
                let observed = result.points.map(\.observed)
                let lines = Sparkline.render([forecasts, observed], width: 60)
                text += "forecast \(lines[0])\nobserved \(lines[1])\n"
            }
            context.out(text)
        }
    }

    /// "ran 1.2 °C warm", "ran 3 % too high", or "showed no bias" when it rounds to zero.
    static func biasPhrase(_ bias: Double, unitText: String, variable: Variable) -> String {
        let magnitude = formatNumber(abs(bias), places: 1)
        if magnitude == "0" { return "showed no bias" }
        if QuerySupportCLI.isTemperature(variable) { return "ran \(magnitude)\(unitText) \(bias > 0 ? "warm" : "cold")" }
        return "ran \(magnitude)\(unitText) too \(bias > 0 ? "high" : "low")"
    }

    static func trendHeadline(_ result: TrendResult, unit: String) -> String {
        let s = result.overall
        guard let bias = s.bias, let mae = s.mae, let first = result.points.first, let last = result.points.last else { return "" }
        let unitText = unit == "%" ? "%" : " \(unit)"
        let direction = biasPhrase(bias, unitText: unitText, variable: result.variable)
        let lead = formatNumber(result.leadHours, places: 1)
        return "\(result.model) forecasts issued \(lead) h ahead \(direction) (MAE \(formatNumber(mae, places: 1))\(unitText)) against \(result.source) over \(trendPeriod(result, first, last)) (n=\(s.n) hours)."
    }

    /// The period a trend covers: hours from the first to the last valid hour, or (per day) the
    /// local dates from the first to the last, both ends included.
    static func trendPeriod(_ result: TrendResult, _ first: TrendPoint, _ last: TrendPoint) -> String {
        guard result.every == .day, let a = first.date.flatMap(CivilTime.parseLabel), let b = last.date.flatMap(CivilTime.parseLabel) else {
            return span(last.time - first.time)
        }
        let days = (b - a) / 86400 + 1
        return "\(days) day\(days == 1 ? "" : "s")"
    }
}

extension CSVWriter {
    /// A computed number cell, at 15 significant digits (`NumberText.tidy`).
    func number(tidy value: Double?) { number(NumberText.tidy(value)) }
}

enum QuerySupportCLI {
    static func isTemperature(_ variable: Variable) -> Bool { variable.quantity == .temperature }
}

/// Compact sparklines (▁▂▃▄▅▆▇█) on a shared scale, so two series can be compared by eye.
enum Sparkline {
    static let blocks: [Character] = ["▁", "▂", "▃", "▄", "▅", "▆", "▇", "█"]

    /// One line per series, each at most `width` characters (longer series are averaged in chunks).
    static func render(_ series: [[Double]], width: Int) -> [String] {
        let reduced = series.map { values -> [Double] in
            guard values.count > width, width > 0 else { return values }
            return (0..<width).map { i in
                let start = i * values.count / width
                let end = max(start + 1, (i + 1) * values.count / width)
                let chunk = values[start..<end]
                return chunk.reduce(0, +) / Double(chunk.count)
            }
        }
        let all = reduced.flatMap { $0 }.filter(\.isFinite)
        guard let low = all.min(), let high = all.max() else { return series.map { _ in "" } }
        return reduced.map { values in
            String(values.map { value -> Character in
                guard value.isFinite else { return " " }
                guard high > low else { return blocks[3] }
                let position = (value - low) / (high - low) * Double(blocks.count - 1)
                guard position.isFinite else { return blocks[3] }  // a span too wide for a double
                return blocks[min(blocks.count - 1, max(0, Int(position.rounded())))]
            })
        }
    }
}
