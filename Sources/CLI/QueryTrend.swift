import WxCore
import WxQueries
import WxStore

/// `wxdb query trend`: observed against the forecast issued a given lead ahead.
enum QueryTrend {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var variable = VariableOption()
        var lead: Double?
        var tolerance: Double?
        var range = TimeRangeOptions()
        var every: TrendInterval = .hour
        var source: String?
        var model: String?
        var units = UnitsOption()
        var output = FormatOption()

        static var table: [Opt<Options>] {
            LocationOption.options(\.location) + VariableOption.options(\.variable)
                + [
                    .double("lead", "hours", "The lead time to follow, in hours.", in: 0...384, required: true, \.lead),
                    .double(
                        "tolerance", "hours", "How far a run's lead may be from --lead.", in: 0...48, default: "3",
                        \.tolerance)
                ]
                + TimeRangeOptions.options(\.range, on: "hours valid")
                + [
                    .choice("every", "interval", "hour or day.", default: .hour, \.every),
                    QueryCommand.sourceOption(\.source), QueryCommand.modelOption(\.model)
                ]
                + UnitsOption.options(\.units)
                + FormatOption.options(
                    \.output, [.table, .csv, .json, .svg], help: "table, csv, json or svg (the chart over time).")
                + DatabaseOption.options(\.database)
        }

        func validate() throws {
            try variable.validate()
            try range.validate()
        }
    }

    static var command: Command {
        Command(
            name: "trend",
            abstract: "Observed against the forecast issued a given lead ahead, hour by hour or day by day.",
            discussion: """
                For each valid hour with an observation, takes the run of one model whose lead is closest to
                --lead among runs within --tolerance hours of it (the earlier run on a tie), and shows its error
                and the running (cumulative) bias. --from/--to filter on valid time. --every day averages per local
                day; the running bias stays the mean over all hours so far. The model defaults to the location's
                first model.
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let store = try options.database.open(context, access: .read)
        let location = try options.location.resolve(store)
        let query = TrendOptions(
            variable: options.variable.variable, leadHours: options.lead!, toleranceHours: options.tolerance ?? 3,
            range: try options.range.resolve(timezone: location.timezone, now: context.nowUnix),
            every: options.every, source: options.source, model: options.model, units: options.units.units)
        let result: TrendResult
        do {
            result = try TrendQuery.trend(store, location: location, options: query)
        } catch {
            try QueryCommand.explainNoPairs(
                error, store: store, location: location, model: options.model, now: context.nowUnix)
        }
        try QueryCommand.noteSkippedSources(store, location, chosen: result.source, requested: options.source, context)
        if let truth = SourceNames.modelDerivedNote(result.source) { context.note("Note: " + truth) }
        if options.output.format == .svg {
            context.out(ChartViews.trend([result], location: location, id: "trend")!.svg(standalone: true) + "\n")
            return
        }
        var report = report(result, location)
        if context.stdoutIsTerminal {
            let lines = Sparkline.render([result.points.map(\.forecast), result.points.map(\.observed)], width: 60)
            report.footer = "forecast \(lines[0])\nobserved \(lines[1])\n"
        }
        try report.render(options.output.format, context)
    }

    static func report(_ result: TrendResult, _ location: Location) -> Report {
        let unit = result.units.unit(result.variable.quantity)
        let daily = result.every == .day
        let zone = QueryCommand.zoneLabel(location)
        let perDay: Set<OutputFormat> = daily ? [.table, .csv, .json] : []
        let perHour: Set<OutputFormat> = daily ? [] : [.table, .csv, .json]
        var report = Report(columns: [
            .init("location", .text, only: [.csv]),
            .init("model", .text, only: [.csv]),
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
            .init("running_bias", .signed(places: 2), label: "running bias", unit: unit)
        ])
        report.rows = result.points.map { p in
            [
                .text(location.name), .text(result.model), .text(result.variable.name), .text(unit),
                .text(p.date ?? ""), .int(p.hours), .time(p.time), .time(p.issuedAt),
                .number(p.leadHours), .number(p.forecast), .number(p.observed), .number(p.error), .number(p.runningBias)
            ]
        }
        report.meta = [
            ("location", .string(location.name)), ("variable", .string(result.variable.name)), ("unit", .string(unit)),
            ("source", .string(result.source)),
            ("source_is_model_output", .bool(SourceNames.isModelDerived(result.source))),
            ("model", .string(result.model)),
            ("lead_h", Report.number(result.leadHours)),
            ("tolerance_h", Report.number(result.toleranceHours)), ("every", .string(result.every.rawValue)),
            ("n", .number(Double(result.overall.n))), ("bias", Report.number(result.overall.bias)),
            ("mae", Report.number(result.overall.mae))
        ]
        report.timezone = location.timezone
        report.title =
            headline(result, unit: unit) + "\n"
            + (SourceNames.modelDerivedNote(result.source).map { "Note: " + $0 + "\n" } ?? "")
        return report
    }

    static func headline(_ result: TrendResult, unit: String) -> String {
        let s = result.overall
        guard let bias = s.bias, let mae = s.mae, let first = result.points.first, let last = result.points.last else {
            return ""
        }
        let unitText = unit == "%" ? "%" : " \(unit)"
        let direction = QueryCommand.biasPhrase(bias, unitText: unitText, variable: result.variable)
        let lead = formatNumber(result.leadHours, places: 1)
        return
            "\(result.model) forecasts issued \(lead) h ahead \(direction) (MAE \(formatNumber(mae, places: 1))\(unitText)) against \(result.source) over \(period(result, first, last)) (n=\(s.n) hours)."
    }

    /// The period a trend covers: hours from the first to the last valid hour, or (per day) the
    /// local dates from the first to the last, both ends included.
    static func period(_ result: TrendResult, _ first: TrendPoint, _ last: TrendPoint) -> String {
        guard result.every == .day, let a = first.date.flatMap(CivilTime.parseLabel),
            let b = last.date.flatMap(CivilTime.parseLabel)
        else {
            return QueryCommand.span(last.time - first.time)
        }
        let days = (b - a) / 86400 + 1
        return "\(days) day\(days == 1 ? "" : "s")"
    }
}
