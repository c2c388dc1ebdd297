import WxCore
import WxQueries
import WxStore

/// `wxdb query trend`: observed against the forecast issued a given lead ahead.
extension Query.Trend {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var variable = VariableOption()
        var lead: Double?
        var tolerance: Double?
        var range = TimeRangeOptions()
        var every: TrendInterval?
        var by: TrendInterval?
        var source: String?
        var model: String?
        var confidence: Double?
        var units = UnitsOption()
        var output = FormatOption()

        static var table: [Opt<Options>] {
            let lead: [Opt<Options>] = [
                .double("lead", "hours", "The lead time to follow, in hours.", in: 0...384, required: true, \.lead),
                .double(
                    "tolerance", "hours", "How far a run's lead may be from --lead.", in: 0...48, default: "3",
                    \.tolerance)
            ]
            let grouping: [Opt<Options>] = [
                .choice(
                    "by", "interval", "hour or day (a local day's mean; precipitation its total).", default: .hour, \.by
                ),
                .choice("every", "interval", "Deprecated spelling of --by.", \.every),
                SourceOption.option(\.source), ModelOption.option(\.model),
                ConfidenceOption.option(
                    \.confidence,
                    help: "Level of the bias's and (--by day) each day's interval, 50 to 99.9; 0 for none.")
            ]
            let output: [Opt<Options>] = FormatOption.options(
                \.output, [.table, .csv, .json, .svg], help: "table, csv, json or svg (the chart over time).")
            return LocationOption.options(\.location) + VariableOption.options(\.variable) + lead
                + TimeRangeOptions.options(\.range, on: "hours valid") + grouping + UnitsOption.options(\.units)
                + output + DatabaseOption.options(\.database)
        }

        func validate() throws {
            try variable.validate()
            try range.validate()
            if by != nil, every != nil { throw UsageError("--every is the old spelling of --by; give only --by") }
            if let confidence, confidence != 0, confidence < 50 {
                throw UsageError(
                    "--confidence is a level in percent from 50 to 99.9 (like --confidence 90), or 0 for no intervals")
            }
        }

