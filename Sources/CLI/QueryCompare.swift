import WxCore
import WxQueries
import WxStore

/// `wxdb query compare`: two models on the hours both forecast, with a significance test.
extension Query.Compare {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var variable = VariableOption()
        var models: [String] = []
        var grouping: LeadGrouping = .lead
        var method: CompareMethod = .hac
        var source: String?
        var range = TimeRangeOptions()
        var units = UnitsOption()
        var output = FormatOption()

        static var table: [Opt<Options>] {
            LocationOption.options(\.location) + VariableOption.options(\.variable)
                + [
                    ModelListOption.option(
                        \.models, help: "The two models to compare.",
                        default: "the location's first two models with runs"),
                    .choice(
                        "by", "grouping", "lead (buckets 0-6, 6-12, 12-24 h, then days) or day (lead days).",
                        default: .lead, \.grouping),
                    .choice(
                        "method", "method",
                        "hac (MAE difference on matched hours, HAC variance over days: honest when errors persist) or hln (BoM scores' Diebold-Mariano with the HLN correction).",
                        default: .hac, \.method),
                    SourceOption.option(\.source)
                ]
                + TimeRangeOptions.options(\.range, on: "forecast hours valid")
                + UnitsOption.options(\.units) + FormatOption.options(\.output) + DatabaseOption.options(\.database)
        }

