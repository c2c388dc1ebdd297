import WxCore
import WxSQLite
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

    public init(variable: Variable, source: String? = nil, range: TimeRange = TimeRange(), grouping: VerifyGrouping = .lead,
                model: String? = nil, thresholdMillimetres: Double = 0.1, units: UnitSystem = .metric) {
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
    /// Continuous scores in the display unit. For `precipitation_probability` the forecast is the
    /// probability in % and the observation 100 % when precipitation reached the threshold, else 0 %.
    public var scores = ContinuousScores()
    /// The forecast's scores over the pairs that have a persistence reference.
    public var forecastWithReference = ContinuousScores()
    /// Persistence's scores over the same pairs: the observation at the run's issue hour carried forward.
    public var persistence = ContinuousScores()
    /// For `precipitation`: the 2×2 table at the threshold.
    public var contingency: Contingency?
    /// For `precipitation_probability`: the Brier score against observed precipitation ≥ threshold.
    public var brier: BrierScore?
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

    /// The row a one-line summary should speak about: the one with most pairs among those at
    /// 48 h lead or more, else the one with most pairs overall (the shorter lead on a tie).
    public var headlineRow: VerifyRow? {
        let far = rows.filter { $0.leadFromHours >= 48 }
        let pool = far.isEmpty ? rows : far
        return pool.max { a, b in a.scores.n != b.scores.n ? a.scores.n < b.scores.n : a.leadFromHours > b.leadFromHours }
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
    /// Pairs every run's forecast (lead ≥ 0) with the observation at exactly its valid time, via
    /// the `forecast_observation_pairs` view, and scores them per group. Each run counts once per
    /// valid hour. Throws a `QueryError` naming what is missing when there is nothing to score.
    public static func verify(_ store: Store, location: Location, options: VerifyOptions) throws -> VerifyResult {
        let variable = options.variable
        if variable.quantity == .code {
            throw QueryError.unsupportedVariable(
                variable.name, reason: "it is a category (a WMO code), not a quantity; see how runs compared with 'wxdb query forecast --var \(variable.name)'")
        }
        let forecastColumn = try QuerySupport.column(variable)
        let isProbability = variable.name == "precipitation_probability"
        let isPrecipitation = variable.name == "precipitation"
        // A probability of precipitation is checked against observed precipitation.
        let observedColumn = isProbability ? "precipitation" : forecastColumn

        try QuerySupport.requireRuns(store, location: location, model: options.model)
        let source = try ObservationSources.resolve(store, location: location, requested: options.source)

        let sql = """
            SELECT p.model, p.issued_at, p.valid_time, p.forecast_\(forecastColumn), p.observed_\(observedColumn), ref.\(observedColumn)
            FROM forecast_observation_pairs p
            LEFT JOIN observations ref
                   ON ref.location_id = p.location_id AND ref.source = p.source AND ref.time = (p.issued_at / 3600) * 3600
            WHERE p.location_id = ? AND p.source = ? AND p.valid_time >= ? AND p.valid_time < ?
              AND (? IS NULL OR p.model = ?)
              AND p.forecast_\(forecastColumn) IS NOT NULL AND p.observed_\(observedColumn) IS NOT NULL
            """
        let quantity = variable.quantity
        let units = options.units
        let threshold = options.thresholdMillimetres
        var groups: [String: VerifyRow] = [:]
        let statement = try store.db.cachedStatement(sql)
        try statement.bind([.integer(location.id), .text(source)] + options.range.bounds + [options.model.sqlValue, options.model.sqlValue])
        while let row = try statement.step() {
            let issuedAt = row.int64(1)
            let validTime = row.int64(2)
            let lead = Double(validTime - issuedAt) / 3600
            guard let (from, to) = bucket(lead, options.grouping) else { continue }
            let model = options.grouping == .model ? row.string(0) : nil
            let key = (model ?? "") + "\u{1}" + String(from)
            var group = groups[key] ?? VerifyRow(model: model, leadFromHours: from, leadToHours: to)
            group.firstValidTime = min(group.firstValidTime, validTime)
            group.lastValidTime = max(group.lastValidTime, validTime)
            let rawForecast = row.double(3)
            let rawObserved = row.double(4)

            if isProbability {
                let occurred = rawObserved >= threshold
                group.scores.add(forecast: rawForecast, observed: occurred ? 100 : 0)
                var brier = group.brier ?? BrierScore()
                brier.add(probabilityPercent: rawForecast, occurred: occurred)
                group.brier = brier
            } else {
                let observed = units.convert(rawObserved, quantity)
                // Direction errors go the short way round: 350° against 10° is 20° off, not 340°.
                let forecast = observed + QuerySupport.difference(units.convert(rawForecast, quantity), observed, quantity)
                group.scores.add(forecast: forecast, observed: observed)
                if let rawReference = row.optionalDouble(5) {
                    let reference = observed + QuerySupport.difference(units.convert(rawReference, quantity), observed, quantity)
                    group.forecastWithReference.add(forecast: forecast, observed: observed)
                    group.persistence.add(forecast: reference, observed: observed)
                }
                if isPrecipitation {
                    var table = group.contingency ?? Contingency()
                    table.add(forecast: rawForecast, observed: rawObserved, threshold: threshold)
                    group.contingency = table
                }
            }
            groups[key] = group
        }
        statement.reset()

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
            options: .init(grouping: options.grouping, thresholdMillimetres: threshold, units: units, model: options.model),
            rows: rows)
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
