import WxCore
import WxQueries
import WxStore

/// `wxdb query forecast`: every stored run's forecast for one hour, and what was observed.
extension Query.Forecast {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var at: String?
        var variable = VariableOption()
        var source: String?
        var model: String?
        var units = UnitsOption()
        var output = FormatOption()

        static var table: [Opt<Options>] {
            LocationOption.options(\.location)
                + [
                    AtOption.option(
                        \.at, help: "The hour (ISO 8601; without offset: the location's zone).", required: true)
                ]
                + VariableOption.options(\.variable) + [
                    SourceOption.option(\.source), ModelOption.option(\.model)
                ]
                + UnitsOption.options(\.units)
                + FormatOption.options(
                    \.output, [.table, .csv, .json, .svg],
                    help: "table, csv, json or svg (the chart of every run's forecast against its lead time).")
                + DatabaseOption.options(\.database)
        }

        func validate() throws {
            try variable.validate()
            if let at, at != "now", CivilTime.parse(at) == nil { throw TimeInput.notATime(at, option: "at") }
        }
    }

    static var command: Command {
        Command(
            name: "forecast",
            abstract: "Every stored run's forecast for one hour, with its lead time, and the observed value.",
            discussion:
                "Shows how the forecast converged: runs by issue time, each with the change from the previous run of the same model.",
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let variable = options.variable.variable
        let units = options.units.units
        let store = try options.database.open(context, access: .read)
        let location = try options.location.resolve(store)
        let at = try TimeInput.resolve(options.at!, timezone: location.timezone, now: context.nowUnix, option: "at")
        let history = try ForecastHistoryQuery.history(
            store, location: location, validTime: at, variable: variable, source: options.source, model: options.model,
            units: units)
        if history.prunedRuns > 0 {
            context.note(
                "Note: \(history.prunedRuns) run(s) that forecast this hour were pruned (their hourly rows are gone); not listed."
            )
        }
        if history.laterRuns > 0 {
            context.note("\(history.laterRuns) run(s) issued after this hour hold it as a past hour; not listed.")
        }
        if options.output.format == .svg {
            context.out(
                ChartViews.convergence(history, location: location, id: "forecast").svg(standalone: true) + "\n")
            return
        }
        try report(history, at: at, variable: variable, units: units, location).render(options.output.format, context)
    }

    static func report(
        _ history: ForecastHistory, at: Int64, variable: Variable, units: UnitSystem, _ location: Location
    ) -> Report {
        let unit = units.unit(variable.quantity)
        let showUnit = variable.quantity != .code
        var report = Report(columns: [
            .init("location", .text, only: [.csv]),
            .init("model", .text),
            .init("issued_at", .time, label: "issued (\(Query.zoneLabel(location)))"),
            .init("valid_time", .time, only: [.csv]),
            .init("lead_hours", .number(places: 1), label: "lead h"),
            .init("variable", .text, only: [.csv]),
            .init("unit", .text, only: [.csv]),
            .init("value", .value(variable), label: variable.name, unit: showUnit ? unit : nil),
            .init(
                "change", .signed(places: 1), unit: showUnit ? unit : nil,
                tableText: variable.quantity != .code
                    ? nil
                    : { cell in
                        if case .number(let change?) = cell, change != 0 { return "changed" }
                        return ""
                    }),
            .init("observed", .number(places: 1), only: [.csv]),
            .init("observed_source", .text, only: [.csv])
        ])
        // Grouped by model (in the order models first appear), each model's runs oldest first: a
        // model's run-to-run changes read down one block instead of interleaving with another's.
        var order: [String] = []
        for e in history.entries where !order.contains(e.model) { order.append(e.model) }
        let grouped = order.flatMap { model in history.entries.filter { $0.model == model } }
        report.rows = grouped.map { e in
            [
                .text(location.name), .text(e.model), .time(e.issuedAt), .time(at), .number(e.leadHours),
                .text(variable.name),
                .text(unit), .number(e.value), .number(e.change), .number(history.observed),
                .text(history.observedSource)
            ]
        }
        let observed: JSON =
            history.observed.map {
                .object([("source", .string(history.observedSource)), ("value", Report.number($0))])
            } ?? .null
        report.meta = [
            ("location", .string(location.name)), ("variable", .string(variable.name)), ("unit", .string(unit)),
            ("valid_time", .string(CivilTime.isoUTC(at)))
        ]
        report.rowsKey = "runs"
        report.trailer = [("observed", observed), ("pruned_runs", .number(Double(history.prunedRuns)))]
        report.timezone = location.timezone
        report.title =
            "\(location.name), \(variable.name) for \(Query.local(at, location)) (\(Query.zoneLabel(location)))\n"
        if let value = history.observed, let source = history.observedSource {
            report.footer =
                "Observed (\(source)): \(display(value, variable))\(showUnit && variable.quantity != .direction ? " \(unit)" : "")\n"
        } else {
            report.footer = "Observed: none stored for this hour.\n"
        }
        return report
    }
}
