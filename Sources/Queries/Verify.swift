import WxCore
import WxStore

/// How `wxdb query verify` groups its pairs.
public enum VerifyGrouping: String, Sendable, CaseIterable {
    /// The lead buckets of `LeadBuckets` (0–6, 6–12, 12–24 h, then days).
    case lead
    /// Whole lead days: 0–24 h, 24–48 h, ... up to 384 h.
    case day
    /// Lead buckets within each model.
    case model
}

/// What to verify.
public struct VerifyOptions: Sendable {
    public var variable: Variable
    /// Observation source; nil picks the best stored one (see `ObservationSources.ranked`).
    public var source: String?
    /// Filter on valid time.
    public var range: TimeRange
    public var grouping: VerifyGrouping
    /// Only this model's runs; nil takes every model.
    public var model: String?
    /// Event threshold in mm for precipitation scores (POD, FAR, CSI, ETS, Brier), in stored units.
    public var thresholdMillimetres: Double
    public var units: UnitSystem

    public init(
        variable: Variable, source: String? = nil, range: TimeRange = TimeRange(), grouping: VerifyGrouping = .lead,
        model: String? = nil, thresholdMillimetres: Double = 0.1, units: UnitSystem = .metric
    ) {
        self.variable = variable
        self.source = source
        self.range = range
        self.grouping = grouping
        self.model = model
        self.thresholdMillimetres = thresholdMillimetres
        self.units = units
    }
}

/// Scores for one group of forecast/observation pairs.
public struct VerifyRow: Sendable, Equatable {
    /// The model, when grouping by model.
    public var model: String?
    /// The lead range `[leadFromHours, leadToHours)`.
    public var leadFromHours: Int
    public var leadToHours: Int
    /// The scores kept as partial sums, which `wxdb prune` stores per day (see `SummarySums`).
    public var sums = SummarySums()
    /// Continuous scores in the display unit. For a probability the forecast is the probability in
    /// % and the observation 100 % when the other variable reached the threshold, else 0 %.
    public var scores: ContinuousScores {
        get { sums.continuous }
        set { sums.continuous = newValue }
    }
    /// The forecast's scores over the pairs that have a persistence reference.
    public var forecastWithReference = ContinuousScores()
    /// Persistence's scores over the same pairs: the observation at the run's issue hour carried forward.
    public var persistence = ContinuousScores()
    /// For a variable with an event (precipitation): the 2×2 table at the threshold.
    public var contingency: Contingency? {
        get { sums.contingency }
        set { sums.contingency = newValue }
    }
    /// For a probability: the Brier score against the other variable's observation ≥ threshold.
    public var brier: BrierScore? {
        get { sums.brier }
        set { sums.brier = newValue }
    }
    /// First and last valid time among the pairs.
    public var firstValidTime = Int64.max
    public var lastValidTime = Int64.min

    /// MSE skill score against persistence, over `persistence.n` pairs; nil without reference pairs.
    public var persistenceSkill: Double? {
        guard let forecast = forecastWithReference.mse, let reference = persistence.mse else { return nil }
        return SkillScore.mse(forecastMSE: forecast, referenceMSE: reference)
    }
}

/// The result of `wxdb query verify`.
public struct VerifyResult: Sendable, Equatable {
    public var location: String
    public var variable: Variable
    public var source: String
    public var options: VerifyOptions.Summary
    /// Non-empty groups, by model (when grouped by model) then lead.
    public var rows: [VerifyRow]
    /// Days of pruned runs that `--from/--to` cut, which could not be counted (their pairs survive
    /// only as whole-day sums).
    public var prunedDaysLeftOut = 0

    /// The row a one-line summary should speak about: the one with most pairs among those at
    /// 48 h lead or more, else the one with most pairs overall (the shorter lead on a tie).
    public var headlineRow: VerifyRow? {
        let far = rows.filter { $0.leadFromHours >= 48 }
        let pool = far.isEmpty ? rows : far
        return pool.max { a, b in a.scores.n != b.scores.n ? a.scores.n < b.scores.n : a.leadFromHours > b.leadFromHours
        }
    }
}

