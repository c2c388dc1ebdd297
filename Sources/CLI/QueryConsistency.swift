import WxCore
import WxQueries
import WxStore

/// `wxdb query consistency`: how much successive runs change their mind (Flip-Flop Index).
extension Query.Consistency {
    enum Windows: String, CaseIterable { case all, day }

    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var variable = VariableOption()
        var leadFrom: Double?
        var leadTo: Double?
        var windows: Windows = .all
        var models: [String] = []
        var range = TimeRangeOptions()
        var units = UnitsOption()
        var output = FormatOption()

        static var table: [Opt<Options>] {
            LocationOption.options(\.location) + VariableOption.options(\.variable)
                + LeadRangeOptions.options(
                    \.leadFrom, \.leadTo,
                    help: (from: "Shortest lead of the runs that count.", to: "Longest lead of the runs that count."),
                    in: 0...384, default: (from: "24", to: "120"))
                + [
                    .choice(
                        "by", "window", "all (one window) or day (each lead day inside it).", default: .all, \.windows),
                    ModelListOption.option(\.models, help: "Only these models.", default: "every model with runs")
                ]
                + TimeRangeOptions.options(\.range, on: "forecast hours valid")
                + UnitsOption.options(\.units) + FormatOption.options(\.output) + DatabaseOption.options(\.database)
        }

        func validate() throws {
            try variable.validate()
            try range.validate()
            if (leadFrom ?? 24) > (leadTo ?? 120) {
                throw UsageError("--lead-from must not be past --lead-to")
            }
        }
    }

    static var command: Command {
        Command(
            name: "consistency",
            abstract: "How much successive runs change their mind about the same hour (Flip-Flop Index).",
            discussion: """
                For each valid hour, the forecasts of successive runs whose lead lies in [--lead-from, --lead-to], in issue
                order, give the Flip-Flop Index of Griffiths et al. (2019): (sum of |x(i+1) - x(i)| - (max - min)) / (N - 2),
                for N >= 3 runs (wind direction the short way round). 0 means the runs only moved one way; 2 means runs that
                alternate by ±1. The mean, median and 90th percentile over valid hours are shown, with n the number of hours.
                --from/--to filter on valid time.
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let store = try options.database.open(context)
        let location = try options.location.resolve(store)
        let result = try Consistency.consistency(
            store, location: location, variable: options.variable.variable, leadFromHours: options.leadFrom ?? 24,
            leadToHours: options.leadTo ?? 120, byDay: options.windows == .day,
            models: options.models.isEmpty ? nil : options.models,
            range: try options.range.resolve(timezone: location.timezone, now: context.nowUnix),
            units: options.units.units)
        // Nothing to show is exit 1, as for every query (README, docs/CLI.md).
        guard result.rows.contains(where: { $0.mean != nil }) else {
            throw CLIError(
                "nothing to show for \(location.name): no valid hour has forecasts of \(options.variable.variable.name) from three or more runs with leads \(formatNumber(options.leadFrom ?? 24, places: 1))–\(formatNumber(options.leadTo ?? 120, places: 1)) h; widen --lead-from/--lead-to or --from/--to, or ingest more runs"
            )
        }
        try report(result, location, byDay: options.windows == .day).render(options.output.format, context)
    }

    static func report(_ result: ConsistencyResult, _ location: Location, byDay: Bool) -> Report {
        let unit = result.unit
        var columns: [Report.Column] = [.init("model", .text)]
        if byDay {
            columns += [
                .init("lead", .text, only: [.table]), .init("lead_from_h", .integer, only: [.csv, .json]),
                .init("lead_to_h", .integer, only: [.csv, .json])
            ]
        }
        columns += [
            .init("n", .integer, label: "hours"),
            .init("flip_flop_index", .number(places: 2), label: "flip-flop mean", unit: unit),
            .init("median", .number(places: 2), unit: unit), .init("p90", .number(places: 2), unit: unit)
        ]
        var report = Report(columns: columns)
        report.rows = result.rows.map { row in
            var cells: [Report.Cell] = [.text(row.model)]
            if byDay {
                cells += [
                    .text(Query.Verify.leadLabel(row.leadFromHours, row.leadToHours)), .int(row.leadFromHours),
                    .int(row.leadToHours)
                ]
            }
            return cells + [.int(row.n), .number(row.mean), .number(row.median), .number(row.p90)]
        }
        report.meta = [
            ("location", .string(location.name)), ("variable", .string(result.variable.name)), ("unit", .string(unit)),
            ("headline", .string(result.headline))
        ]
        report.title = result.headline + "\n"
        return report
    }
}
