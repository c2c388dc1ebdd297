import WxCore
import WxQueries
import WxStore

/// `wxdb query verify`: scores by lead time.
extension Query.Verify {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var variable = VariableOption()
        var source: String?
        var range = TimeRangeOptions()
        var grouping: VerifyGrouping = .lead
        var model: String?
        var lead: Double?
        var leadFrom: Double?
        var leadTo: Double?
        var threshold: Double?
        var confidence: Double?
        var units = UnitsOption()
        var output = FormatOption()

        static var table: [Opt<Options>] {
            LocationOption.options(\.location) + VariableOption.options(\.variable) + [
                SourceOption.option(\.source)
            ]
                + TimeRangeOptions.options(\.range, on: "forecast hours valid")
                + [
                    .choice(
                        "by", "grouping",
                        "lead (buckets 0-6, 6-12, 12-24 h, then days), day (lead days), or model (lead buckets per model).",
                        default: .lead, \.grouping),
                    ModelOption.option(\.model),
                    .double(
                        "lead", "hours", "Only the lead bucket that holds this lead (e.g. 72: the 3-4 d bucket).",
                        in: 0...383, \.lead)
                ]
                + LeadRangeOptions.options(
                    \.leadFrom, \.leadTo,
                    help: (
                        from: "Only lead buckets that reach this lead or beyond.",
                        to: "Only lead buckets that start at or before this lead."
                    ), in: 0...383)
                + [
                    .double(
                        "threshold", "mm",
                        "Precipitation event threshold in mm, for precipitation and precipitation_probability.",
                        in: 0...10_000, default: "0.1", \.threshold),
                    ConfidenceOption.option(
                        \.confidence,
                        help:
                            "Level of the scores' intervals (block bootstrap over valid days), 50 to 99.9; 0 for none.")
                ]
                + UnitsOption.options(\.units)
                + FormatOption.options(
                    \.output, [.table, .csv, .json, .svg],
                    help: "table, csv, json or svg (the chart of MAE and bias by lead).")
                + DatabaseOption.options(\.database)
        }

        func validate() throws {
            try variable.validate()
            try range.validate()
            if let confidence, confidence != 0, confidence < 50 {
                throw UsageError(
                    "--confidence is a level in percent from 50 to 99.9 (like --confidence 90), or 0 for no intervals")
            }
            if lead != nil, leadFrom != nil || leadTo != nil {
                throw UsageError("--lead names one lead; give it or --lead-from/--lead-to, not both")
            }
            if let leadFrom, let leadTo, leadFrom > leadTo {
                throw UsageError("--lead-from must not be after --lead-to")
            }
        }

        /// Whether a bucket `[from, to)` h is asked for.
        func wants(_ from: Int, _ to: Int) -> Bool {
            if let lead { return Double(from) <= lead && lead < Double(to) }
            return Double(to) > (leadFrom ?? 0) && Double(from) <= (leadTo ?? 384)
        }