extension VerifyOptions {
    /// The options a result was made with (for output).
    public struct Summary: Sendable, Equatable {
        public var grouping: VerifyGrouping
        public var thresholdMillimetres: Double
        public var units: UnitSystem
        public var model: String?
    }
}

/// `wxdb query verify`: forecasts against observations, grouped by lead.
public enum VerifyQuery {
    /// Pairs every run's forecast (0 ≤ lead < 384 h) with the observation at exactly its valid time,
    /// via the `forecast_observation_pairs` view, and scores them per group. Persistence, the
    /// reference of the skill score, is `Store.persistenceReferences`: the latest observation at or
    /// before the run's `issued_at` and less than an hour before it, carried forward. Each run counts once per
    /// valid hour. Throws a `QueryError` naming what is missing when there is nothing to score.
    public static func verify(_ store: Store, location: Location, options: VerifyOptions) throws -> VerifyResult {
        let variable = options.variable
        if variable.verification == .categorical {
            throw QueryError.unsupportedVariable(
                variable.name,
                reason:
                    "it is a category (a WMO code), not a quantity; see how runs compared with 'wxdb query forecast --var \(variable.name)'"
            )
        }
        _ = try QuerySupport.column(variable)
        // A probability of precipitation is checked against observed precipitation.
        let observedVariable = variable.observedVariable

        try QuerySupport.requireRuns(store, location: location, model: options.model)
        let source = try ObservationSources.resolve(
            store, location: location, requested: options.source,
            pairing: .init(variable: variable, range: options.range, model: options.model))

        let references = try store.persistenceReferences(
            locationID: location.id, source: source, observed: observedVariable,
            model: options.model)
        let units = options.units
        let threshold = options.thresholdMillimetres
        var groups: [String: VerifyRow] = [:]
        let filter = PairFilter(
            locationID: location.id, source: source, from: options.range.from, to: options.range.to,
            model: options.model)
        try store.forEachVerificationPair(forecast: variable, observed: observedVariable, filter) { row in
            let issuedAt = row.int64(1)
            let validTime = row.int64(2)
            let lead = Double(validTime - issuedAt) / 3600
            guard let (from, to) = bucket(lead, options.grouping) else { return }
            let model = options.grouping == .model ? row.string(0) : nil
            let key = (model ?? "") + "\u{1}" + String(from)
            var group = groups[key] ?? VerifyRow(model: model, leadFromHours: from, leadToHours: to)
            group.firstValidTime = min(group.firstValidTime, validTime)
            group.lastValidTime = max(group.lastValidTime, validTime)
            add(
                &group, forecast: row.double(3), observed: row.double(4), reference: references[issuedAt],
                variable: variable, units: units, threshold: threshold)
            groups[key] = group
        }
        let prunedDaysLeftOut = try addSummaries(
            store, location: location, source: source, options: options, into: &groups)

        guard !groups.isEmpty else {
            var detail = try QuerySupport.coverage(store, location: location, source: source)
            if !options.range.phrase.isEmpty { detail = "valid \(options.range.phrase); " + detail }
            if let model = options.model { detail = "model \(model); " + detail }
            throw QueryError.noPairs(location: location.name, variable: variable.name, source: source, detail: detail)
        }
        let rows = groups.values.sorted { a, b in
            (a.model ?? "", a.leadFromHours) < (b.model ?? "", b.leadFromHours)
        }
        return VerifyResult(
            location: location.name, variable: variable, source: source,
            options: .init(
                grouping: options.grouping, thresholdMillimetres: threshold, units: units, model: options.model),
            rows: rows, prunedDaysLeftOut: prunedDaysLeftOut)
    }

