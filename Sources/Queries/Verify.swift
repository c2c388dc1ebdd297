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
    /// Score every pair from the rows, ignoring the kept sums (what the sums are checked against;
    /// pruned runs' pairs are then missing).
    public var pairsOnly = false
    /// The level of the scores' intervals (`DayBootstrap`); nil for none.
    public var confidence: Double?
    /// Resamples per interval, and a fixed mean block length in days (nil: from the data).
    public var resamples = DayBootstrap.defaultResamples
    public var blockLength: Double?

    public init(
        variable: Variable, source: String? = nil, range: TimeRange = TimeRange(), grouping: VerifyGrouping = .lead,
        model: String? = nil, thresholdMillimetres: Double = 0.1, units: UnitSystem = .metric, pairsOnly: Bool = false
    ) {
        self.pairsOnly = pairsOnly
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
    /// Persistence (the observation at the run's issue hour carried forward) against the forecast,
    /// over the pairs that have such a reference.
    public var persistence: PersistenceSums { sums.persistence ?? PersistenceSums() }
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
    /// The scores' intervals when asked for and there were enough valid days; see `days`.
    public var intervals: ScoreIntervals?
    /// Valid days with pairs in the group (counted when intervals are asked for).
    public var days = 0

    /// MSE skill score against persistence, over `persistence.n` pairs; nil without reference pairs.
    public var persistenceSkill: Double? { persistence.skill }
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
    /// What was scored from the pairs rather than the kept sums, and why (for the `notes` field).
    public var pairNotes: [String] = []

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
        public var confidence: Double?
    }
}

/// `wxdb query verify`: forecasts against observations, grouped by lead.
public enum VerifyQuery {
    /// Pairs every run's forecast (0 ≤ lead < 384 h) with the observation at exactly its valid time,
    /// via the `forecast_observation_pairs` view, and scores them per group. Persistence, the
    /// reference of the skill score, is `Store.persistenceReferences`: the latest observation at or
    /// before the run's `issued_at` and less than an hour before it, carried forward. Each run counts once per
    /// valid hour. Throws a `QueryError` naming what is missing when there is nothing to score.
    public static func verify(_ store: any Store, location: Location, options: VerifyOptions) throws -> VerifyResult {
        let variable = options.variable
        if variable.verification == .categorical {
            throw QueryError.unsupportedVariable(
                variable.name,
                reason:
                    "it is a category (a WMO code), not a quantity; see how runs compared with 'wxdb query forecast --var \(variable.name)'"
            )
        }
        _ = try QuerySupport.column(variable)
        try QuerySupport.requireRuns(store, location: location, model: options.model)
        let source = try ObservationSources.resolve(
            store, location: location, requested: options.source,
            pairing: .init(variable: variable, range: options.range, model: options.model))

        var groups: [String: VerifyRow] = [:]
        var notes: [String] = []
        let daily = options.confidence == nil ? nil : DailySums()
        var prunedDaysLeftOut = 0
        let defaultThreshold = options.thresholdMillimetres == Pruner.threshold
        if options.pairsOnly {
            try addPairs(store, location: location, source: source, options: options, into: &groups, daily: daily)
        } else if try store.sumsPending() {
            notes.append(
                "scored from the stored pairs: the sums of data stored before this version are not added yet (any wxdb command that can write adds them)"
            )
            try addPairs(store, location: location, source: source, options: options, into: &groups, daily: daily)
        } else if variable.isProbability && !defaultThreshold {
            notes.append(
                "scored from the stored pairs: the kept sums are at \(formatThreshold(Pruner.threshold)) mm, so pruned runs are left out at --threshold \(formatThreshold(options.thresholdMillimetres))"
            )
            try addPairs(store, location: location, source: source, options: options, into: &groups, daily: daily)
        } else {
            let cut = try addSummaries(
                store, location: location, source: source, options: options, into: &groups, daily: daily)
            prunedDaysLeftOut = cut.prunedDays
            if !cut.intervals.isEmpty {
                let hours = cut.intervals.reduce(Int64(0)) { $0 + ($1.end - $1.start + 3599) / 3600 }
                notes.append(
                    "\(hours) hour(s) of the \(cut.days) local day(s) --from/--to cuts were scored from the stored pairs (the kept sums are per whole day)"
                )
            }
            if variable.hasEvent && !defaultThreshold {
                notes.append(
                    "the 2x2 table at --threshold \(formatThreshold(options.thresholdMillimetres)) mm was counted from the stored pairs (the kept sums are at \(formatThreshold(Pruner.threshold)) mm), so pruned runs are left out of it"
                )
            }
            // Pairs for the cut days (everything), and at another threshold for the 2x2 table of the rest.
            if !cut.intervals.isEmpty || (variable.hasEvent && !defaultThreshold) {
                let everything =
                    variable.hasEvent && !defaultThreshold
                    ? [(options.range.from, options.range.to)]
                    : cut.intervals.map { (Optional($0.start), Optional($0.end)) }
                for (from, to) in everything {
                    var part = options
                    part.range = TimeRange(from: from, to: to)
                    try addPairs(
                        store, location: location, source: source, options: part, into: &groups, daily: daily
                    ) { valid in
                        cut.intervals.contains { valid >= $0.start && valid < $0.end } ? .all : .contingency
                    }
                }
            }
        }

        guard !groups.isEmpty else {
            var detail = try QuerySupport.coverage(store, location: location, source: source)
            if !options.range.phrase.isEmpty { detail = "valid \(options.range.phrase); " + detail }
            if let model = options.model { detail = "model \(model); " + detail }
            throw QueryError.noPairs(location: location.name, variable: variable.name, source: source, detail: detail)
        }
        if let daily, let confidence = options.confidence {
            notes += addIntervals(&groups, daily: daily, confidence: confidence, options: options)
        }
        let rows = groups.values.sorted { a, b in
            (a.model ?? "", a.leadFromHours) < (b.model ?? "", b.leadFromHours)
        }
        return VerifyResult(
            location: location.name, variable: variable, source: source,
            options: .init(
                grouping: options.grouping, thresholdMillimetres: options.thresholdMillimetres, units: options.units,
                model: options.model, confidence: options.confidence),
            rows: rows, prunedDaysLeftOut: prunedDaysLeftOut, pairNotes: notes)
    }

