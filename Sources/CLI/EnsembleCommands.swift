import WxCore
import WxFetcher
import WxQueries
import WxStore

/// `wxdb ingest`'s ensemble half: the locations' ensemble models from the Ensemble API (issue 31).
extension IngestCommand.Ensembles {
    /// Fetches and stores every ensemble model of `locations`, grouped by their ensemble model lists;
    /// the failures come back for ingest's summary, one line of notes goes to stderr.
    static func run(
        _ locations: [Location], forecastDays: Int, store: any Store, network: NetworkOptions, _ context: Context
    ) async -> (stored: Int, repeated: Int, failed: [(location: String, reason: String)]) {
        var groups: [[String]: [Location]] = [:]
        var order: [[String]] = []
        for location in locations {
            let models = location.models.filter(EnsembleModels.isEnsemble)
            guard !models.isEmpty else { continue }
            if groups[models] == nil { order.append(models) }
            groups[models, default: []].append(location)
        }
        guard !order.isEmpty else { return (0, 0, []) }
        var total = EnsembleIngestSummary()
        for models in order {
            let summary = await EnsembleIngest.run(
                store: store, client: network.httpClient(context), endpoints: network.endpoints(context),
                locations: groups[models] ?? [], models: models, forecastDays: min(forecastDays, 35),
                now: context.nowUnix)
            total.stored += summary.stored
            total.repeated += summary.repeated
            total.weight += summary.weight
            total.failures += summary.failures
        }
        context.note(
            "ingest: ensembles \(total.stored) stored, \(total.repeated) repeated, \(total.failures.count) failed"
                + String(printf: " (%.1f weighted calls)", total.weight))
        return (total.stored, total.repeated, total.failures.map { ("ensembles", $0) })
    }
}

/// `wxdb query ensemble`: an ensemble model's probabilistic scores by lead, its rank histogram and
/// reliability table, from the ensemble sums kept at write time.
extension Query.Ensemble {
    enum Show: String, CaseIterable { case scores, ranks, reliability }

    struct Options: CommandOptions {
        var database = DatabaseOption()
        var location = LocationOption()
        var variable = VariableOption()
        var source: String?
        var model: String?
        var show: Show = .scores
        var threshold: Double?
        var output = FormatOption()

        static var table: [Opt<Options>] {
            LocationOption.options(\.location) + VariableOption.options(\.variable) + [
                SourceOption.option(\.source),
                ModelOption.option(
                    \.model, help: "The ensemble model.", default: "the location's first ensemble model"),
                .choice(
                    "show", "what",
                    "scores (CRPS, the mean's errors and spread by lead), ranks (the rank histogram) or reliability (member fractions against observed frequency).",
                    default: .scores, \.show),
                .double(
                    "threshold", "value",
                    "Event threshold for the Brier score and reliability (value >= threshold, in stored units).",
                    in: -10_000...10_000, default: "0.1 mm for precipitation, else none", \.threshold)
            ] + FormatOption.options(\.output) + DatabaseOption.options(\.database)
        }

        func validate() throws { try variable.validate() }
    }

