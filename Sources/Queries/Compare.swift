import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// How `wxdb query compare` and `query consistency` group lead times.
public enum LeadGrouping: String, Sendable, CaseIterable {
    /// The buckets of `LeadBuckets`: 0–6, 6–12, 12–24 h, then whole days.
    case lead
    /// Whole lead days: 0–24 h, 24–48 h, ... up to 384 h.
    case day

    /// The bucket holding a lead of `hours`, nil outside the lead rule: verify's own grouping.
    public func bucket(forLeadHours hours: Double) -> LeadBucket? {
        VerifyQuery.bucket(hours, self == .day ? .day : .lead).map { LeadBucket(from: $0.0, to: $0.1) }
    }
}

/// How `wxdb query compare` tests a difference.
public enum CompareMethod: String, Sendable, CaseIterable {
    /// `DailyDifferenceTest`: the matched-hour MAE difference with a HAC variance over days whose
    /// size holds when errors persist for days (the default).
    case hac
    /// `DieboldMariano`: BoM `scores`' DM statistic with the HLN correction on the daily mean
    /// differences, at a horizon of the bucket's longest lead in days.
    case hln
}

/// What to compare: two models' forecasts of one variable on the hours both forecast.
public struct CompareOptions: Sendable {
    public var variable: Variable
    /// Exactly two models; nil takes the location's first two (its configured models, else those with most runs).
    public var models: [String]?
    public var grouping: LeadGrouping
    public var range: TimeRange
    public var source: String?
    public var units: UnitSystem
    /// The family-wise significance level of the verdict over all buckets.
    public var level: Double
    public var method: CompareMethod
    /// The level of each bucket's interval.
    public var confidence: Double

    public init(
        variable: Variable, models: [String]? = nil, grouping: LeadGrouping = .lead, range: TimeRange = TimeRange(),
        source: String? = nil, units: UnitSystem = .metric, level: Double = 0.05, method: CompareMethod = .hac,
        confidence: Double = 0.95
    ) {
        self.method = method
        self.confidence = confidence
        self.variable = variable
        self.models = models
        self.grouping = grouping
        self.range = range
        self.source = source
        self.units = units
        self.level = level
    }
}

/// One lead bucket of a matched comparison.
public struct CompareRow: Sendable, Equatable {
    public var leadFromHours: Int
    public var leadToHours: Int
    /// Matched valid hours: both models forecast them with a lead in the bucket, and they were observed.
    public var n: Int
    /// Each model's MAE and RMSE over exactly those hours, in display units.
    public var mae: (Double, Double)
    public var rmse: (Double, Double)
    /// Days with matched hours.
    public var days: Int
    /// The difference tested, first model − second: with `.hac` MAE A − MAE B on the matched hours
    /// (`mae.0 − mae.1`); with `.hln` the mean of the daily mean differences (each day weighs the
    /// same, as `scores` takes the series), which differs where days have unequal matched hours.
    public var meanDifference: Double
    /// This bucket's own interval of `meanDifference` at the options' confidence.
    public var interval: (low: Double, high: Double)?
    /// The bucket's statistic (HAC t, or the HLN-corrected DM) and its own two-sided p-value.
    public var statistic: Double?
    public var pValue: Double?
    /// The p-value adjusted over the buckets tested (`.hac`: the step-down max-t of
    /// `JointDifferenceTest`; `.hln`: Holm's): what the verdict reads.
    public var pAdjusted: Double?
    /// `.hac`: the t distribution's degrees of freedom (cosines); `.hln`: the horizon in days used.
    public var degrees: Int?
    public var horizonDays: Int?
    /// Why this bucket has no test (too few days, or no variance), nil when it has one.
    public var untested: DailyDifferenceTest.Untested?
    /// `.hln` only: the horizon asked for (the fallback to 1 is noted).
    var horizonAsked: Int?
    /// The joint verdict: the better model where the adjusted p is below the level, nil for
    /// "no significant difference".
    public var better: String?

    public static func == (a: Self, b: Self) -> Bool {
        a.leadFromHours == b.leadFromHours && a.leadToHours == b.leadToHours && a.n == b.n && a.mae == b.mae
            && a.rmse == b.rmse && a.days == b.days && a.meanDifference == b.meanDifference
            && a.interval?.low == b.interval?.low && a.interval?.high == b.interval?.high
            && a.statistic == b.statistic && a.pValue == b.pValue && a.pAdjusted == b.pAdjusted
            && a.degrees == b.degrees && a.horizonDays == b.horizonDays && a.untested == b.untested
            && a.better == b.better
    }
}