    static func formatThreshold(_ value: Double) -> String { JSON.numberText(value) }

    /// What of a pair to add: everything, or only its 2x2 entry (whose other scores the sums hold).
    enum PairPart { case all, contingency }

    /// Scores the stored pairs in `options.range` (of unpruned runs only) into `groups`.
    static func addPairs(
        _ store: any Store, location: Location, source: String, options: VerifyOptions,
        into groups: inout [String: VerifyRow], daily: DailySums? = nil, part: (Int64) -> PairPart = { _ in .all }
    ) throws {
        let variable = options.variable
        let observedVariable = variable.observedVariable
        let references = try store.persistenceReferences(
            locationID: location.id, source: source, observed: observedVariable, model: options.model)
        let filter = PairFilter(
            locationID: location.id, source: source, from: options.range.from, to: options.range.to,
            model: options.model)
        try store.forEachVerificationPair(forecast: variable, observed: observedVariable, filter) { row in
            let issuedAt = row.issuedAt
            let validTime = row.validTime
            let lead = Double(validTime - issuedAt) / 3600
            guard let (from, to) = bucket(lead, options.grouping) else { return }
            let model = options.grouping == .model ? row.model.string : nil
            let key = (model ?? "") + "\u{1}" + String(from)
            var group = groups[key] ?? VerifyRow(model: model, leadFromHours: from, leadToHours: to)
            switch part(validTime) {
            case .all:
                group.firstValidTime = min(group.firstValidTime, validTime)
                group.lastValidTime = max(group.lastValidTime, validTime)
                if let daily {
                    // With intervals the pair is also kept in its valid day's sums.
                    var one = VerifyRow(model: nil, leadFromHours: from, leadToHours: to)
                    add(
                        &one, forecast: row.forecast, observed: row.observed, reference: references[issuedAt],
                        variable: variable, units: options.units, threshold: options.thresholdMillimetres)
                    group.sums.merge(one.sums)
                    daily.add(one.sums, key: key, valid: validTime)
                } else {
                    add(
                        &group, forecast: row.forecast, observed: row.observed, reference: references[issuedAt],
                        variable: variable, units: options.units, threshold: options.thresholdMillimetres)
                }
            case .contingency:
                var table = Contingency()
                table.add(forecast: row.forecast, observed: row.observed, threshold: options.thresholdMillimetres)
                group.sums.contingency = group.sums.contingency ?? Contingency()
                group.sums.contingency?.merge(table)
                daily?.add(SummarySums(contingency: table), key: key, valid: validTime)
            }
            groups[key] = group
        }
    }

