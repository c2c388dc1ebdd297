import WxCore
import WxQueries
import WxStore

/// `wxdb query compare`: two models on the hours both forecast, with a significance test.
enum QueryCompare {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var variable = VariableOption()
        var models: [String] = []
        var grouping: LeadGrouping = .lead
        var source: String?
        var range = TimeRangeOptions()
        var units = UnitsOption()
        var output = FormatOption()

        static var table: [Opt<Options>] {
            LocationOption.options(\.location) + VariableOption.options(\.variable)
                + [
                    .list(
                        "models", "model", "The two models to compare.",
                        default: "the location's first two models with runs", \.models),
                    .choice(
                        "by", "grouping", "lead (buckets 0-6, 6-12, 12-24 h, then days) or day (lead days).",
                        default: .lead, \.grouping),
                    QueryCommand.sourceOption(\.source)
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
            abstract: "Which of two models is better, on matched hours, with the Diebold-Mariano test.",
            discussion: """
                For each lead bucket, only the valid hours that both models forecast with a lead in the bucket and that were
                observed count (matched pairs); each model's MAE and RMSE are over exactly those hours. The test compares
                their absolute errors, one mean difference per valid day, with the Diebold-Mariano test and the
                Harvey-Leybourne-Newbold small-sample correction (horizon: the bucket's longest lead in days). 'better' names
                the model with the smaller error where p < 0.05, else there is no significant difference. Each bucket is
                tested on its own: with 18 buckets about one 'significant' difference is expected by chance alone.
                --from/--to filter on valid time.
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
            units: options.units.units)
        let result: CompareResult
        do {
            result = try Compare.compare(store, location: location, options: query)
        } catch {
            try QueryCommand.explainNoPairs(error, store: store, location: location, model: nil, now: context.nowUnix)
        }
        if options.output.format != .table { for note in result.notes { context.note("Note: " + note) } }
        try report(result, location).render(options.output.format, context)
    }

    static func report(_ result: CompareResult, _ location: Location) -> Report {
        let (a, b) = (result.models[0], result.models[1])
        let unit = result.unit
        var report = Report(columns: [
            .init("location", .text, only: [.csv]), .init("variable", .text, only: [.csv]),
            .init("source", .text, only: [.csv]),
            .init("model_a", .text, only: [.csv]), .init("model_b", .text, only: [.csv]),
            .init("lead", .text, only: [.table]),
            .init("lead_from_h", .integer, only: [.csv, .json]), .init("lead_to_h", .integer, only: [.csv, .json]),
            .init("n", .integer, label: "hours"),
            .init("days", .integer, only: [.csv, .json]),
            .init("mae_a", .number(places: 2), label: "MAE \(a)", unit: unit, only: [.table, .csv]),
            .init("mae_b", .number(places: 2), label: "MAE \(b)", unit: unit, only: [.table, .csv]),
            .init("rmse_a", .number(places: 2), label: "RMSE \(a)", unit: unit, only: [.table, .csv]),
            .init("rmse_b", .number(places: 2), label: "RMSE \(b)", unit: unit, only: [.table, .csv]),
            .init("mae", .number(places: 2), only: [.json]), .init("rmse", .number(places: 2), only: [.json]),
            .init("mean_difference", .signed(places: 2), label: "diff", unit: unit),
            .init("ci_low", .signed(places: 2), label: "95% CI from", unit: unit),
            .init("ci_high", .signed(places: 2), label: "to", unit: unit),
            .init("dm_statistic", .number(places: 2), label: "DM"),
            .init("p_value", .number(places: 3), label: "p") { cell in
                if case .number(let p?) = cell { return p < 0.001 ? "<0.001" : formatNumber(p, places: 3) }
                return ""
            },
            .init("horizon_days", .integer, only: [.csv, .json]),
            .init("better", .text) { cell in
                if case .text(let name?) = cell { return name }
                return "no significant difference"
            }
        ])
        report.rows = result.rows.map { row in
            let test = row.test
            return [
                .text(location.name), .text(result.variable.name), .text(result.source), .text(a), .text(b),
                .text(QueryVerify.leadLabel(row.leadFromHours, row.leadToHours)), .int(row.leadFromHours),
                .int(row.leadToHours),
                .int(row.n), .int(test.n),
                .number(row.mae.0), .number(row.mae.1), .number(row.rmse.0), .number(row.rmse.1),
                .numbers([row.mae.0, row.mae.1]), .numbers([row.rmse.0, row.rmse.1]),
                .number(test.meanDifference), .number(test.confidenceInterval?.low),
                .number(test.confidenceInterval?.high),
                .number(test.statistic), .number(test.pValue), .integer(test.horizonUsed.map(Int64.init)),
                .text(row.better)
            ]
        }
        report.meta = [
            ("location", .string(location.name)), ("variable", .string(result.variable.name)),
            ("source", .string(result.source)),
            ("source_is_model_output", .bool(SourceNames.isModelDerived(result.source))),
            ("models", .array([.string(a), .string(b)])),
            ("unit", .string(unit)), ("headline", .string(result.headline))
        ]
        report.trailer = [("notes", .array(result.notes.map { .string($0) }))]
        report.title =
            result.headline + "\n"
            + "\(location.name), \(result.variable.name) against \(result.source) observations; diff = MAE \(a) − MAE \(b) on matched hours\n"
        report.footer = result.notes.map { "Note: " + $0 + "\n" }.joined()
        return report
    }
}