/// The result of `wxdb query compare`.
public struct CompareResult: Sendable {
    public var location: String
    public var variable: Variable
    public var source: String
    public var models: [String]
    public var unit: String
    public var grouping: LeadGrouping
    public var level: Double
    public var method: CompareMethod
    public var confidence: Double
    public var rows: [CompareRow]
    /// Things the reader should know (too few hours for a test, multiple testing).
    public var notes: [String]
    /// The models scored from ensemble members: their `mae` is the mean CRPS (ecdf), their `rmse`
    /// the ensemble mean's (issue 31).
    public var ensembleModels: [String] = []

    /// What `mae` holds for `model`: "CRPS" for an ensemble, "MAE" for a deterministic model (its CRPS).
    public func lossName(_ model: String) -> String { ensembleModels.contains(model) ? "CRPS" : "MAE" }

    /// One or two sentences: where each model won, by how much, and where they did not differ.
    public var headline: String {
        let symbol = unit.isEmpty ? "" : " \(unit)"
        var parts: [String] = []
        for (winner, loser) in [(models[0], models[1]), (models[1], models[0])] {
            let won = rows.filter { $0.better == winner }
            guard !won.isEmpty else { continue }
            let sizes = won.map { abs($0.mae.0 - $0.mae.1) }
            let low = Words.decimal(sizes.min()!, places: 2), high = Words.decimal(sizes.max()!, places: 2)
            let by = low == high ? "\(low)" : "\(low)–\(high)"
            let score =
                ensembleModels.isEmpty
                ? "MAE" : "(\(lossName(winner)) \(winner) against \(lossName(loser)) \(loser))"
            parts.append("\(winner) beat \(loser) at \(Self.spans(won)) by \(by)\(symbol) \(score)")
        }
        // A bucket without a test (too few days, or differences that do not vary) is no evidence of
        // equal skill: it is named apart, never counted among the "no significant difference" buckets;
        // only identical errors (every difference 0) are, as no difference at all.
        let identical = rows.filter { $0.pValue == nil && $0.untested == .noVariance && $0.meanDifference == 0 }
        let decided = rows.filter { $0.pValue != nil } + identical
        let even = decided.filter { $0.better == nil }
        var untested: [String] = []
        for (reason, text) in [
            (DailyDifferenceTest.Untested.tooFewDays, "too few matched days"),
            (.noVariance, "the errors' differences do not vary")
        ] {
            let these = rows.filter { row in
                row.pValue == nil && (row.untested ?? .tooFewDays) == reason
                    && !identical.contains { $0.leadFromHours == row.leadFromHours }
            }
            if !these.isEmpty { untested.append("not tested at \(Self.spans(these)) (\(text))") }
        }
        if parts.isEmpty {
            guard !decided.isEmpty else {
                return
                    "No lead bucket could be tested between \(models[0]) and \(models[1]): "
                    + untested.joined(separator: "; ") + "."
            }
            let any = untested.isEmpty ? "any lead" : "any tested lead"
            let why = decided.count == identical.count ? ": their errors are identical" : ""
            return
                "No significant difference between \(models[0]) and \(models[1]) at \(any)\(why) (\(decided.count) lead bucket(s), matched hours only, \(Int((level * 100).rounded()))% family-wise)"
                + untested.map { "; " + $0 }.joined() + "."
        }
        if !even.isEmpty { parts.append("no significant difference at \(Self.spans(even))") }
        return (parts + untested).joined(separator: "; ") + "."
    }

    /// "24–120 h, 168–192 h": the rows' leads with adjacent buckets merged.
    static func spans(_ rows: [CompareRow]) -> String {
        var merged: [(Int, Int)] = []
        for row in rows.sorted(by: { $0.leadFromHours < $1.leadFromHours }) {
            if let last = merged.last, last.1 == row.leadFromHours {
                merged[merged.count - 1].1 = row.leadToHours
            } else {
                merged.append((row.leadFromHours, row.leadToHours))
            }
        }
        return merged.map { "\($0.0)–\($0.1) h" }.joined(separator: ", ")
    }
}