    /// Adds one forecast/observation pair (stored units) to a group's scores, in `units`
    /// (`SummarySums.add`, the same scoring the kept sums use).
    static func add(
        _ group: inout VerifyRow, forecast rawForecast: Double, observed rawObserved: Double,
        reference rawReference: Double?,
        variable: Variable, units: UnitSystem, threshold: Double
    ) {
        group.sums.add(
            forecast: rawForecast, observed: rawObserved, reference: rawReference, variable: variable,
            threshold: threshold, units: units)
    }

    /// What the kept sums could not answer: the parts of local days `--from/--to` cuts.
    struct CutDays {
        var intervals: [(start: Int64, end: Int64)] = []
        var days = 0
        var prunedDays = 0
    }

    /// Adds the kept sums (`verification_summaries`) of every local day wholly inside the range;
    /// returns the days the range cuts, whose hours inside it the pairs answer (a day of pruned runs
    /// among them cannot be split, so it is left out and counted for a note).
    /// At another threshold the 2x2 table is not taken from the sums (they keep the default's).
    static func addSummaries(
        _ store: any Store, location: Location, source: String, options: VerifyOptions,
        into groups: inout [String: VerifyRow], daily: DailySums? = nil
    ) throws -> CutDays {
        let defaultThreshold = options.thresholdMillimetres == Pruner.threshold
        // Imperial display is an affine change of unit (x' = a·x + b), which partial sums follow exactly.
        let quantity = options.variable.quantity
        let scale = options.units.convertDifference(1, quantity)
        let offset = options.units.convert(0, quantity)
        let isProbability = options.variable.isProbability
        let lower = options.range.from ?? Int64.min
        let upper = options.range.to ?? Int64.max
        func add(_ sums: SummarySums, model: String, leadFrom: Int, first: Int64, last: Int64) {
            guard let (from, to) = bucket(Double(leadFrom), options.grouping) else { return }
            let model = options.grouping == .model ? model : nil
            let key = (model ?? "") + "\u{1}" + String(from)
            var group = groups[key] ?? VerifyRow(model: model, leadFromHours: from, leadToHours: to)
            var stored = sums
            if !isProbability { stored = stored.affine(scale: scale, offset: offset) }
            if !defaultThreshold { stored.contingency = nil }
            group.sums.merge(stored)
            group.firstValidTime = min(group.firstValidTime, first)
            group.lastValidTime = max(group.lastValidTime, last)
            groups[key] = group
        }
        // With intervals, every day's rows, as the bootstrap resamples days.
        if let daily {
            try store.forEachSummary(
                locationID: location.id, source: source, variable: options.variable.name, model: options.model
            ) { row in
                guard let day = row.span else { return }
                daily.spans.append(day)
                guard day.start >= lower, day.end <= upper,
                    let (from, _) = bucket(Double(row.leadFrom), options.grouping)
                else { return }
                let key = (options.grouping == .model ? row.model : "") + "\u{1}" + String(from)
                var stored = row.sums
                if !isProbability { stored = stored.affine(scale: scale, offset: offset) }
                if !defaultThreshold { stored.contingency = nil }
                daily.add(stored, key: key, day: day.start)
            }
            daily.spans.sort { $0.start < $1.start }
        }
        // Whole days inside the range, added up per model and lead bucket by the store.
        for total in try store.summaryTotals(
            locationID: location.id, source: source, variable: options.variable.name, model: options.model,
            from: lower, to: upper)
        {
            add(
                total.sums, model: total.model, leadFrom: total.leadFrom, first: total.firstValid, last: total.lastValid
            )
        }
        // The rows of each day the range cuts, by model and lead bucket: their n against the pairs
        // still stored tells whether pruned runs' pairs are in them.
        var cutSpans: [[Int64]: [String: Int]] = [:]
        if options.range.from != nil || options.range.to != nil {
            try store.forEachSummary(
                locationID: location.id, source: source, variable: options.variable.name, model: options.model,
                cutBy: (lower, upper)
            ) { row in
                // A day's hours are the ones it was summed over, whatever the location's zone is now.
                guard let day = row.span else { return }
                cutSpans[[day.start, day.end], default: [:]][row.model + "\u{1}" + String(row.leadFrom)] =
                    row.sums.continuous.n
            }
        }
        var cut = CutDays()
        // The stored pairs' sums are on the location's days in its zone now (changing the zone
        // moves them); what pruned runs left may be on the days of a zone it had before. So the
        // hours scored from the pairs are those whose day in today's zone the range cuts, however
        // the kept rows' days fall: a row of an older zone's day cut by the range holds none of
        // the stored pairs, and reading its own span from the pairs counted them twice.
        let partial = Self.partialDays(lower: lower, upper: upper, timezone: location.timezone)
        cut.intervals = partial.filter { part in
            cutSpans.keys.contains { $0[0] < part.end && $0[1] > part.start }
        }
        cut.days = cut.intervals.count
        for (span, rows) in cutSpans.sorted(by: { $0.key[0] < $1.key[0] }) {
            guard
                try store.prunedRuns(validBetween: span[0], and: span[1], locationID: location.id, model: options.model)
                    > 0
            else { continue }
            var stored: [String: Int] = [:]
            let filter = PairFilter(
                locationID: location.id, source: source, from: span[0], to: span[1], model: options.model)
            try store.forEachVerificationPair(
                forecast: options.variable, observed: options.variable.observedVariable, filter
            ) { row in
                guard let bucket = LeadBuckets.bucket(forLeadHours: Double(row.validTime - row.issuedAt) / 3600) else {
                    return
                }
                stored[row.model.string + "\u{1}" + String(bucket.from), default: 0] += 1
            }
            if rows.contains(where: { $0.value > stored[$0.key, default: 0] }) { cut.prunedDays += 1 }
        }
        return cut
    }