    /// Adds one forecast/observation pair (stored units) to a group's scores.
    static func add(
        _ group: inout VerifyRow, forecast rawForecast: Double, observed rawObserved: Double,
        reference rawReference: Double?,
        variable: Variable, units: UnitSystem, threshold: Double
    ) {
        let quantity = variable.quantity
        if variable.isProbability {
            let occurred = rawObserved >= threshold
            group.sums.continuous.add(forecast: rawForecast, observed: occurred ? 100 : 0)
            group.sums.brier = group.sums.brier ?? BrierScore()
            group.sums.brier?.add(probabilityPercent: rawForecast, occurred: occurred)
            return
        }
        let observed = units.convert(rawObserved, quantity)
        // Direction errors go the short way round: 350° against 10° is 20° off, not 340°.
        let forecast = observed + QuerySupport.difference(units.convert(rawForecast, quantity), observed, variable)
        group.sums.continuous.add(forecast: forecast, observed: observed)
        if let rawReference {
            let reference =
                observed + QuerySupport.difference(units.convert(rawReference, quantity), observed, variable)
            group.forecastWithReference.add(forecast: forecast, observed: observed)
            group.persistence.add(forecast: reference, observed: observed)
        }
        if variable.hasEvent {
            group.sums.contingency = group.sums.contingency ?? Contingency()
            group.sums.contingency?.add(forecast: rawForecast, observed: rawObserved, threshold: threshold)
        }
    }

    /// Adds what `wxdb prune` folded into `verification_summaries` (valid days inside the range);
    /// returns how many summarised days the range cut and so left out.
    /// Categorical and Brier sums were kept at the default threshold only, so another threshold
    /// leaves pruned periods out of those scores (and, for precipitation_probability, entirely).
    static func addSummaries(
        _ store: Store, location: Location, source: String, options: VerifyOptions,
        into groups: inout [String: VerifyRow]
    ) throws -> Int {
        let defaultThreshold = options.thresholdMillimetres == Pruner.threshold
        if options.variable.isProbability && !defaultThreshold { return 0 }
        var partialDays = Set<String>()
        // Imperial display is an affine change of unit (x' = a·x + b), which partial sums follow exactly.
        let quantity = options.variable.quantity
        let scale = options.units.convertDifference(1, quantity)
        let offset = options.units.convert(0, quantity)
        let isProbability = options.variable.isProbability
        try store.forEachSummary(
            locationID: location.id, source: source, variable: options.variable.name, model: options.model
        ) { row in
            // A summarised day counts when it lies wholly inside --from/--to; one cut by the range
            // cannot be split, so it is left out and counted for a note. Its hours are the ones it was
            // summarised over, whatever the location's zone is now.
            guard let day = row.span ?? ZoneTime.span(ofDate: row.validDate, timezone: location.timezone) else {
                return
            }
            let inside = day.start >= (options.range.from ?? Int64.min) && day.end <= (options.range.to ?? Int64.max)
            let outside = day.end <= (options.range.from ?? Int64.min) || day.start >= (options.range.to ?? Int64.max)
            if !inside {
                if !outside { partialDays.insert(row.validDate) }
                return
            }
            guard let (from, to) = bucket(Double(row.leadFrom), options.grouping) else { return }
            let model = options.grouping == .model ? row.model : nil
            let key = (model ?? "") + "\u{1}" + String(from)
            var group = groups[key] ?? VerifyRow(model: model, leadFromHours: from, leadToHours: to)
            var stored = row.sums
            if !isProbability { stored.continuous = stored.continuous.affine(scale: scale, offset: offset) }
            if !defaultThreshold { stored.contingency = nil }
            group.sums.merge(stored)
            group.firstValidTime = min(group.firstValidTime, day.start)
            group.lastValidTime = max(group.lastValidTime, day.end - 3600)
            groups[key] = group
        }
        return partialDays.count
    }

    /// The `[from, to)` lead range a lead falls in; nil for negative leads and leads of 384 h or more.
    static func bucket(_ lead: Double, _ grouping: VerifyGrouping) -> (Int, Int)? {
        switch grouping {
        case .lead, .model:
            return LeadBuckets.bucket(forLeadHours: lead).map { ($0.from, $0.to) }
        case .day:
            guard lead >= 0, lead < 384 else { return nil }
            let day = Int((lead / 24).rounded(.down))
            return (day * 24, day * 24 + 24)
        }
    }
}
