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

/// The sums one row of `verification_summaries` holds: every stored score's, each present or absent
/// as a whole (a variable without an event has no contingency table). To store another score's
/// sums, conform it to `StoredSums`, add it to `kinds` and add its columns with a migration.
public struct SummarySums: Sendable, Equatable {
    /// The scores kept, in column order.
    public static let kinds: [any StoredSums.Type] = [ContinuousScores.self, Contingency.self, BrierScore.self]
    /// Every sum column, in order.
    public static let columns: [SumColumn] = kinds.flatMap { $0.sumColumns }

    public var continuous = ContinuousScores()
    public var contingency: Contingency?
    public var brier: BrierScore?

    public init(
        continuous: ContinuousScores = ContinuousScores(), contingency: Contingency? = nil, brier: BrierScore? = nil
    ) {
        self.continuous = continuous
        self.contingency = contingency
        self.brier = brier
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
    }

    /// One value per column of `columns`; nil for the columns of an absent score.
    public var values: [Double?] {
        let parts: [(any StoredSums)?] = [continuous, contingency, brier]
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
    }
}