    /// What `checkWholeDays` found.
    public struct WholeDayCheck: Sendable {
        public var checked = 0
        public var differing: [String] = []
    }

    /// Checks `query verify` over whole local days against the kept sums of those days, where
    /// kept sums of another zone's days overlap them (after `locations set --timezone` on a pruned
    /// database): over a whole day verify must count exactly the kept rows' pairs, and any pair
    /// it reads on top is counted twice. Every other day's answer is the kept rows by construction.
    public static func checkWholeDays(_ store: any Store) throws -> WholeDayCheck {
        var check = WholeDayCheck()
        for location in try store.locations() {
            let zone = location.timezone
            func day(_ instant: Int64) -> (start: Int64, end: Int64) {
                let hour = instant - ((instant % 3600) + 3600) % 3600
                return ZoneTime.span(ofDate: ZoneTime.date(of: instant, timezone: zone), timezone: zone)
                    ?? (hour, hour + 3600)
            }
            struct Key: Hashable {
                var source: String, variable: String, start: Int64, end: Int64
            }
            var atRisk = Set<Key>()
            for kept in try store.summaryDays(locationID: location.id) {
                let own = day(kept.from)
                guard own.start != kept.from || own.end != kept.to else { continue }
                var t = kept.from
                while t < kept.to {
                    let today = day(t)
                    atRisk.insert(Key(source: kept.source, variable: kept.variable, start: today.start, end: today.end))
                    t = max(today.end, t + 3600)
                }
            }
            for key in atRisk.sorted(by: { ($0.source, $0.variable, $0.start) < ($1.source, $1.variable, $1.start) }) {
                guard let variable = Variables.hourlyVariable(named: key.variable),
                    variable.verification != .categorical
                else { continue }
                let kept = try store.summaryTotals(
                    locationID: location.id, source: key.source, variable: key.variable, model: nil, from: key.start,
                    to: key.end
                ).reduce(0) { $0 + $1.sums.continuous.n }
                let options = VerifyOptions(
                    variable: variable, source: key.source, range: TimeRange(from: key.start, to: key.end))
                let answered =
                    (try? verify(store, location: location, options: options))?.rows.reduce(0) { $0 + $1.scores.n }
                    ?? 0
                check.checked += 1
                if answered != kept {
                    check.differing.append(
                        "\(location.name), \(key.source), \(key.variable), \(ZoneTime.date(of: key.start, timezone: zone)): verify counts n=\(answered), the day's kept sums n=\(kept)"
                    )
                }
            }
        }
        return check
    }