        var leadPhrase: String? {
            if let lead { return "lead \(formatNumber(lead, places: 1)) h" }
            guard leadFrom != nil || leadTo != nil else { return nil }
            return "leads \(formatNumber(leadFrom ?? 0, places: 1))–\(formatNumber(leadTo ?? 384, places: 1)) h"
        }
    }

    static var command: Command {
        Command(
            name: "verify",
            abstract: "Score forecasts against observations: n, bias, MAE, RMSE per lead-time bucket (and more).",
            discussion: """
                Each run's forecast is paired with the observation at exactly its valid time (the
                forecast_observation_pairs view), for leads from 0 up to 384 h. --from/--to filter on valid time.
                Persistence skill is the MSE skill score against the latest observation at or before the run's
                issue time (less than an hour before it) carried forward, over the pairs that have one
                (persistence n). error_sd divides by n - 1, as MET's ESTDEV. precipitation adds POD, FAR, CSI and
                ETS at --threshold; precipitation_probability adds the Brier score against observed
                precipitation >= --threshold. Each score has a 95% interval (--confidence): a stationary block bootstrap over
                the valid days' kept sums (1000 resamples, seeded, so the same command prints the same interval; mean block
                length from the days' autocorrelation; BCa percentiles, widened by t/z for the few blocks of a short record;
                RMSE, error SD and correlation ends moved by the variance of the mean error that a record of persistent errors
                hides from them), so days of persistent weather are not counted as independent. A row
                with fewer than 10 valid days has no interval, and a note says so.
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let variable = options.variable.variable
        let store = try options.database.open(context, access: .read)
        let location = try options.location.resolve(store)
        let range = try options.range.resolve(timezone: location.timezone, now: context.nowUnix)
        // An ensemble's members are scored apart (issue 31): CRPS, the mean's errors, spread.
        if let model = options.model, EnsembleModels.isEnsemble(model) {
            try Query.Verify.Ensembles.run(model, options, store: store, location: location, range: range, context)
            return
        }
        let ensembles = options.model == nil ? Query.Verify.Ensembles.models(store, location) : []
        var query = VerifyOptions(
            variable: variable, source: options.source, range: range,
            grouping: options.grouping, model: options.model, thresholdMillimetres: options.threshold ?? 0.1,
            units: options.units.units)
        let level = options.confidence ?? 95
        // The chart draws no intervals: do not resample for it.
        if level > 0 && options.output.format != .svg { query.confidence = level / 100 }
        var result: VerifyResult
        do {
            result = try VerifyQuery.verify(store, location: location, options: query)
        } catch {
            // Only ensembles have runs or pairs here: their scores are the answer, not an error.
            if let queryError = error as? QueryError, let model = ensembles.first {
                switch queryError {
                case .noRuns, .noPairs:
                    try Query.Verify.Ensembles.run(
                        model, options, store: store, location: location, range: range, context)
                    return
                default: break
                }
            }
            try Query.explainNoPairs(
                error, store: store, location: location, model: options.model, now: context.nowUnix)
        }
        if let phrase = options.leadPhrase {
            let stored = result.rows
            result.rows = stored.filter { options.wants($0.leadFromHours, $0.leadToHours) }
            if result.rows.isEmpty {
                let leads = Set(stored.map(\.leadFromHours)).sorted()
                let reach =
                    leads.isEmpty ? "" : "; the pairs reach from \(leads[0]) h to \(stored.map(\.leadToHours).max()!) h"
                throw CLIError(
                    "no pairs at \(phrase) for \(location.name), \(variable.name)\(reach); try another --lead")
            }
        }
        try Query.noteSkippedSources(store, location, chosen: result.source, requested: options.source, context)
        let notes = notes(result)
        for note in notes { context.note("Note: " + note) }
        if options.output.format == .svg {
            context.out(ChartViews.verify(result, id: "verify").svg(standalone: true) + "\n")
            return
        }
        var report = report(result, location)
        report.trailer = [("notes", .array(notes.map { .string($0) }))]
        // The location's ensembles follow the deterministic rows: a JSON "ensembles" array (each
        // object as `query verify --model <ensemble>` prints it), a second table; CSV keeps one shape.
        var ensembleReports: [Report] = []
        for model in ensembles {
            if let scores = try Query.Verify.Ensembles.report(
                model, options, store: store, location: location, range: range)
            {
                ensembleReports.append(scores)
            }
        }
        if !ensembleReports.isEmpty {
            report.trailer.append(("ensembles", .array(ensembleReports.map { $0.json() })))
            report.footer += ensembleReports.map { "\n" + $0.title + $0.table() }.joined()
            if options.output.format == .csv {
                context.note(
                    "Note: the ensemble scores are left out of CSV; see 'wxdb query verify --model \(ensembles[0]) --format csv'"
                )
            }
        }
        try report.render(options.output.format, context)
    }

    /// What a script reading the JSON should know about the rows (also printed on stderr).
    static func notes(_ result: VerifyResult) -> [String] {
        var notes = result.pairNotes
        // Said first: scores against model output rank models by their likeness to that model.
        if let truth = SourceNames.modelDerivedNote(result.source) { notes.insert(truth, at: 0) }
        if result.prunedDaysLeftOut > 0 {
            notes.append(
                "\(result.prunedDaysLeftOut) day(s) of pruned runs are only partly inside --from/--to: their pruned runs' pairs were left out (they are kept as whole-day sums); give whole local dates to include them"
            )
        }
        return notes
    }

    static func report(_ result: VerifyResult, _ location: Location) -> Report {
        let variable = result.variable
        let isProbability = variable.isProbability
        let hasEvent = variable.hasEvent
        // Every row of a kind has the same keys: a precipitation row made only from pruned sums (kept at
        // the default threshold) has null scores at another threshold, not missing ones.
        let hasContingency = hasEvent || result.rows.contains { $0.contingency != nil }
        let byModel = result.options.grouping == .model
        let unit = isProbability ? "%" : result.options.units.unit(variable.quantity)
        typealias Column = Report.Column

        var columns: [Column] = [
            .init("location", .text, only: [.csv]), .init("variable", .text, only: [.csv]),
            .init("unit", .text, only: [.csv]), .init("source", .text, only: [.csv])
        ]
        if byModel { columns.append(.init("model", .text)) }
        columns += [
            .init("lead", .text, only: [.table]),
            .init("lead_from_h", .integer, only: [.csv, .json]), .init("lead_to_h", .integer, only: [.csv, .json]),
            .init("n", .integer),
            .init("bias", .signed(places: 2), unit: unit), .init("mae", .number(places: 2), label: "MAE", unit: unit),
            .init("rmse", .number(places: 2), label: "RMSE", unit: unit),
            .init("error_sd", .number(places: 2), label: "error SD", unit: unit),
            .init("correlation", .number(places: 3), label: "corr"),
            .init("mean_forecast", .number(places: 2), label: "mean fcst", unit: unit),
            .init("mean_observed", .number(places: 2), label: "mean obs", unit: unit),
            .init("first_valid_time", .time, only: [.csv, .json]), .init("last_valid_time", .time, only: [.csv, .json])
        ]
        if !isProbability {
            columns += [
                .init("persistence_n", .integer, only: [.csv, .json]),
                .init("persistence_rmse", .number(places: 2), only: [.csv, .json]),
                .init("persistence_skill", .number(places: 3), label: "skill vs persist"),
                .init("persistence_n", .integer, label: "persist n", only: [.table]) { cell in
                    if case .integer(let n?) = cell, n > 0 { return String(n) }
                    return ""
                }
            ]
        }
        if hasContingency {
            columns += [.init("threshold_mm", .number(places: 3), only: [.csv, .json])]
            columns += ["a", "b", "c", "d"].map {
                Column($0, .integer, only: hasEvent ? [.table, .csv, .json] : [.csv, .json])
            }
            columns += ["pod", "far", "csi", "ets"].map {
                Column(
                    $0, .number(places: 3), label: $0.uppercased(),
                    only: hasEvent ? [.table, .csv, .json] : [.csv, .json])
            }
        }
        if isProbability {
            columns += [
                .init("threshold_mm", .number(places: 3), only: [.csv, .json]),
                .init("brier", .number(places: 3), label: "Brier"),
                .init("brier_skill", .number(places: 3), only: [.csv, .json]),
                .init("base_rate", .number(places: 3), only: [.csv, .json])
            ]
        }

        var report = Report(columns: columns)
        let threshold = result.options.thresholdMillimetres
        // An arithmetic mean of angles is no mean direction (350° and 10° average to 180°): a
        // direction's means are circular ones, from the kept Σsin and Σcos (none for a group pruned
        // before they were kept). Pearson's r of angles depends on where 0° is, and the sums hold no
        // circular correlation: none is shown (bias, MAE and RMSE go the short way round).
        let circular = variable.verification == .circular
        report.rows = result.rows.map { row in
            let s = row.scores
            var cells: [Report.Cell] = [.text(location.name), .text(variable.name), .text(unit), .text(result.source)]
            if byModel { cells.append(.text(row.model)) }
            cells += [
                .text(leadLabel(row.leadFromHours, row.leadToHours)), .int(row.leadFromHours), .int(row.leadToHours),
                .int(s.n),
                .number(s.bias), .number(s.mae), .number(s.rmse), .number(s.errorStdDev),
                .number(circular ? nil : s.correlation),
                .number(circular ? row.sums.meanDirections?.forecast : s.meanForecast),
                .number(circular ? row.sums.meanDirections?.observed : s.meanObserved), .time(row.firstValidTime),
                .time(row.lastValidTime)
            ]
            if !isProbability {
                cells += [
                    .int(row.persistence.n), .number(row.persistence.persistenceRMSE), .number(row.persistenceSkill),
                    .int(row.persistence.n)
                ]
            }
            if hasContingency {
                let t = row.contingency
                cells += [
                    .number(t == nil && !hasEvent ? nil : threshold), .integer(t.map { Int64($0.a) }),
                    .integer(t.map { Int64($0.b) }),
                    .integer(t.map { Int64($0.c) }), .integer(t.map { Int64($0.d) }),
                    .number(t?.pod), .number(t?.far), .number(t?.csi), .number(t?.ets)
                ]
            }
            if isProbability {
                cells += [
                    .number(threshold), .number(row.brier?.score), .number(row.brier?.skillScore),
                    .number(row.brier?.baseRate)
                ]
            }
            return cells
        }
        report.meta = [
            ("location", .string(location.name)), ("variable", .string(variable.name)), ("unit", .string(unit)),
            ("source", .string(result.source)),
            ("source_is_model_output", .bool(SourceNames.isModelDerived(result.source)))
        ]
        var context =
            SourceNames.isModelDerived(result.source)
            ? "\(location.name), \(variable.name) against \(result.source) (MODEL OUTPUT, not measurements)"
            : "\(location.name), \(variable.name) against \(result.source) observations"
        if let model = result.options.model { context += ", model \(model)" }
        if hasEvent || isProbability {
            context += ", event: \(variable.observedVariable.name) >= \(formatNumber(threshold, places: 3)) mm"
        }
        report.title = headline(result, unit: unit) + "\n" + context + "\n"
        if result.options.confidence != nil { addIntervals(&report, result) }
        return report
    }

    /// The scores' intervals: `<score>_ci_low` and `_ci_high` after each score in CSV and JSON, and
    /// in the table `1.31 (1.18–1.45)` in place of bias, MAE, RMSE, CSI and Brier.
    static func addIntervals(_ report: inout Report, _ result: VerifyResult) {
        let inline: Set<IntervalScore> = [.bias, .mae, .rmse, .csi, .brier]
        for score in IntervalScore.allCases {
            guard let index = report.columns.firstIndex(where: { $0.name == score.rawValue }) else { continue }
            let column = report.columns[index]
            var added: [Report.Column] = [
                .init(score.rawValue + "_ci_low", column.kind, only: [.csv, .json]),
                .init(score.rawValue + "_ci_high", column.kind, only: [.csv, .json])
            ]
            if inline.contains(score) && column.formats.contains(.table) {
                report.columns[index].formats.remove(.table)
                added.append(
                    .init(
                        score.rawValue, column.kind, label: column.label ?? column.name, unit: column.unit,
                        only: [.table]))
            }
            report.columns.insert(contentsOf: added, at: index + 1)
            for (position, row) in result.rows.enumerated() {
                // A score the row does not give (a direction's correlation) has no interval either.
                let given: Bool
                if case .number(nil) = report.rows[position][index] { given = false } else { given = true }
                let interval = given ? row.intervals?.scores[score] : nil
                var cells: [Report.Cell] = [.number(interval?.low), .number(interval?.high)]
                if added.count == 3 {
                    cells.append(.text(intervalText(report.rows[position][index], interval, kind: column.kind)))
                }
                report.rows[position].insert(contentsOf: cells, at: index + 1)
            }
        }
    }

    /// `1.31 (1.18–1.45)`; `-0.25 (-0.40 to -0.10)` or `+0.04 (0.00 to +0.08)` when a printed bound carries a sign
    /// (a dash beside a sign reads as a minus); the value alone without an interval.
    static func intervalText(_ cell: Report.Cell, _ interval: ScoreInterval?, kind: Report.Kind) -> String {
        guard case .number(let value?) = cell else { return "" }
        var places = 2
        var sign = false
        switch kind {
        case .number(let p): places = p
        case .signed(let p): (places, sign) = (p, true)
        default: break
        }
        // Fixed decimals, as the table prints every other number column (1.50 above 1.49).
        func text(_ x: Double) -> String {
            sign ? signed(x, places: places, fixed: true) : fixedNumber(x, places: places)
        }
        guard let interval else { return text(value) }
        let (low, high) = (text(interval.low), text(interval.high))
        let dash = [low, high].contains { $0.hasPrefix("-") || $0.hasPrefix("+") } ? " to " : "–"
        return "\(text(value)) (\(low)\(dash)\(high))"
    }

    /// `0–6 h`, `12–24 h`, `1–2 d`.
    static func leadLabel(_ from: Int, _ to: Int) -> String { LeadBuckets.label(from: from, to: to) }

    /// "hours" below a day, "days" beyond.
    static func leadWords(_ from: Int, _ to: Int) -> String {
        to <= 24
            ? "\(from)–\(to) hours" : (to - from == 24 && from == 0 ? "up to 1 day" : "\(from / 24)–\(to / 24) days")
    }

    /// One sentence on the row with the most pairs at 48 h lead or more (else the most pairs).
    /// With `--by model` and several models, one sentence per model, each at the bucket the pooled
    /// headline row has (a model without a row there at its own), so no model speaks for the rest.
    static func headline(_ result: VerifyResult, unit: String) -> String {
        guard let chosen = result.headlineRow else { return "" }
        var models: [String] = []
        for row in result.rows { if let m = row.model, !models.contains(m) { models.append(m) } }
        guard result.options.grouping == .model, models.count > 1 else {
            return sentence(chosen, result, unit: unit)
        }
        return models.compactMap { model -> String? in
            var own = result
            own.rows = result.rows.filter { $0.model == model }
            let row =
                own.rows.first { $0.leadFromHours == chosen.leadFromHours && $0.leadToHours == chosen.leadToHours }
                ?? own.headlineRow
            let line = row.map { sentence($0, result, unit: unit) } ?? ""
            return line.isEmpty ? nil : line
        }.joined(separator: "\n")
    }

    static func sentence(_ row: VerifyRow, _ result: VerifyResult, unit: String) -> String {
        guard let bias = row.scores.bias, let mae = row.scores.mae else { return "" }
        let who = row.model.map { "\($0) forecasts" } ?? "Forecasts"
        let isProbability = result.variable.isProbability
        let subject = isProbability ? "Rain chances" : who
        let unitText = unit == "%" ? "%" : " \(unit)"
        let direction = Query.biasPhrase(bias, unitText: unitText, variable: result.variable)
        var extra = "MAE \(formatNumber(mae, places: 1))\(unitText)"
        if let t = row.contingency, let csi = t.csi { extra += ", CSI \(formatNumber(csi, places: 2))" }
        if let brier = row.brier?.score { extra = "Brier \(formatNumber(brier, places: 3))" }
        let lead = "\(leadWords(row.leadFromHours, row.leadToHours)) out"
        let over = Query.span(row.lastValidTime - row.firstValidTime)
        return
            "\(subject)\(row.model != nil && isProbability ? " (\(row.model!))" : "") \(lead) \(direction) (\(extra)) over \(over) (n=\(row.scores.n))."
    }
}