/// Matched comparisons of two models, with one verdict over the lead buckets.
public enum Compare {
    /// Compares two models at a location. For each lead bucket it keeps the valid hours that both
    /// models forecast with a lead in the bucket and that have an observation; each model's loss at
    /// such an hour is the mean absolute error of its runs in the bucket. Hourly loss differences are
    /// strongly correlated through the day and errors persist with the weather for days, so the
    /// test treats days as the units: `.hac` tests MAE A − MAE B on the matched hours with a HAC
    /// variance over the calendar of days (`DailyDifferenceTest`), `.hln` runs Diebold-Mariano (HLN)
    /// on the daily means as BoM `scores` does. The verdict `better` is adjusted over the buckets
    /// (`decide`).
    public static func compare(_ store: any Store, location: Location, options: CompareOptions) throws -> CompareResult
    {
        let variable = options.variable
        guard variable.verification != .categorical else {
            throw QueryError.unsupportedVariable(variable.name, reason: "it is a category (a WMO code), not a quantity")
        }
        let ensembles: any EnsembleStore = store
        let models = try chooseModels(store, location: location, requested: options.models, ensembles: ensembles)
        for model in models where !EnsembleModels.isEnsemble(model) {
            try QuerySupport.requireRuns(store, location: location, model: model)
        }
        let ensembleModels = models.filter(EnsembleModels.isEnsemble)
        if !ensembleModels.isEmpty, variable.verification == .circular {
            throw QueryError.unsupportedVariable(
                variable.name, reason: "an ensemble's CRPS needs a quantity on a line, not a direction")
        }
        // As verify: the default source is one that pairs, with both models (an ensemble's members are
        // not in the hourly rows this checks, so only the deterministic ones are asked about).
        let source = try ObservationSources.resolve(
            store, location: location, requested: options.source,
            pairing: .init(
                variable: variable, range: options.range, models: models.filter { !EnsembleModels.isEnsemble($0) }),
            models: models)
        let quantity = variable.quantity
        let units = options.units

        // Per bucket, per valid hour, per model: (count, Σ|e|, Σe²) of its runs.
        struct Loss {
            var n = 0
            var absolute = 0.0
            var squared = 0.0
        }
        var buckets: [LeadBucket: [Int64: [Loss]]] = [:]
        for (index, model) in models.enumerated() {
            // An ensemble's loss at an hour is its members' CRPS, the deterministic model's CRPS being
            // its absolute error, so the two are compared in the same units on the same hours.
            if EnsembleModels.isEnsemble(model) {
                for run in try ensembles.ensembleRuns(locationID: location.id, model: model) {
                    let last = run.firstValidTime + Int64(run.hourCount - 1) * 3600
                    let from = max(options.range.from ?? .min, run.firstValidTime, run.issuedAt)
                    let to = min(options.range.to ?? .max, last)
                    guard from <= to,
                        let members = try ensembles.ensembleMembers(
                            locationID: run.locationID, runID: run.id, variable: variable.name)
                    else { continue }
                    let observed = try ensembles.observations(
                        of: variable, locationID: location.id, source: source, from: from, to: to)
                    for (hour, row) in members.enumerated() {
                        let validTime = run.firstValidTime + Int64(hour) * 3600
                        guard validTime >= from, validTime <= to, let y = observed[validTime],
                            let bucket = options.grouping.bucket(forLeadHours: Double(validTime - run.issuedAt) / 3600)
                        else { continue }
                        let values = row.map { Double($0) }
                        guard let crps = EnsembleScore.crps(members: values, observed: y)?.total,
                            let mean = EnsembleScore.mean(members: values)
                        else { continue }
                        let error = units.convertDifference(mean - y, quantity)
                        var loss = buckets[bucket, default: [:]][validTime] ?? [Loss(), Loss()]
                        loss[index].n += 1
                        loss[index].absolute += abs(units.convertDifference(crps, quantity))
                        loss[index].squared += error * error
                        buckets[bucket, default: [:]][validTime] = loss
                    }
                }
                continue
            }
            let filter = PairFilter(
                locationID: location.id, source: source, from: options.range.from, to: options.range.to, model: model)
            try store.forEachVerificationPair(forecast: variable, observed: variable.observedVariable, filter) { row in
                let issuedAt = row.issuedAt, validTime = row.validTime
                guard let bucket = options.grouping.bucket(forLeadHours: Double(validTime - issuedAt) / 3600) else {
                    return
                }
                let observed = observedValue(row.observed, variable: variable)
                let error = units.convertDifference(
                    SummarySums.difference(row.forecast, observed, variable), quantity)
                var hour = buckets[bucket, default: [:]][validTime] ?? [Loss(), Loss()]
                hour[index].n += 1
                hour[index].absolute += abs(error)
                hour[index].squared += error * error
                buckets[bucket, default: [:]][validTime] = hour
            }
        }

        var rows: [CompareRow] = []
        var rowDays: [[DailyDifference]] = []
        for bucket in buckets.keys.sorted() {
            let hours = buckets[bucket]!
            var hourCount = 0
            var mae = (0.0, 0.0), mse = (0.0, 0.0)
            // Per valid UTC day, the sum of the matched hours' loss differences and their number.
            var days: [DailyDifference] = []
            for time in hours.keys.sorted() {
                let loss = hours[time]!
                guard loss[0].n > 0, loss[1].n > 0 else { continue }
                let a = loss[0].absolute / Double(loss[0].n), b = loss[1].absolute / Double(loss[1].n)
                hourCount += 1
                mae.0 += a
                mae.1 += b
                mse.0 += loss[0].squared / Double(loss[0].n)
                mse.1 += loss[1].squared / Double(loss[1].n)
                let day = time >= 0 ? time / 86_400 : (time - 86_399) / 86_400
                if days.last?.day == day {
                    days[days.count - 1].sum += a - b
                    days[days.count - 1].hours += 1
                } else {
                    days.append(DailyDifference(day: day, sum: a - b, hours: 1))
                }
            }
            guard hourCount > 0 else { continue }
            let n = Double(hourCount)
            let row = Self.row(
                bucket: bucket, days: days, hours: hourCount, mae: (mae.0 / n, mae.1 / n),
                rmse: ((mse.0 / n).squareRoot(), (mse.1 / n).squareRoot()), options: options)
            rows.append(row)
            rowDays.append(days)
        }
        guard !rows.isEmpty else {
            throw QueryError.noPairs(
                location: location.name, variable: variable.name, source: source,
                detail:
                    "no valid hour has forecasts from both \(models[0]) and \(models[1]) and an observation\(options.range.phrase.isEmpty ? "" : " " + options.range.phrase)"
            )
        }
        decide(&rows, days: rowDays, models: models, level: options.level, method: options.method)
        let tested = rows.filter { $0.pValue != nil }.count
        var notes: [String] = SourceNames.modelDerivedNote(source).map { [$0] } ?? []
        let percent = Words.percent(options.level)
        let (lossA, lossB) = (
            ensembleModels.contains(models[0]) ? "CRPS" : "MAE", ensembleModels.contains(models[1]) ? "CRPS" : "MAE"
        )
        if !ensembleModels.isEmpty {
            notes.append(
                "\(ensembleModels.joined(separator: " and ")) scored by the members' CRPS (ecdf, as BoM scores' crps_for_ensemble) at each matched hour, a deterministic model by its absolute error (its CRPS); an ensemble's RMSE is its mean's"
            )
        }
        switch options.method {
        case .hac:
            notes.append(
                "diff is \(lossA) \(models[0]) − \(lossB) \(models[1]) on the matched hours; its interval is the bucket's own, from a HAC variance over days (equal-weighted cosines, their number from the days' autocorrelation, the variance divided by the share of it they catch under that AR(1) fit; Student's t)"
            )
        case .hln:
            notes.append(
                "--method hln: diff, its interval and p are the Diebold-Mariano test with the HLN correction on the daily mean differences (each day weighs the same, as BoM scores takes them), at a horizon of the bucket's longest lead in days; its size is not kept when errors persist for days"
            )
            let fallen = rows.filter { $0.horizonDays == 1 && ($0.horizonAsked ?? 1) > 1 }
            if !fallen.isEmpty {
                notes.append(
                    "at \(CompareResult.spans(fallen)) the daily differences alternate too much for the lead's horizon, so the test assumed independent days (as R's forecast::dm.test does)"
                )
            }
        }
        if tested > 1 {
            let how =
                options.method == .hac
                ? "a step-down max-t over the buckets' joint distribution (p_adjusted; Romano-Wolf, \(JointDifferenceTest.defaultDraws) seeded draws, the buckets' correlation from their days)"
                : "Holm's adjustment (p_adjusted)"
            notes.append(
                "better is one verdict over the \(tested) buckets tested: \(how) keeps the chance of naming a winner anywhere between equal models at \(percent)"
            )
        }
        let noVariance = rows.filter { $0.untested == .noVariance }
        if !noVariance.isEmpty {
            let identical = noVariance.allSatisfy { $0.meanDifference == 0 }
            notes.append(
                "no test at \(CompareResult.spans(noVariance)): the daily differences do not vary (zero variance\(identical ? "; the two models' errors are identical on every matched hour" : ", a constant difference"))"
            )
        }
        let few = rows.filter { $0.untested == .tooFewDays }
        if !few.isEmpty {
            let need =
                options.method == .hac
                ? "at least \(DailyDifferenceTest.minimumDays) days with matched hours"
                : "more days than the bucket's longest lead in days"
            notes.append(
                "no test where the matched days are too few (the test needs \(need)): \(few.map { "\(LeadBuckets.label(from: $0.leadFromHours, to: $0.leadToHours)) (\($0.days) day(s))" }.joined(separator: ", "))"
            )
        }
        return CompareResult(
            location: location.name, variable: variable, source: source, models: models,
            unit: units.unit(quantity), grouping: options.grouping, level: options.level, method: options.method,
            confidence: options.confidence, rows: rows, notes: notes, ensembleModels: ensembleModels)
    }

