// Ensemble sums kept at write time (issue 31): the engine-neutral half.
//
// Why this shape:
// - One group per (location, source, variable, model, local valid day, lead bucket), as the
//   deterministic `verification_summaries` are keyed, so verify reads days, not members, and the
//   day-block bootstrap (issue 32) resamples the same days for ensembles as for deterministic models.
// - A group is an ``EnsembleScores`` (every continuous score, the rank counts) plus, for
//   precipitation, one ``EnsembleEventScores`` per kept threshold: all of them plain sums, so a write
//   subtracts the cases it changes before and adds them after, and a pruned run's cases stay in.
// - An engine stores a group as ``EnsembleGroupSums/columns`` and the two byte strings; it needs no
//   Swift of its own beyond reading and writing one row per key (see StoreSQLite/EnsembleSums.swift).

/// The key of one group of kept ensemble sums.
public struct EnsembleSumsKey: Hashable, Sendable {
    public var location: Int64
    public var source: String
    public var variable: String
    public var model: String
    /// The local day's first instant and the next day's (a day is 23–25 h around a clock change).
    public var dayStart: Int64
    public var dayEnd: Int64
    public var leadFrom: Int
    public var leadTo: Int

    /// A key with every field given.
    public init(
        location: Int64, source: String, variable: String, model: String, dayStart: Int64, dayEnd: Int64,
        leadFrom: Int, leadTo: Int
    ) {
        self.location = location
        self.source = source
        self.variable = variable
        self.model = model
        self.dayStart = dayStart
        self.dayEnd = dayEnd
        self.leadFrom = leadFrom
        self.leadTo = leadTo
    }
}

/// The sums of one group: the continuous scores and the kept thresholds' event scores.
public struct EnsembleGroupSums: Sendable, Equatable {
    public var scores = EnsembleScores()
    /// One per ``EnsembleGroupSums/thresholds(for:)`` of the variable, in that order.
    public var events: [EnsembleEventScores]

    /// No cases of `variable`.
    public init(variable: String) {
        events = Self.thresholds(for: variable).map { EnsembleEventScores(threshold: $0) }
    }

    /// The thresholds whose Brier and reliability sums are kept: precipitation's (mm), which `query
    /// ensemble` and the report ask for; any other threshold is scored from the stored members.
    public static func thresholds(for variable: String) -> [Double] {
        variable == "precipitation" ? [0.1, 1, 5] : []
    }

    /// Adds one case.
    public mutating func add(members: [Double], observed y: Double) {
        scores.add(members: members, observed: y)
        for i in events.indices { events[i].add(members: members, observed: y) }
    }

    /// Adds another group's sums (the same variable's).
    public mutating func merge(_ other: EnsembleGroupSums) {
        scores.merge(other.scores)
        for i in events.indices where i < other.events.count { events[i].merge(other.events[i]) }
    }

    /// The sums with every count and sum negated: what a write takes away.
    public var negated: EnsembleGroupSums {
        var copy = self
        copy.scores = scores.negated
        copy.events = events.map(\.negated)
        return copy
    }

    /// Whether the group holds no case any more (every count back to zero).
    public var isEmpty: Bool {
        scores.n <= 0 && scores.rankLeftOut <= 0 && events.allSatisfy { $0.n <= 0 }
    }

    /// The names of the scalar columns an engine stores, in ``columns``' order.
    public static let columnNames = [
        "n", "sum_members", "sum_under", "sum_over", "sum_spread_term", "n_spread", "sum_fair_crps", "sum_variance",
        "sum_corrected_variance", "sum_spread_cases_err_sq", "sum_mean_err", "sum_mean_abs_err", "sum_mean_err_sq",
        "rank_left_out"
    ]

    /// Which of ``columnNames`` are counts (whole numbers, stored as integers by both engines).
    public static let countColumns: Set<Int> = [0, 1, 5, 13]