    static var command: Command {
        Command(
            name: "ensemble",
            abstract: "How good an ensemble model's members were: CRPS, spread-skill, rank histogram, reliability.",
            discussion: """
                Scores every stored member of the model's runs against the observations. CRPS is BoM scores'
                crps_for_ensemble: ecdf (the members' empirical CDF) and fair (unbiased for a finite ensemble);
                a deterministic model's CRPS is its MAE. spread is the root of the mean member variance;
                spread_skill is sqrt((M+1)/M) x spread / RMSE of the ensemble mean, 1 for a reliable ensemble,
                below 1 under-dispersive. The rank histogram splits ties equally (Hamill 2001) and leaves out a
                case with a missing member; chi_square and p_value say how far it is from flat.
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let store = try options.database.open(context, access: .read)
        let location = try options.location.resolve(store)
        let ensembleModels = location.models.filter(EnsembleModels.isEnsemble)
        guard let model = options.model ?? ensembleModels.first else {
            throw CLIError(
                "\(location.name) has no ensemble model; add one with 'wxdb locations set \(location.name) --models \(location.models.joined(separator: ",")),ecmwf_ifs025_ensemble'"
            )
        }
        guard EnsembleModels.isEnsemble(model) else {
            throw UsageError(
                "--model \(model) is not an ensemble model (ensembles: \(EnsembleModels.names.joined(separator: ", ")))"
            )
        }
        let variable = options.variable.variable
        let source =
            try options.source ?? ObservationSources.ranked(store, locationID: location.id).first ?? "era5"
        let threshold = options.threshold ?? (variable.name == "precipitation" ? 0.1 : nil)
        let result = try EnsembleVerify.run(
            store: store, location: location, model: model, variable: variable, source: source,
            thresholds: threshold.map { [$0] } ?? [])
        guard result.total.n > 0 else {
            throw CLIError(
                "nothing to show for \(location.name): no stored run of \(model) has a member of \(variable.name) at an hour with an observation from \(source) (\(result.runs) runs read); ingest more, or choose --source"
            )
        }
        let report: Report
        switch options.show {
        case .scores: report = scores(result, location)
        case .ranks: report = ranks(result, location)
        case .reliability:
            guard let events = result.events.first else {
                throw UsageError("--show reliability needs an event: give --threshold (e.g. --threshold 1)")
            }
            report = reliability(events, result, location)
        }
        try report.render(options.output.format, context)
    }

    static func meta(_ result: EnsembleVerification, _ location: Location) -> [(String, JSON)] {
        [
            ("location", .string(location.name)), ("model", .string(result.model)),
            ("variable", .string(result.variable)), ("source", .string(result.source)),
            ("runs", JSON.int(Int64(result.runs)))
        ]
    }

    static func scores(_ result: EnsembleVerification, _ location: Location) -> Report {
        var report = Report(columns: [
            .init("lead", .text, only: [.table]), .init("lead_from_h", .integer, only: [.csv, .json]),
            .init("lead_to_h", .integer, only: [.csv, .json]), .init("n", .integer),
            .init("members", .number(places: 1)), .init("crps", .number(places: 3)),
            .init("crps_fair", .number(places: 3)), .init("mean_bias", .number(places: 2)),
            .init("mean_mae", .number(places: 2)), .init("mean_rmse", .number(places: 2)),
            .init("spread", .number(places: 2)), .init("spread_skill", .number(places: 2))
        ])
        let rows = result.byLead.map { ($0.bucket.from, $0.bucket.to, $0.scores) } + [(0, 384, result.total)]
        report.rows = rows.enumerated().map { index, row in
            let (from, to, s) = row
            let label = index == rows.count - 1 ? "all" : Query.Verify.leadLabel(from, to)
            return [
                .text(label), .int(from), .int(to), .int(s.n), .number(s.meanMembers), .number(s.crps),
                .number(s.fairCRPS), .number(s.meanBias), .number(s.meanMAE), .number(s.meanRMSE), .number(s.spread),
                .number(s.spreadSkillRatio)
            ]
        }
        report.meta = meta(result, location)
        report.title =
            "\(result.model) at \(location.name), \(result.variable) against \(result.source): \(result.runs) runs\n"
        return report
    }

    static func ranks(_ result: EnsembleVerification, _ location: Location) -> Report {
        var report = Report(columns: [.init("rank", .integer), .init("cases", .number(places: 2))])
        report.rows = result.total.rankCounts.enumerated().map { [.int($0.offset + 1), .number($0.element)] }
        var meta = meta(result, location)
        meta.append(("left_out", JSON.int(Int64(result.total.rankLeftOut))))
        var title = "Rank histogram of \(result.model) at \(location.name), \(result.variable)"
        if let flat = result.total.rankFlatness {
            meta += [("chi_square", JSON.number(flat.chiSquare)), ("p_value", JSON.number(flat.pValue))]
            title += String(
                printf: ": chi-square %.1f on %d degrees of freedom, p = %.3g", flat.chiSquare, flat.degrees,
                flat.pValue)
            title += flat.pValue < 0.01 ? " (not flat at 1%)" : " (flat at 1%)"
        }
        if result.total.rankLeftOut > 0 {
            title += "; \(result.total.rankLeftOut) cases with a missing member left out"
        }
        report.meta = meta
        report.title = title + "\n"
        return report
    }

    static func reliability(_ events: EnsembleEventScores, _ result: EnsembleVerification, _ location: Location)
        -> Report
    {
        var report = Report(columns: [
            .init("bin", .text), .init("cases", .integer), .init("mean_forecast", .number(places: 3)),
            .init("observed_frequency", .number(places: 3))
        ])
        report.rows = events.reliability.map { row in
            [
                .text(String(printf: "%.1f-%.1f", Double(row.bin) / 10, Double(row.bin + 1) / 10)), .int(row.cases),
                .number(row.meanForecast), .number(row.observedFrequency)
            ]
        }
        var meta = meta(result, location)
        meta += [("threshold", JSON.number(events.threshold)), ("brier_fair", JSON.number(events.fairBrier))]
        report.meta = meta
        report.title =
            "Reliability of \(result.model) at \(location.name), \(result.variable) >= \(formatNumber(events.threshold, places: 2))"
            + String(printf: ": fair Brier score %.4f over %d cases\n", events.fairBrier ?? .nan, events.n)
        return report
    }
}