    /// One bucket's row: its matched hours' scores and the test of its days by `options.method`.
    static func row(
        bucket: LeadBucket, days: [DailyDifference], hours: Int, mae: (Double, Double), rmse: (Double, Double),
        options: CompareOptions
    ) -> CompareRow {
        var row = CompareRow(
            leadFromHours: bucket.from, leadToHours: bucket.to, n: hours, mae: mae, rmse: rmse, days: days.count,
            meanDifference: mae.0 - mae.1)
        switch options.method {
        case .hac:
            let test = DailyDifferenceTest(daily: days, confidence: options.confidence)
            row.meanDifference = test.meanDifference
            row.interval = test.confidenceInterval
            row.statistic = test.statistic
            row.pValue = test.pValue
            row.degrees = test.degrees
            row.untested = test.untested
        case .hln:
            // The horizon in days: a run's errors carry over to the next runs' for about as long as its lead.
            let test = DieboldMariano(
                differences: days.map { $0.sum / Double($0.hours) }, horizon: (bucket.to + 23) / 24,
                confidence: options.confidence)
            row.meanDifference = test.meanDifference
            row.interval = test.confidenceInterval
            row.statistic = test.statistic
            row.pValue = test.pValue
            row.horizonDays = test.horizonUsed
            row.horizonAsked = test.horizon
            if test.pValue == nil { row.untested = test.differencesVary ? .tooFewDays : .noVariance }
        }
        return row
    }

