/// One partial sum a score keeps, as a column of the `verification_summaries` table.
public struct SumColumn: Sendable, Equatable {
    /// The column name.
    public let name: String
    /// A count (stored as INTEGER) rather than a sum of reals.
    public let isCount: Bool

    public init(_ name: String, count: Bool = false) {
        self.name = name
        self.isCount = count
    }
}

/// A score kept as partial sums that add up, so groups merge (and are stored by `wxdb prune`)
/// without the pairs. A type declares its sums once, here; the summary table's columns, prune's
/// upsert and verify's read of pruned periods all follow from `sumColumns`.
public protocol StoredSums: Sendable {
    /// The sums' columns, in `sums` order.
    static var sumColumns: [SumColumn] { get }
    /// The sums, in `sumColumns` order (counts as whole numbers).
    var sums: [Double] { get }
    /// The accumulator holding `sums` (in `sumColumns` order).
    init(sums: ArraySlice<Double>)
}

extension ContinuousScores: StoredSums {
    public static let sumColumns = [
        SumColumn("n", count: true), SumColumn("sum_f"), SumColumn("sum_o"), SumColumn("sum_ff"), SumColumn("sum_oo"),
        SumColumn("sum_fo"), SumColumn("sum_abs_err"), SumColumn("sum_err"), SumColumn("sum_err_sq")
    ]
    public var sums: [Double] { [Double(n), sumF, sumO, sumFF, sumOO, sumFO, sumAbsErr, sumErr, sumErrSq] }
    public init(sums s: ArraySlice<Double>) {
        let s = Array(s)
        self.init(
            n: Int(s[0]), sumF: s[1], sumO: s[2], sumFF: s[3], sumOO: s[4], sumFO: s[5], sumAbsErr: s[6], sumErr: s[7],
            sumErrSq: s[8])
    }
}

extension Contingency: StoredSums {
    public static let sumColumns = [
        SumColumn("hits", count: true), SumColumn("false_alarms", count: true), SumColumn("misses", count: true),
        SumColumn("correct_negatives", count: true)
    ]
    public var sums: [Double] { [Double(a), Double(b), Double(c), Double(d)] }
    public init(sums s: ArraySlice<Double>) {
        let s = Array(s)
        self.init(a: Int(s[0]), b: Int(s[1]), c: Int(s[2]), d: Int(s[3]))
    }
}

extension BrierScore: StoredSums {
    public static let sumColumns = [
        SumColumn("brier_n", count: true), SumColumn("brier_sum"), SumColumn("brier_events", count: true)
    ]
    public var sums: [Double] { [Double(n), sumSquaredError, Double(occurrences)] }
    public init(sums s: ArraySlice<Double>) {
        let s = Array(s)
        self.init(n: Int(s[0]), sumSquaredError: s[1], occurrences: Int(s[2]))
    }
}

/// The persistence reference's sums (the skill score's): how many pairs had a reference, and the
/// forecast's and persistence's sums of squared errors over those pairs. Only squared errors are
/// kept: the skill score and persistence RMSE need nothing else, and an affine change of unit
/// scales both by the same factor.
public struct PersistenceSums: Sendable, Equatable {
    public var n: Int
    public var forecastSumErrSq: Double
    public var persistenceSumErrSq: Double

    public init(n: Int = 0, forecastSumErrSq: Double = 0, persistenceSumErrSq: Double = 0) {
        self.n = n
        self.forecastSumErrSq = forecastSumErrSq
        self.persistenceSumErrSq = persistenceSumErrSq
    }

    /// Adds one pair's forecast and persistence errors.
    public mutating func add(forecastError: Double, persistenceError: Double) {
        guard forecastError.isFinite, persistenceError.isFinite else { return }
        n += 1
        forecastSumErrSq += forecastError * forecastError
        persistenceSumErrSq += persistenceError * persistenceError
    }

    public mutating func merge(_ other: PersistenceSums) {
        n += other.n
        forecastSumErrSq += other.forecastSumErrSq
        persistenceSumErrSq += other.persistenceSumErrSq
    }

    /// Persistence's RMSE; nil without pairs.
    public var persistenceRMSE: Double? { n > 0 ? (persistenceSumErrSq / Double(n)).squareRoot() : nil }

    /// MSE skill score of the forecast against persistence over the same pairs.
    public var skill: Double? {
        guard n > 0 else { return nil }
        return SkillScore.mse(forecastMSE: forecastSumErrSq / Double(n), referenceMSE: persistenceSumErrSq / Double(n))
    }
}

extension PersistenceSums: StoredSums {
    public static let sumColumns = [
        SumColumn("persistence_n", count: true), SumColumn("forecast_sum_err_sq_ref"),
        SumColumn("persistence_sum_err_sq")
    ]
    public var sums: [Double] { [Double(n), forecastSumErrSq, persistenceSumErrSq] }
    public init(sums s: ArraySlice<Double>) {
        let s = Array(s)
        self.init(n: Int(s[0]), forecastSumErrSq: s[1], persistenceSumErrSq: s[2])
    }
}