        func validate() throws {
            try variable.validate()
            try range.validate()
            if !models.isEmpty && (models.count != 2 || models[0] == models[1]) {
                throw UsageError(
                    "--models takes exactly two different models, like --models icon_seamless,gfs_seamless")
            }
        }
    }

    static var command: Command {
        Command(
            name: "compare",
            abstract: "Which of two models is better, on matched hours, with one verdict over all lead buckets.",
            discussion: """
                For each lead bucket, only the valid hours that both models forecast with a lead in the bucket and that were
                observed count (matched pairs); each model's MAE and RMSE are over exactly those hours, and diff is MAE A
                minus MAE B. Days are the units of the test (errors persist with the weather): --method hac (default) gives
                diff a 95% interval from a HAC variance over the calendar of days (equal-weighted cosines, as many as the
                days' autocorrelation allows, the variance divided by the share of it they catch under that AR(1) fit;
                Student's t), missing days are gaps. --method hln runs BoM scores' Diebold-
                Mariano test with the Harvey-Leybourne-Newbold correction on the daily mean differences instead. 'better' is
                one verdict over all buckets: the adjusted p (p_adjusted) below 0.05, so equal models are told apart
                anywhere in at most 5% of histories (hac: a step-down max-t over the buckets' joint distribution, which
                loses less than Holm where buckets share their days' weather; hln: Holm). --from/--to filter on valid time.
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let store = try options.database.open(context)
        let location = try options.location.resolve(store)
        let query = CompareOptions(
            variable: options.variable.variable, models: options.models.isEmpty ? nil : options.models,
            grouping: options.grouping,
            range: try options.range.resolve(timezone: location.timezone, now: context.nowUnix), source: options.source,
            units: options.units.units, method: options.method)
        let result: CompareResult
        do {
            result = try Compare.compare(store, location: location, options: query)
        } catch {
            try Query.explainNoPairs(error, store: store, location: location, model: nil, now: context.nowUnix)
        }
        try Query.noteSkippedSources(store, location, chosen: result.source, requested: options.source, context)
        if options.output.format != .table { for note in result.notes { context.note("Note: " + note) } }
        try report(result, location).render(options.output.format, context)
    }

    static func report(_ result: CompareResult, _ location: Location) -> Report {
        let (a, b) = (result.models[0], result.models[1])
        let unit = result.unit
        let pText: (Report.Cell) -> String = { cell in
            if case .number(let p?) = cell { return p < 0.001 ? "<0.001" : formatNumber(p, places: 3) }
            return ""
        }
        let percent = formatNumber(
            result.confidence * 100, places: result.confidence * 100 == (result.confidence * 100).rounded() ? 0 : 1)
        var report = Report(columns: [
            .init("location", .text, only: [.csv]), .init("variable", .text, only: [.csv]),
            .init("source", .text, only: [.csv]),
            .init("model_a", .text, only: [.csv]), .init("model_b", .text, only: [.csv]),
            .init("lead", .text, only: [.table]),
            .init("lead_from_h", .integer, only: [.csv, .json]), .init("lead_to_h", .integer, only: [.csv, .json]),
            .init("n", .integer, label: "hours"),
            .init("days", .integer, only: [.csv, .json]),
            // A and B, named once in the title: two model names in four headers made the table wide.
            .init("mae_a", .number(places: 2), label: "\(result.lossName(a)) A", unit: unit, only: [.table, .csv]),
            .init("mae_b", .number(places: 2), label: "\(result.lossName(b)) B", unit: unit, only: [.table, .csv]),
            .init("rmse_a", .number(places: 2), label: "RMSE A", unit: unit, only: [.table, .csv]),
            .init("rmse_b", .number(places: 2), label: "RMSE B", unit: unit, only: [.table, .csv]),
            .init("mae", .number(places: 2), only: [.json]), .init("rmse", .number(places: 2), only: [.json]),
            .init("mean_difference", .signed(places: 2), label: "diff", unit: unit),
            .init("ci_low", .signed(places: 2), label: "\(percent)% CI from", unit: unit),
            .init("ci_high", .signed(places: 2), label: "to", unit: unit),
            .init("dm_statistic", .number(places: 2), label: result.method == .hac ? "t" : "DM"),
            .init("p_value", .number(places: 3), label: "p", tableText: pText),
            .init(
                "p_adjusted", .number(places: 3), label: result.method == .hac ? "p joint" : "p Holm", tableText: pText),
            .init("degrees_of_freedom", .integer, only: [.csv, .json]),
            .init("horizon_days", .integer, only: [.csv, .json]),
            .init("better", .text) { cell in
                if case .text(let name?) = cell { return name }
                return "neither"
            }
        ])
        // Cut to fit 100 characters, a table keeps what answers "which is better": the MAEs, the
        // difference, p, the adjusted p the verdict is read from (without it a p of 0.03 beside
        // "neither" looks wrong) and the verdict; RMSE, the interval and DM go first (all in --wide, csv, json).
        for index in report.columns.indices
        where ["lead", "n", "mae_a", "mae_b", "mean_difference", "p_value", "p_adjusted", "better"].contains(
            report.columns[index].name)
        {
            report.columns[index].keep = true
        }
        report.rows = result.rows.map { row in
            [
                .text(location.name), .text(result.variable.name), .text(result.source), .text(a), .text(b),
                .text(Query.Verify.leadLabel(row.leadFromHours, row.leadToHours)), .int(row.leadFromHours),
                .int(row.leadToHours),
                .int(row.n), .int(row.days),
                .number(row.mae.0), .number(row.mae.1), .number(row.rmse.0), .number(row.rmse.1),
                .numbers([row.mae.0, row.mae.1]), .numbers([row.rmse.0, row.rmse.1]),
                .number(row.meanDifference), .number(row.interval?.low), .number(row.interval?.high),
                .number(row.statistic), .number(row.pValue), .number(row.pAdjusted),
                .integer(row.degrees.map(Int64.init)), .integer(row.horizonDays.map(Int64.init)),
                .text(row.better)
            ]
        }
        report.meta = [
            ("location", .string(location.name)), ("variable", .string(result.variable.name)),
            ("source", .string(result.source)),
            ("source_is_model_output", .bool(SourceNames.isModelDerived(result.source))),
            ("models", .array([.string(a), .string(b)])),
            ("unit", .string(unit)), ("method", .string(result.method.rawValue)), ("headline", .string(result.headline))
        ]
        // Only beside an ensemble, so a deterministic pair's JSON is as it was.
        if !result.ensembleModels.isEmpty {
            report.meta.append(
                ("loss", .array([.string(result.lossName(a).lowercased()), .string(result.lossName(b).lowercased())])))
        }
        report.trailer = [("notes", .array(result.notes.map { .string($0) }))]
        let definition =
            result.method == .hac
            ? "diff = \(result.lossName(a)) \(a) − \(result.lossName(b)) \(b) on matched hours"
            : "diff = mean over days of the day's \(result.lossName(a)) \(a) − \(result.lossName(b)) \(b) (HLN)"
        // As verify's title says it: a reanalysis or a model's own hours are not observations.
        let truth = SourceNames.isModelDerived(result.source) ? "(MODEL OUTPUT, not measurements)" : "observations"
        report.title =
            result.headline + "\n"
            + "\(location.name), \(result.variable.name) against \(result.source) \(truth); A = \(a), B = \(b); \(definition)\n"
        report.footer = result.notes.map { "Note: " + $0 + "\n" }.joined()
        return report
    }
}