    /// One verdict over every bucket tested, keeping the chance of naming a winner anywhere between
    /// equal models at `level` though the buckets share days: `.hac` by the buckets' joint law
    /// (`JointDifferenceTest`, a step-down max-t over the days of every bucket), `.hln` by Holm's
    /// step-down (its statistics have no joint law to draw from). `days[i]` are `rows[i]`'s days.
    static func decide(
        _ rows: inout [CompareRow], days: [[DailyDifference]], models: [String], level: Double,
        method: CompareMethod, draws: Int = JointDifferenceTest.defaultDraws
    ) {
        let adjusted: [Double?]
        switch method {
        case .hac:
            adjusted = JointDifferenceTest.adjusted(
                daily: days,
                tests: rows.map { row in
                    guard let p = row.pValue, let k = row.degrees else { return nil }
                    return (p, row.meanDifference, k)
                }, draws: draws)
        case .hln:
            adjusted = Holm.adjusted(rows.map(\.pValue))
        }
        for index in rows.indices {
            rows[index].pAdjusted = adjusted[index]
            if let p = adjusted[index], p < level {
                rows[index].better = rows[index].meanDifference < 0 ? models[0] : models[1]
            }
        }
    }

    /// The two models to compare: those asked for, else the location's first two configured models
    /// that have runs, else the two with most runs.
    static func chooseModels(
        _ store: any Store, location: Location, requested: [String]?, ensembles: (any EnsembleStore)? = nil
    ) throws -> [String] {
        let deterministic = try store.runCountsByModel(locationID: location.id).map(\.model)
        // Ensembles come after the deterministic models, so a default pair stays as it was.
        var stored = deterministic
        for model in location.models + (requested ?? [])
        where EnsembleModels.isEnsemble(model) && !stored.contains(model) {
            if let ensembles, try !ensembles.ensembleRuns(locationID: location.id, model: model).isEmpty {
                stored.append(model)
            }
        }
        if stored.isEmpty { throw QueryError.noRuns(location: location.name, model: nil) }
        if let requested {
            guard requested.count == 2, requested[0] != requested[1] else {
                throw CompareError.needTwoModels(given: requested)
            }
            for model in requested where !stored.contains(model) {
                throw CompareError.noRunsOfModel(model, location: location.name, stored: stored)
            }
            return requested
        }
        let configured = location.models.filter { deterministic.contains($0) }
        let candidates = configured + stored.filter { !configured.contains($0) }
        guard candidates.count >= 2 else {
            throw CompareError.onlyOneModel(location: location.name, models: stored)
        }
        return Array(candidates.prefix(2))
    }

