import WxCore
import WxQueries
import WxStore

/// `wxdb query verify` on an ensemble model (issue 31): the members' scores by lead bucket, from
/// ``EnsembleVerify``, in `query ensemble --show scores`' columns.
extension Query.Verify.Ensembles {
    /// The location's ensemble models that have stored runs.
    static func models(_ store: any Store, _ location: Location) -> [String] {
        guard let ensembles = store as? any EnsembleStore else { return [] }
        return location.models.filter {
            EnsembleModels.isEnsemble($0)
                && !((try? ensembles.ensembleRuns(locationID: location.id, model: $0)) ?? []).isEmpty
        }
    }

    /// One ensemble model's scores report, cut to the lead buckets `options` asks for (the `all` row
    /// then sums only those); nil when no member met an observation.
    static func report(
        _ model: String, _ options: Query.Verify.Options, store: any Store, location: Location, range: TimeRange
    ) throws -> Report? {
        guard let ensembles = store as? any EnsembleStore else {
            throw CLIError("this database engine does not keep ensemble members yet; use a SQLite database")
        }
        let variable = options.variable.variable
        guard variable.verification != .categorical, variable.verification != .circular else {
            throw CLIError(
                "\(variable.name) cannot be scored for the ensemble \(model): CRPS needs a quantity on a line (not a category or a direction); choose another --variable"
            )
        }
        let source =
            try options.source ?? ObservationSources.ranked(store, locationID: location.id).first ?? "era5"
        var result = try EnsembleVerify.run(
            store: ensembles, location: location, model: model, variable: variable, source: source,
            from: range.from ?? .min, to: range.to ?? .max)
        // A bucket past the model's horizon holds only missing members: no case, no row.
        result.byLead = result.byLead.filter { $0.scores.n > 0 && options.wants($0.bucket.from, $0.bucket.to) }
        var total = EnsembleScores()
        for row in result.byLead { total.merge(row.scores) }
        result.total = total
        guard total.n > 0 else { return nil }
        var report = Query.Ensemble.scores(result, location)
        report.meta.append(("ensemble", .bool(true)))
        return report
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