    /// The scalar columns' values (counts are exact in a double).
    public var columns: [Double] {
        let s = scores
        return [
            Double(s.n), Double(s.sumMembers), s.sumUnder, s.sumOver, s.sumSpreadTerm, Double(s.nSpread),
            s.sumFairCRPS, s.sumVariance, s.sumCorrectedVariance, s.sumSpreadCasesErrSq, s.sumMeanErr,
            s.sumMeanAbsErr, s.sumMeanErrSq, Double(s.rankLeftOut)
        ]
    }

    /// The rank counts as little-endian binary64, one per rank bin.
    public var rankBytes: [UInt8] { Binary64.encode(scores.rankCounts) }

    /// The event sums as little-endian binary64: per kept threshold n, Σ fair Brier, Σ Brier, then
    /// the bins' cases, forecast sums and events.
    public var eventBytes: [UInt8] {
        var flat: [Double] = []
        for e in events {
            flat += [Double(e.n), e.sumFairBrier, e.sumBrier]
            flat += e.binCases.map { Double($0) }
            flat += e.binForecastSum
            flat += e.binEvents.map { Double($0) }
        }
        return Binary64.encode(flat)
    }

    /// A group from an engine's row; nil when the columns or bytes do not fit `variable`'s layout.
    public init?(variable: String, columns c: [Double], rankBytes: [UInt8], eventBytes: [UInt8]) {
        guard c.count == Self.columnNames.count, let ranks = Binary64.decode(rankBytes),
            let flat = Binary64.decode(eventBytes)
        else { return nil }
        self.init(variable: variable)
        scores.n = Int(c[0])
        scores.sumMembers = Int(c[1])
        scores.sumUnder = c[2]
        scores.sumOver = c[3]
        scores.sumSpreadTerm = c[4]
        scores.nSpread = Int(c[5])
        scores.sumFairCRPS = c[6]
        scores.sumVariance = c[7]
        scores.sumCorrectedVariance = c[8]
        scores.sumSpreadCasesErrSq = c[9]
        scores.sumMeanErr = c[10]
        scores.sumMeanAbsErr = c[11]
        scores.sumMeanErrSq = c[12]
        scores.rankLeftOut = Int(c[13])
        scores.rankCounts = ranks
        let width = 3 + 3 * EnsembleEventScores.binCount
        guard flat.count == width * events.count else { return nil }
        for i in events.indices {
            let part = Array(flat[(i * width)..<((i + 1) * width)])
            let bins = EnsembleEventScores.binCount
            events[i].n = Int(part[0])
            events[i].sumFairBrier = part[1]
            events[i].sumBrier = part[2]
            events[i].binCases = part[3..<(3 + bins)].map { Int($0.rounded()) }
            events[i].binForecastSum = Array(part[(3 + bins)..<(3 + 2 * bins)])
            events[i].binEvents = part[(3 + 2 * bins)..<(3 + 3 * bins)].map { Int($0.rounded()) }
        }
    }
}

extension EnsembleScores {
    /// Every count and sum negated.
    public var negated: EnsembleScores {
        var s = self
        s.n = -n
        s.sumMembers = -sumMembers
        s.sumUnder = -sumUnder
        s.sumOver = -sumOver
        s.sumSpreadTerm = -sumSpreadTerm
        s.nSpread = -nSpread
        s.sumFairCRPS = -sumFairCRPS
        s.sumVariance = -sumVariance
        s.sumCorrectedVariance = -sumCorrectedVariance
        s.sumSpreadCasesErrSq = -sumSpreadCasesErrSq
        s.sumMeanErr = -sumMeanErr
        s.sumMeanAbsErr = -sumMeanAbsErr
        s.sumMeanErrSq = -sumMeanErrSq
        s.rankCounts = rankCounts.map { -$0 }
        s.rankLeftOut = -rankLeftOut
        return s
    }
}

extension EnsembleEventScores {
    /// Every count and sum negated.
    public var negated: EnsembleEventScores {
        var e = self
        e.n = -n
        e.sumFairBrier = -sumFairBrier
        e.sumBrier = -sumBrier
        e.binCases = binCases.map { -$0 }
        e.binForecastSum = binForecastSum.map { -$0 }
        e.binEvents = binEvents.map { -$0 }
        return e
    }
}