    /// The observation in the forecast's terms: a probability is scored against 100 % when the
    /// event (the default threshold, as verify's Brier score) happened.
    static func observedValue(_ observed: Double, variable: Variable) -> Double {
        guard variable.isProbability else { return observed }
        return observed >= 0.1 ? 100 : 0
    }
}

/// Why two models cannot be compared.
public enum CompareError: Error, CustomStringConvertible, Equatable {
    case needTwoModels(given: [String])
    case onlyOneModel(location: String, models: [String])
    case noRunsOfModel(String, location: String, stored: [String])

    public var description: String {
        switch self {
        case .needTwoModels(let given):
            return
                "compare takes exactly two different models (got \(given.isEmpty ? "none" : given.joined(separator: ", "))); pass --models A,B"
        case .onlyOneModel(let location, let models):
            let have = models.isEmpty ? "no runs" : "runs of \(models.joined(separator: ", ")) only"
            return
                "\(location) has \(have), and a comparison needs two models; add one with 'wxdb locations set \(QueryError.quoted(location)) --models A,B' and fetch or backfill it"
        case .noRunsOfModel(let model, let location, let stored):
            let have = stored.isEmpty ? "no runs yet" : "runs of \(stored.joined(separator: ", "))"
            return
                "\(location) has no runs of model \(model) (it has \(have)); pass two of those to --models, or add \(model) with 'wxdb locations set \(QueryError.quoted(location)) --models ...' and fetch it"
        }
    }
}

/// What `wxdb query consistency` reports for one model (and lead window).
public struct ConsistencyRow: Sendable, Equatable {
    public var model: String
    public var leadFromHours: Int
    public var leadToHours: Int
    /// Valid hours with at least three runs in the window.
    public var n: Int
    /// Mean, median and 90th percentile of the per-hour Flip-Flop Index, in display units.
    public var mean: Double?
    public var median: Double?
    public var p90: Double?
}

/// The result of `wxdb query consistency`.
public struct ConsistencyResult: Sendable {
    public var location: String
    public var variable: Variable
    public var unit: String
    public var rows: [ConsistencyRow]

    /// Which model changes its mind least, in words. Models whose means are less than
    /// `alikeFraction` apart (of the larger) are said to be alike rather than ranked, and ties go
    /// by name, so the same numbers always give the same sentence.
    public var headline: String {
        let scored = rows.filter { $0.mean != nil }
        let byModel = Dictionary(grouping: scored, by: \.model)
        let means = byModel.mapValues { rows in
            rows.map { $0.mean! * Double($0.n) }.reduce(0, +) / Double(rows.map(\.n).reduce(0, +))
        }
        let ranked = means.sorted { ($0.value, $0.key) < ($1.value, $1.key) }
        guard let steadiest = ranked.first, let worst = ranked.last else {
            return "No valid hour has forecasts from three or more runs in the lead window yet."
        }
        let value = Words.decimal(steadiest.value, places: 2)
        if ranked.count == 1 {
            return
                "Successive \(steadiest.key) runs changed their \(variable.name) forecast back and forth by \(value) \(unit) on average (Flip-Flop Index)."
        }
        let worstValue = Words.decimal(worst.value, places: 2)
        if worst.value - steadiest.value <= Self.alikeFraction * worst.value {
            let names = ranked.map(\.key)
            let who =
                names.count == 2
                ? "\(names[0]) and \(names[1])" : "all \(names.count) models (\(names.joined(separator: ", ")))"
            let range = value == worstValue ? value : "\(value) to \(worstValue)"
            return
                "\(who) flip-flop alike (mean Flip-Flop Index \(range) \(unit), less than \(Int(Self.alikeFraction * 100))% apart)."
        }
        return
            "\(steadiest.key) flip-flops least (mean Flip-Flop Index \(value) \(unit)); \(worst.key) most (\(worstValue) \(unit))."
    }