    /// The parts of `[lower, upper)` that cover only part of a local day in `timezone` (at most
    /// two: the first day's and the last day's, one when the range lies inside a single day).
    static func partialDays(lower: Int64, upper: Int64, timezone: String) -> [(start: Int64, end: Int64)] {
        guard lower < upper else { return [] }
        func span(_ instant: Int64) -> (start: Int64, end: Int64) {
            let hour = instant - ((instant % 3600) + 3600) % 3600
            return ZoneTime.span(ofDate: ZoneTime.date(of: instant, timezone: timezone), timezone: timezone)
                ?? (hour, hour + 3600)
        }
        var parts: [(start: Int64, end: Int64)] = []
        if lower > Int64.min {
            let first = span(lower)
            if first.start < lower { parts.append((lower, min(first.end, upper))) }
        }
        if upper < Int64.max {
            let last = span(upper - 1)
            let start = max(last.start, lower)
            if last.end > upper && parts.last?.start != start { parts.append((start, upper)) }
        }
        return parts
    }

    /// Gives each group its scores' intervals from its days' sums (`DayBootstrap`); returns the
    /// notes on how, and on the groups with too few days.
    static func addIntervals(
        _ groups: inout [String: VerifyRow], daily: DailySums, confidence: Double, options: VerifyOptions
    ) -> [String] {
        var few: [VerifyRow] = []
        var lengths: [Double] = []
        for (key, var row) in groups {
            let days = (daily.days[key] ?? [:]).filter { $0.value.continuous.n > 0 || $0.value.contingency != nil }
            row.days = days.count
            row.intervals = DayBootstrap.intervals(
                days: days.map { (start: $0.key, sums: $0.value) }, confidence: confidence,
                resamples: options.resamples, blockLength: options.blockLength,
                seed: DayBootstrap.seed(options.variable.name + "\u{1}" + key))
            if let intervals = row.intervals { lengths.append(intervals.blockLength) } else { few.append(row) }
            groups[key] = row
        }
        let percent = JSON.numberText(NumberText.tidy(confidence * 100))
        var notes: [String] = []
        if !lengths.isEmpty {
            let low = lengths.min()!, high = lengths.max()!
            let length =
                low.rounded() == high.rounded()
                ? formatThreshold(low.rounded())
                : "\(formatThreshold(low.rounded()))–\(formatThreshold(high.rounded()))"
            notes.append(
                "\(percent)% intervals: stationary block bootstrap over the valid days' sums (\(options.resamples) resamples, seeded; mean block length \(length) day(s), from the days' autocorrelation), BCa percentiles (block jackknife), each end widened by t/z for the number of blocks; RMSE, error SD and correlation ends moved by the variance of the mean error beyond s²/n, which the record's own mean hides when errors persist"
            )
        }
        if !few.isEmpty {
            let rows = few.sorted { ($0.model ?? "", $0.leadFromHours) < ($1.model ?? "", $1.leadFromHours) }
                .map {
                    // As the table labels the row (1–2 d, not 24–48 h).
                    "\($0.model.map { $0 + " " } ?? "")\(LeadBuckets.label(from: $0.leadFromHours, to: $0.leadToHours)) (\($0.days) day(s))"
                }
            notes.append(
                "no interval where fewer than \(DayBootstrap.minimumDays) valid days have pairs: \(rows.joined(separator: ", "))"
            )
        }
        return notes
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

/// Per group, the sums of each valid day, for the intervals: a day is a kept summary's local day,
/// and a pair outside every kept day (pairs-only scoring) goes to its UTC day.
final class DailySums {
    var days: [String: [Int64: SummarySums]] = [:]
    /// The kept days' instants, sorted, to put a pair in its day.
    var spans: [(start: Int64, end: Int64)] = []

    func add(_ sums: SummarySums, key: String, day: Int64) {
        days[key, default: [:]][day, default: SummarySums()].merge(sums)
    }

    func add(_ sums: SummarySums, key: String, valid: Int64) {
        add(sums, key: key, day: day(of: valid))
    }

    func day(of valid: Int64) -> Int64 {
        var low = 0, high = spans.count
        while low < high {
            let mid = (low + high) / 2
            if spans[mid].start <= valid { low = mid + 1 } else { high = mid }
        }
        if low > 0, valid < spans[low - 1].end { return spans[low - 1].start }
        return valid >= 0 ? valid / 86_400 * 86_400 : (valid - 86_399) / 86_400 * 86_400
    }
}