/// Folds ensemble cases into groups: the lead bucket and the location's local day of each case.
/// An engine feeds it every case a write changes, once as it was (`sign: -1`) and once as it is.
public struct EnsembleSumsFolder: Sendable {
    public let location: Int64
    public let timezone: String
    public private(set) var groups: [EnsembleSumsKey: EnsembleGroupSums] = [:]
    private var days: [Int64: (start: Int64, end: Int64)] = [:]

    /// An empty fold for a location in `timezone`.
    public init(location: Int64, timezone: String) {
        self.location = location
        self.timezone = timezone
    }

    /// The local day holding `instant`.
    public mutating func day(_ instant: Int64) -> (start: Int64, end: Int64) {
        let hour = instant - ((instant % 3600) + 3600) % 3600
        if let day = days[hour] { return day }
        let date = ZoneTime.date(of: instant, timezone: timezone)
        let span = ZoneTime.span(ofDate: date, timezone: timezone) ?? (hour, hour + 3600)
        days[hour] = (span.start, span.end)
        return (span.start, span.end)
    }

    /// Whether a run's hour is a forecast case: at or after the issue time (the hours before are the
    /// run's stitched past) and within a lead bucket.
    public static func bucket(issuedAt: Int64, validTime: Int64) -> LeadBucket? {
        guard validTime >= issuedAt else { return nil }
        return LeadBuckets.bucket(forLeadHours: Double(validTime - issuedAt) / 3600)
    }

    /// Adds one case (members NaN where missing) with `sign` +1, or takes it away with −1.
    public mutating func add(
        model: String, source: String, variable: String, issuedAt: Int64, validTime: Int64, members: [Double],
        observed y: Double, sign: Int = 1
    ) {
        guard y.isFinite, let bucket = Self.bucket(issuedAt: issuedAt, validTime: validTime) else { return }
        let day = day(validTime)
        let key = EnsembleSumsKey(
            location: location, source: source, variable: variable, model: model, dayStart: day.start,
            dayEnd: day.end, leadFrom: bucket.from, leadTo: bucket.to)
        var one = EnsembleGroupSums(variable: variable)
        one.add(members: members, observed: y)
        if sign < 0 { one = one.negated }
        groups[key, default: EnsembleGroupSums(variable: variable)].merge(one)
    }

    /// Adds another fold's groups.
    public mutating func merge(_ other: EnsembleSumsFolder) {
        for (key, group) in other.groups {
            groups[key, default: EnsembleGroupSums(variable: key.variable)].merge(group)
        }
    }

    /// Adds another fold's groups negated (`after − before` is the change a write made).
    public mutating func subtract(_ other: EnsembleSumsFolder) {
        for (key, group) in other.groups {
            groups[key, default: EnsembleGroupSums(variable: key.variable)].merge(group.negated)
        }
    }
}

/// One kept group as read back: its day, lead bucket and sums.
public struct EnsembleDayGroup: Sendable {
    public var dayStart: Int64
    public var dayEnd: Int64
    public var bucket: LeadBucket
    public var sums: EnsembleGroupSums

    /// A group with every field given.
    public init(dayStart: Int64, dayEnd: Int64, bucket: LeadBucket, sums: EnsembleGroupSums) {
        self.dayStart = dayStart
        self.dayEnd = dayEnd
        self.bucket = bucket
        self.sums = sums
    }
}

/// Little-endian binary64 arrays, as the kept rank counts and event bins are stored.
public enum Binary64 {
    /// The values' bytes, 8 a value.
    public static func encode(_ values: [Double]) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.reserveCapacity(values.count * 8)
        for value in values {
            let bits = value.bitPattern
            for k in 0..<8 { bytes.append(UInt8(truncatingIfNeeded: bits >> (8 * k))) }
        }
        return bytes
    }

    /// The values back; nil when the length is not a multiple of 8.
    public static func decode(_ bytes: [UInt8]) -> [Double]? {
        guard bytes.count % 8 == 0 else { return nil }
        return stride(from: 0, to: bytes.count, by: 8).map { i in
            var bits: UInt64 = 0
            for k in 0..<8 { bits |= UInt64(bytes[i + k]) << (8 * k) }
            return Double(bitPattern: bits)
        }
    }
}