    /// Mean Flip-Flop Indices closer than this share of the larger one are not called a difference:
    /// a few hours more or less in the window move a mean by that much.
    public static let alikeFraction = 0.05
}

/// How much successive runs change their mind about the same hour.
public enum Consistency {
    /// For each model (and lead window with `.day`), the Flip-Flop Index of each valid hour over the
    /// runs whose lead lies in `[leadFrom, leadTo]`, in issue order, and its mean, median and 90th
    /// percentile over valid hours with at least three runs.
    public static func consistency(
        _ store: any Store, location: Location, variable: Variable, leadFromHours: Double = 24,
        leadToHours: Double = 120,
        byDay: Bool = false, models: [String]? = nil, range: TimeRange = TimeRange(), units: UnitSystem = .metric
    ) throws -> ConsistencyResult {
        guard variable.verification != .categorical else {
            throw QueryError.unsupportedVariable(variable.name, reason: "it is a category (a WMO code), not a quantity")
        }
        guard leadFromHours >= 0, leadToHours >= leadFromHours else {
            throw ConsistencyError.badLeadWindow(from: leadFromHours, to: leadToHours)
        }
        try QuerySupport.requireRuns(store, location: location, model: nil)
        let chosen = try models ?? store.runCountsByModel(locationID: location.id).map(\.model)
        let angular = variable.verification == .circular
        let scale = units.convertDifference(1, variable.quantity)

        // Windows: one, or whole lead days inside [from, to].
        var windows: [(Double, Double)] = [(leadFromHours, leadToHours)]
        if byDay {
            windows = stride(from: Int(leadFromHours / 24) * 24, to: Int(leadToHours.rounded(.up)), by: 24).map {
                (max(leadFromHours, Double($0)), min(leadToHours, Double($0 + 24)))
            }
        }
        var rows: [ConsistencyRow] = []
        for window in windows {
            var indices: [String: [Double]] = [:]
            var current: (model: String, time: Int64)?
            var sequence: [Double] = []
            func close() {
                if let current, let index = FlipFlop.index(sequence, angular: angular) {
                    indices[current.model, default: []].append(index * (angular ? 1 : scale))
                }
                sequence.removeAll(keepingCapacity: true)
            }
            for model in chosen {
                try store.forEachForecastSequence(
                    locationID: location.id, model: model, variable: variable.name,
                    leadFromHours: window.0, leadToHours: window.1, from: range.from, to: range.to
                ) { value in
                    if current?.model != value.model || current?.time != value.validTime {
                        close()
                        current = (value.model, value.validTime)
                    }
                    sequence.append(value.value)
                }
                close()
            }
            for model in chosen {
                let values = (indices[model] ?? []).sorted()
                rows.append(
                    ConsistencyRow(
                        model: model, leadFromHours: Int(window.0), leadToHours: Int(window.1.rounded(.up)),
                        n: values.count,
                        mean: values.isEmpty ? nil : values.reduce(0, +) / Double(values.count),
                        median: Quantiles.quantile(values, 0.5), p90: Quantiles.quantile(values, 0.9)))
            }
        }
        return ConsistencyResult(
            location: location.name, variable: variable, unit: units.unit(variable.quantity), rows: rows)
    }
}

/// Why consistency cannot be computed as asked.
public enum ConsistencyError: Error, CustomStringConvertible, Equatable {
    case badLeadWindow(from: Double, to: Double)

    public var description: String {
        switch self {
        case .badLeadWindow(let from, let to):
            return
                "the lead window \(Words.decimal(from, places: 1))–\(Words.decimal(to, places: 1)) h is empty or negative; pass --lead-from H --lead-to H with 0 <= H1 <= H2"
        }
    }
}

/// Plain rounding for words (not for machine output, which carries full precision).
enum Words {
    static func decimal(_ value: Double, places: Int) -> String {
        String(printf: "%.\(places)f", value)
    }

    /// `5%`, `2.5%`.
    static func percent(_ fraction: Double) -> String {
        JSON.numberText(NumberText.tidy(fraction * 100)) + "%"
    }
}