        var interval: TrendInterval { by ?? every ?? .hour }
    }

    static var command: Command {
        Command(
            name: "trend",
            abstract: "Observed against the forecast issued a given lead ahead, hour by hour or day by day.",
            discussion: """
                For each valid hour with an observation, takes the run of one model whose lead is closest to
                --lead among runs within --tolerance hours of it (the earlier run on a tie), and shows its error
                and the running (cumulative) bias. --from/--to filter on valid time. --by day averages per local
                day (precipitation: sums it, a daily total) with an interval of the day's error (95% unless
                --confidence says otherwise; 0 for none); the running bias and the headline stay means over hours,
                and the headline says whether the bias is within the noise, at the same level. Without --model, every model with runs is followed, each in its own series (one headline
                line per model).
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let store = try options.database.open(context, access: .read)
        let location = try options.location.resolve(store)
        let query = TrendOptions(
            variable: options.variable.variable, leadHours: options.lead!, toleranceHours: options.tolerance ?? 3,
            range: try options.range.resolve(timezone: location.timezone, now: context.nowUnix),
            every: options.interval, source: options.source, model: options.model, units: options.units.units,
            confidence: (options.confidence ?? 95) == 0 ? nil : (options.confidence ?? 95) / 100)
        if options.every != nil { context.note("Note: --every is deprecated; it is spelled --by now") }
        var results: [TrendResult] = []
        do {
            if options.model != nil {
                results = [try TrendQuery.trend(store, location: location, options: query)]
            } else {
                // Every model with runs; one without pairs at this lead is left out, not an error,
                // unless none has any.
                var firstError: Error?
                var source = options.source
                for model in try TrendQuery.models(store, location: location) {
                    var one = query
                    one.model = model
                    // Every series against the first one's observations, so they share one truth.
                    one.source = source
                    do {
                        let result = try TrendQuery.trend(store, location: location, options: one)
                        results.append(result)
                        source = result.source
                    } catch {
                        if firstError == nil { firstError = error }
                    }
                }
                if results.isEmpty {
                    throw firstError ?? QueryError.noRuns(location: location.name, model: nil)
                }
            }
        } catch {
            try Query.explainNoPairs(
                error, store: store, location: location, model: options.model, now: context.nowUnix)
        }
        try Query.noteSkippedSources(
            store, location, chosen: results[0].source, requested: options.source, context)
        // A table's title says it already (see `report`); a second copy on stderr only repeats it.
        if options.output.format != .table, let truth = SourceNames.modelDerivedNote(results[0].source) {
            context.note("Note: " + truth)
        }
        if options.output.format == .svg {
            context.out(ChartViews.trend(results, location: location, id: "trend")!.svg(standalone: true) + "\n")
            return
        }
        var report = report(results, location)
        if context.stdoutIsTerminal, results.count == 1 {
            let result = results[0]
            let lines = Sparkline.render([result.points.map(\.forecast), result.points.map(\.observed)], width: 60)
            report.footer = "forecast \(lines[0])\nobserved \(lines[1])\n"
        }
        try report.render(options.output.format, context)
    }

    static func report(_ results: [TrendResult], _ location: Location) -> Report {
        let result = results[0]
        let unit = result.units.unit(result.variable.quantity)
        let daily = result.every == .day
        let zone = Query.zoneLabel(location)
        let perDay: Set<OutputFormat> = daily ? [.table, .csv, .json] : []
        let perHour: Set<OutputFormat> = daily ? [] : [.table, .csv, .json]
        let several = results.count > 1
        let percent = percentText(result.confidence ?? 0.95)
        var report = Report(columns: [
            .init("location", .text, only: [.csv]),
            .init("model", .text, only: several ? [.table, .csv, .json] : [.csv]),
            .init("variable", .text, only: [.csv]),
            .init("unit", .text, only: [.csv]),
            .init("date", .text, label: "date (\(zone))", only: perDay),
            .init("hours", .integer, only: perDay),
            .init("valid_time", .time, label: "valid (\(zone))", only: perHour),
            .init("issued_at", .time, label: "issued", only: perHour),
            .init("lead_hours", .number(places: 1), label: "lead h", only: perHour),
            .init("forecast", .number(places: 1), unit: unit),
            .init("observed", .number(places: 1), unit: unit),
            .init("error", .signed(places: 1), unit: unit),
            // Per day, the interval of the day's mean error (from its hours).
            .init("error_ci_low", .signed(places: 1), only: daily ? [.csv, .json] : []),
            .init("error_ci_high", .signed(places: 1), only: daily ? [.csv, .json] : []),
            .init("error_ci", .signed(places: 1), label: "\(percent)% CI", unit: unit, only: daily ? [.table] : []),
            .init("running_bias", .signed(places: 2), label: "running bias", unit: unit)
        ])
        report.rows = results.flatMap { result in
            result.points.map { p in
                [
                    .text(location.name), .text(result.model), .text(result.variable.name), .text(unit),
                    .text(p.date ?? ""), .int(p.hours), .time(p.time), .time(p.issuedAt),
                    .number(p.leadHours), .number(p.forecast), .number(p.observed), .number(p.error),
                    .number(p.errorInterval?.low), .number(p.errorInterval?.high),
                    .text(p.errorInterval.map { "\(signed($0.low, places: 1)) to \(signed($0.high, places: 1))" }),
                    .number(p.runningBias)
                ]
            }
        }
        // One model: its scores at the top, as before. Several: `model` null, the scores over every
        // series' hours, and each model's own in `models`.
        var overall = ContinuousScores()
        for r in results { overall.merge(r.overall) }
        report.meta = [
            ("location", .string(location.name)), ("variable", .string(result.variable.name)), ("unit", .string(unit)),
            ("source", .string(result.source)),
            ("source_is_model_output", .bool(SourceNames.isModelDerived(result.source))),
            ("model", several ? .null : .string(result.model)),
            ("lead_h", Report.number(result.leadHours)),
            ("tolerance_h", Report.number(result.toleranceHours)), ("every", .string(result.every.rawValue)),
            ("n", .number(Double(overall.n))), ("bias", Report.number(overall.bias)),
            ("mae", Report.number(overall.mae)),
            // The interval is one model's; several models' pooled bias has none.
            ("bias_ci_low", Report.number(several ? nil : result.biasInterval?.low)),
            ("bias_ci_high", Report.number(several ? nil : result.biasInterval?.high))
        ]
        if several {
            report.meta.append(
                (
                    "models",
                    .array(
                        results.map { r in
                            .object([
                                ("model", .string(r.model)), ("n", .number(Double(r.overall.n))),
                                ("bias", Report.number(r.overall.bias)), ("mae", Report.number(r.overall.mae)),
                                // The interval each model's headline line states.
                                ("bias_ci_low", Report.number(r.biasInterval?.low)),
                                ("bias_ci_high", Report.number(r.biasInterval?.high))
                            ])
                        })
                ))
        }
        report.timezone = location.timezone
        report.title =
            results.map { headline($0, unit: unit) }.joined(separator: "\n") + "\n"
            + (SourceNames.modelDerivedNote(result.source).map { "Note: " + $0 + "\n" } ?? "")
        return report
    }

    static func headline(_ result: TrendResult, unit: String) -> String {
        let s = result.overall
        guard let bias = s.bias, let mae = s.mae, !result.points.isEmpty else { return "" }
        // Precipitation's scores are of hourly amounts, also beside `--by day`'s daily totals: say so.
        let perHour = result.variable.quantity == .precipitation ? "/h" : ""
        let unitText = (unit == "%" ? "%" : " \(unit)") + perHour
        let direction = Query.biasPhrase(bias, unitText: unitText, variable: result.variable)
        let lead = formatNumber(result.leadHours, places: 1)
        var noise = ""
        if let interval = result.biasInterval, let confidence = result.confidence {
            let level = "\(percentText(confidence))% interval"
            let range = "\(signed(interval.low, places: 2)) to \(signed(interval.high, places: 2))\(unitText)"
            noise =
                interval.low <= 0 && interval.high >= 0
                ? " The bias is within the noise (\(level) \(range), days as the units)."
                : " The bias is beyond the noise (\(level) \(range), days as the units)."
        }
        // Hourly and daily trends of the same hours name the same period: first to last valid hour.
        let over = Query.span(result.lastValidTime - result.firstValidTime)
        return
            "\(result.model) forecasts issued \(lead) h ahead \(direction) (MAE \(formatNumber(mae, places: 1))\(unitText)) against \(result.source) over \(over) (n=\(s.n) hours)."
            + noise
    }

    /// "95" or "97.5": a level as the option spells it.
    static func percentText(_ confidence: Double) -> String {
        let percent = confidence * 100
        return formatNumber(percent, places: percent == percent.rounded() ? 0 : 1)
    }
}
