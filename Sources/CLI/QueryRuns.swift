import WxCore
import WxQueries
import WxStore

/// `wxdb query runs`: a location's stored forecast runs.
extension Query.Runs {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var range = TimeRangeOptions()
        var model: String?
        var output = FormatOption()

        static var table: [Opt<Options>] {
            LocationOption.options(\.location) + TimeRangeOptions.options(\.range, on: "runs issued")
                + [ModelOption.option(\.model)] + FormatOption.options(\.output)
                + DatabaseOption.options(\.database)
        }

        func validate() throws { try range.validate() }
    }

    static var command: Command {
        Command(
            name: "runs",
            abstract: "List a location's stored forecast runs.",
            discussion:
                "--from/--to filter on the run's issue time. 'repeats' counts later fetches that returned the same forecast.",
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let store = try options.database.open(context, access: .read)
        let location = try options.location.resolve(store)
        let range = try options.range.resolve(timezone: location.timezone, now: context.nowUnix)
        let runs = try RunsQuery.runs(store, location: location, issued: range, model: options.model)
        guard !runs.isEmpty else {
            throw CLIError(
                "no runs of \(location.name) were issued \(rangeWords(range)); drop or widen --from/--to (see all with 'wxdb query runs --location \(location.name)')"
            )
        }
        let fromFetch = runs.filter { $0.issuedAtSource == "first_fetch" }.count
        if fromFetch > 0 {
            context.note(
                "Note: \(fromFetch) run(s) are measured from their first fetch (issued from: first fetch): their initialisation time is not known, so their leads are too short by however long the run was out before; 'wxdb backfill' corrects runs the Single Runs archive has, and 'wxdb import --issued-at' gives it to imported files"
            )
        }
        let pruned = runs.filter { $0.prunedAt != nil }.count
        if pruned > 0 {
            context.note(
                "Note: \(pruned) run(s) were pruned: their hourly and daily rows are gone (their scores are kept for 'query verify')"
            )
        }
        try report(runs, location).render(options.output.format, context)
    }

    static func report(_ runs: [RunSummary], _ location: Location) -> Report {
        var report = Report(columns: [
            .init("location", .text, only: [.csv]),
            .init("run_id", .integer, only: [.csv, .json]),
            .init("model", .text),
            .init("issued_at", .time, label: "issued (\(Query.zoneLabel(location)))"),
            .init("issued_at_source", .text, label: "issued from") { cell in
                switch cell {
                case .text("model_run"): return "model metadata"
                case .text("single_run"): return "single-run archive"
                default: return "first fetch"
                }
            },
            .init("measured_from_fetch", .integer, only: [.csv, .json]),
            .init("first_fetch", .time, label: "first fetch"),
            .init("last_fetch", .time, label: "last fetch"),
            .init("repeats", .integer),
            .init("first_valid_time", .time, label: "first hour"),
            .init("last_valid_time", .time, label: "last hour"),
            .init("hour_count", .integer, only: [.csv, .json]),
            // Hours the run had when stored; a pruned run's rows are gone.
            .init("hours", .integer, only: [.table]),
            .init("pruned_at", .time, only: [.csv, .json])
        ])
        // A run's hours (and "pruned") matter more than its fetch times when the table is cut to fit.
        if let hours = report.columns.firstIndex(where: { $0.name == "hours" }) { report.columns[hours].keep = true }
        report.rows = runs.map { r in
            [
                .text(location.name), .integer(r.id), .text(r.model), .time(r.issuedAt), .text(r.issuedAtSource),
                .int(r.issuedAtSource == "first_fetch" ? 1 : 0), .time(r.firstFetch),
                .time(r.lastFetch), .int(r.repeats), .time(r.firstValidTime), .time(r.lastValidTime), .int(r.hourCount),
                .text(r.prunedAt == nil ? String(r.hourCount) : "\(r.hourCount), pruned"), .time(r.prunedAt)
            ]
        }
        report.meta = [("location", .string(location.name))]
        report.rowsKey = "runs"
        report.timezone = location.timezone
        return report
    }

    static func rangeWords(_ range: TimeRange) -> String {
        switch (range.from, range.to) {
        case (let f?, let t?): return "from \(CivilTime.isoUTC(f)) to \(CivilTime.isoUTC(t - 1))"
        case (let f?, nil): return "from \(CivilTime.isoUTC(f)) on"
        case (nil, let t?): return "up to \(CivilTime.isoUTC(t - 1))"
        default: return "at all"
        }
    }
}