/// The sums one row of `verification_summaries` holds: every stored score's, each present or absent
/// as a whole (a variable without an event has no contingency table). To store another score's
/// sums, conform it to `StoredSums`, add it to `kinds` and add its columns with a migration.
public struct SummarySums: Sendable, Equatable {
    /// The scores kept, in column order.
    public static let kinds: [any StoredSums.Type] = [
        ContinuousScores.self, Contingency.self, BrierScore.self, PersistenceSums.self
    ]
    /// Every sum column, in order.
    public static let columns: [SumColumn] = kinds.flatMap { $0.sumColumns }

    public var continuous = ContinuousScores()
    public var contingency: Contingency?
    public var brier: BrierScore?
    /// The persistence reference's sums; absent for a probability, and in what prune kept before
    /// migration 0010.
    public var persistence: PersistenceSums?

    public init(
        continuous: ContinuousScores = ContinuousScores(), contingency: Contingency? = nil, brier: BrierScore? = nil,
        persistence: PersistenceSums? = nil
    ) {
        self.continuous = continuous
        self.contingency = contingency
        self.brier = brier
        self.persistence = persistence
    }

    /// Adds another group's sums; a score `other` has is created here when absent.
    public mutating func merge(_ other: SummarySums) {
        continuous.merge(other.continuous)
        if let table = other.contingency {
            contingency = contingency ?? Contingency()
            contingency?.merge(table)
        }
        if let score = other.brier {
            brier = brier ?? BrierScore()
            brier?.merge(score)
        }
        if let sums = other.persistence {
            persistence = persistence ?? PersistenceSums()
            persistence?.merge(sums)
        }
    }

    /// One value per column of `columns`; nil for the columns of an absent score.
    public var values: [Double?] {
        let parts: [(any StoredSums)?] = [continuous, contingency, brier, persistence]
        return zip(Self.kinds, parts).flatMap { kind, part in
            part.map { $0.sums.map(Optional.some) } ?? Array(repeating: nil, count: kind.sumColumns.count)
        }
    }

    /// The sums of a stored row (one value per column of `columns`); a score whose first column is
    /// NULL is absent.
    public init(values: [Double?]) {
        var offset = 0
        func next<S: StoredSums>(_ kind: S.Type) -> S? {
            let slice = values[offset..<offset + kind.sumColumns.count]
            offset += kind.sumColumns.count
            guard let first = slice.first, first != nil else { return nil }
            return S(sums: ArraySlice(slice.map { $0 ?? 0 }))
        }
        self.continuous = next(ContinuousScores.self) ?? ContinuousScores()
        self.contingency = next(Contingency.self)
        self.brier = next(BrierScore.self)
        self.persistence = next(PersistenceSums.self)
    }

    /// Adds one forecast/observation pair given in stored (metric) units, scored in `units`: a
    /// probability against the other variable's observation reaching `threshold` (Brier), a
    /// direction the short way round, the 2×2 table for a variable with an event (on the stored
    /// values, as `threshold` is metric), and the persistence reference (the observation at the
    /// issue time) when there is one. The one scoring of a pair: the kept sums add pairs with it
    /// when they are written (metric), and `query verify` when it scores pairs it reads.
    public mutating func add(
        forecast rawForecast: Double, observed rawObserved: Double, reference rawReference: Double?,
        variable: Variable, threshold: Double, units: UnitSystem = .metric
    ) {
        // A value no weather can have (stored before the doors refused it) is no pair: scores and
        // sums stay finite whatever the rows hold.
        guard PhysicalRange.contains(rawForecast, variable),
            PhysicalRange.contains(rawObserved, variable.observedVariable)
        else { return }
        let rawReference = rawReference.flatMap { PhysicalRange.check($0, variable) }
        if variable.isProbability {
            let occurred = rawObserved >= threshold
            continuous.add(forecast: rawForecast, observed: occurred ? 100 : 0)
            brier = brier ?? BrierScore()
            brier?.add(probabilityPercent: rawForecast, occurred: occurred)
            return
        }
        let quantity = variable.quantity
        let observed = units.convert(rawObserved, quantity)
        let error = Self.difference(units.convert(rawForecast, quantity), observed, variable)
        continuous.add(forecast: observed + error, observed: observed)
        if let rawReference {
            persistence = persistence ?? PersistenceSums()
            persistence?.add(
                forecastError: error,
                persistenceError: Self.difference(units.convert(rawReference, quantity), observed, variable))
        }
        if variable.hasEvent {
            contingency = contingency ?? Contingency()
            contingency?.add(forecast: rawForecast, observed: rawObserved, threshold: threshold)
        }
    }

    /// `a − b`; for a direction the short way round (350° against 10° is 20° off, not 340°).
    public static func difference(_ a: Double, _ b: Double, _ variable: Variable) -> Double {
        guard variable.verification == .circular else { return a - b }
        let d = (a - b).truncatingRemainder(dividingBy: 360)
        if d >= 180 { return d - 360 }
        if d < -180 { return d + 360 }
        return d
    }

    /// The same sums after an affine change of unit `x' = scale·x + offset` (what imperial display
    /// is): differences scale by `scale`, squared differences by its square.
    public func affine(scale: Double, offset: Double) -> SummarySums {
        var copy = self
        copy.continuous = continuous.affine(scale: scale, offset: offset)
        if let p = persistence {
            copy.persistence = PersistenceSums(
                n: p.n, forecastSumErrSq: scale * scale * p.forecastSumErrSq,
                persistenceSumErrSq: scale * scale * p.persistenceSumErrSq)
        }
        return copy
    }
}
