import WxCore
import WxQueries
import WxStore

/// `wxdb query verify` on an ensemble model (issue 31): the members' scores by lead bucket, from
/// ``EnsembleVerify``, in `query ensemble --show scores`' columns.
extension Query.Verify.Ensembles {
    /// The location's ensemble models that have stored runs.
    static func models(_ store: any Store, _ location: Location) -> [String] {
        location.models.filter {
            EnsembleModels.isEnsemble($0)
                && !((try? store.ensembleRuns(locationID: location.id, model: $0)) ?? []).isEmpty
        }
    }

    /// One ensemble model's scores report, cut to the lead buckets `options` asks for (the `all` row
    /// then sums only those); nil when no member met an observation.
    static func report(
        _ model: String, _ options: Query.Verify.Options, store: any Store, location: Location, range: TimeRange
    ) throws -> Report? {
        let variable = options.variable.variable
        guard variable.verification != .categorical, variable.verification != .circular else {
            throw CLIError(
                "\(variable.name) cannot be scored for the ensemble \(model): CRPS needs a quantity on a line (not a category or a direction); choose another --variable"
            )
        }
        let source =
            try options.source ?? ObservationSources.ranked(store, locationID: location.id).first ?? "era5"
        let daily = try EnsembleVerify.daily(
            store: store, location: location, model: model, variable: variable, source: source,
            from: range.from ?? .min, to: range.to ?? .max)
        var result = daily.verification
        // A bucket past the model's horizon holds only missing members: no case, no row.
        result.byLead = result.byLead.filter { $0.scores.n > 0 && options.wants($0.bucket.from, $0.bucket.to) }
        var total = EnsembleScores()
        for row in result.byLead { total.merge(row.scores) }
        result.total = total
        guard total.n > 0 else { return nil }
        var report = Query.Ensemble.scores(result, location)
        report.meta.append(("ensemble", .bool(true)))
        let level = options.confidence ?? 95
        if level > 0 && options.output.format != .svg {
            addIntervals(&report, result, days: daily.days, confidence: level / 100, model: model)
        }
        return report
    }

    /// The scores' intervals from the kept day sums (`EnsembleDayBootstrap`): `<score>_ci_low` and
    /// `_ci_high` after each score in CSV and JSON, and `0.81 (0.74–0.90)` for CRPS and the mean's
    /// RMSE in the table, as deterministic rows show theirs; a note says how, or why there are none.
    static func addIntervals(
        _ report: inout Report, _ result: EnsembleVerification, days: [EnsembleDayGroup]?, confidence: Double,
        model: String
    ) {
        guard let days else {
            report.trailer.append(
                (
                    "notes",
                    .array([
                        .string(
                            "no intervals: the window cuts a local day (give --from/--to as dates), or the ensemble sums are still being added"
                        )
                    ])
                ))
            return
        }
        let kept = Set(result.byLead.map(\.bucket))
        var perBucket: [LeadBucket: [Int64: EnsembleScores]] = [:]
        var all: [Int64: EnsembleScores] = [:]
        for group in days where kept.contains(group.bucket) {
            perBucket[group.bucket, default: [:]][group.dayStart, default: EnsembleScores()].merge(group.sums.scores)
            all[group.dayStart, default: EnsembleScores()].merge(group.sums.scores)
        }
        func bootstrap(_ days: [Int64: EnsembleScores], _ key: String) -> EnsembleScoreIntervals? {
            EnsembleDayBootstrap.intervals(
                days: days.map { (start: $0.key, scores: $0.value) }, confidence: confidence,
                seed: DayBootstrap.seed(result.variable + "\u{1}" + model + "\u{1}" + key))
        }
        let intervals =
            result.byLead.map { bootstrap(perBucket[$0.bucket] ?? [:], "\($0.bucket.from)") } + [bootstrap(all, "all")]
        let inline: Set<EnsembleIntervalScore> = [.crps, .meanRMSE]
        for score in EnsembleIntervalScore.allCases {
            guard let index = report.columns.firstIndex(where: { $0.name == score.rawValue }) else { continue }
            let column = report.columns[index]
            var added: [Report.Column] = [
                .init(score.rawValue + "_ci_low", column.kind, only: [.csv, .json]),
                .init(score.rawValue + "_ci_high", column.kind, only: [.csv, .json])
            ]
            if inline.contains(score) && column.formats.contains(.table) {
                report.columns[index].formats.remove(.table)
                added.append(.init(score.rawValue, column.kind, label: column.label ?? column.name, only: [.table]))
            }
            report.columns.insert(contentsOf: added, at: index + 1)
            for position in report.rows.indices {
                let interval = position < intervals.count ? intervals[position]?.scores[score] : nil
                var cells: [Report.Cell] = [.number(interval?.low), .number(interval?.high)]
                if added.count == 3 {
                    cells.append(
                        .text(Query.Verify.intervalText(report.rows[position][index], interval, kind: column.kind)))
                }
                report.rows[position].insert(contentsOf: cells, at: index + 1)
            }
        }
        let percent = JSON.numberText(NumberText.tidy(confidence * 100))
        let lengths = intervals.compactMap { $0?.blockLength.rounded() }
        var notes: [JSON] = []
        if let low = lengths.min(), let high = lengths.max() {
            let length = low == high ? JSON.numberText(low) : "\(JSON.numberText(low))–\(JSON.numberText(high))"
            notes.append(
                .string(
                    "\(percent)% intervals: stationary block bootstrap over the valid days' kept ensemble sums (\(DayBootstrap.defaultResamples) resamples, seeded; mean block length \(length) day(s)), BCa percentiles, each end widened by t/z for the number of blocks"
                ))
        }
        if intervals.contains(where: { $0 == nil }) {
            notes.append(.string("no interval where fewer than \(DayBootstrap.minimumDays) valid days have cases"))
        }
        report.trailer.append(("notes", .array(notes)))
    }

    /// `query verify --model <ensemble>`, or a location whose only scored models are ensembles.
    static func run(
        _ model: String, _ options: Query.Verify.Options, store: any Store, location: Location, range: TimeRange,
        _ context: Context
    ) throws {
        guard options.output.format != .svg else {
            throw UsageError(
                "--format svg draws a deterministic model's MAE and bias; for the ensemble \(model) give table, csv or json"
            )
        }
        guard let report = try report(model, options, store: store, location: location, range: range) else {
            throw CLIError(
                "nothing to score for \(location.name): no stored run of the ensemble \(model) has a member of \(options.variable.variable.name) at an hour with an observation\(options.leadPhrase.map { " at " + $0 } ?? ""); ingest more, or choose --source"
            )
        }
        try report.render(options.output.format, context)
    }
}
