// Ensemble verification scores, kept as sums that add up across cases, lead buckets, days and models.
//
// Definitions follow BoM's `scores` package (nci/scores) wherever it has one, so the numbers can be
// checked against it: `crps_for_ensemble(method="ecdf"|"fair")`, `brier_score_for_ensemble` (fair by
// default) and the rank histogram's tie rule (Hamill 2001). A case is one forecast hour of one run at
// one location: an array of member values (NaN for a missing member) and one observation. Pure
// Swift: no store, no SQL.

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The two CRPS estimators of `scores.crps_for_ensemble`.
public enum CRPSMethod: String, Sendable, CaseIterable {
    /// The exact CRPS of the members' empirical CDF: spread term divided by 2M².
    case ecdf
    /// The fair (unbiased) estimator of Ferro 2014: spread term divided by 2M(M−1); undefined for M = 1.
    case fair
}

/// One case's CRPS and its parts, as `crps_for_ensemble(..., include_components=True)` returns them:
/// `total = underforecast + overforecast − spread`.
public struct CRPSParts: Sendable, Equatable {
    /// mean over members of max(y − xᵢ, 0): the members below the observation.
    public var underforecast: Double
    /// mean over members of max(xᵢ − y, 0): the members above the observation.
    public var overforecast: Double
    /// Σᵢ Σⱼ |xᵢ − xⱼ| / (2K), K = M² (ecdf) or M(M−1) (fair).
    public var spread: Double
    public var total: Double { underforecast + overforecast - spread }
}

/// Per-case ensemble scores; every function ignores missing (non-finite) members and gives nil when
/// the score is undefined (no members, a missing observation, M = 1 for the fair forms).
public enum EnsembleScore {
    /// The finite members, sorted.
    static func present(_ members: [Double]) -> [Double] {
        members.filter(\.isFinite).sorted()
    }

    /// The CRPS of one case with its parts (`scores.crps_for_ensemble`, `include_components=True`).
    public static func crps(members: [Double], observed y: Double, method: CRPSMethod = .ecdf) -> CRPSParts? {
        crps(sorted: present(members), observed: y, method: method)
    }

    static func crps(sorted x: [Double], observed y: Double, method: CRPSMethod) -> CRPSParts? {
        guard y.isFinite, !x.isEmpty else { return nil }
        let m = Double(x.count)
        let k = method == .ecdf ? m * m : m * (m - 1)
        guard k > 0 else { return nil }
        var under = 0.0
        var over = 0.0
        // ΣᵢΣⱼ|xᵢ − xⱼ| = 2 Σᵢ (2i − M − 1) x₍ᵢ₎ over the sorted members (Hersbach 2000), so the
        // spread term costs O(M log M) rather than O(M²).
        var weighted = 0.0
        for (index, value) in x.enumerated() {
            under += max(y - value, 0)
            over += max(value - y, 0)
            weighted += Double(2 * (index + 1) - x.count - 1) * value
        }
        return CRPSParts(underforecast: under / m, overforecast: over / m, spread: weighted / k)
    }

    /// The ensemble mean of the present members.
    public static func mean(members: [Double]) -> Double? {
        let x = members.filter(\.isFinite)
        guard !x.isEmpty else { return nil }
        return x.reduce(0, +) / Double(x.count)
    }

    /// The members' sample variance (divisor M − 1, as WeatherBench2's `EnsembleVariance`); nil below 2.
    public static func variance(members: [Double]) -> Double? {
        let x = members.filter(\.isFinite)
        guard x.count >= 2 else { return nil }
        let mean = x.reduce(0, +) / Double(x.count)
        return x.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(x.count - 1)
    }

    /// The observation's rank among M members as M + 1 bin weights that sum to 1, ties split equally
    /// (Hamill 2001): with `below` members under y and `tied` equal to it, bins below…below+tied get
    /// 1/(tied + 1) each. Nil when any member or the observation is missing: the whole case is left out,
    /// as `scores.rank_histogram` does, since a missing member shifts every rank after it.
    public static func rank(members: [Double], observed y: Double) -> (first: Int, count: Int)? {
        guard y.isFinite, !members.isEmpty, members.allSatisfy(\.isFinite) else { return nil }
        var below = 0
        var tied = 0
        for value in members {
            if value < y {
                below += 1
            } else if value == y {
                tied += 1
            }
        }
        return (below, tied + 1)
    }

    /// The fair Brier score of one case for the event `value >= threshold`
    /// (`scores.brier_score_for_ensemble`, `fair_correction=True`): (i/m − o)² − i(m − i)/(m²(m − 1)),
    /// i the members with the event among m present; the correction is dropped when m = 1.
    public static func fairBrier(members: [Double], observed y: Double, threshold: Double, fair: Bool = true)
        -> Double?
    {
        guard y.isFinite else { return nil }
        let x = members.filter(\.isFinite)
        guard !x.isEmpty else { return nil }
        let m = Double(x.count)
        let i = Double(x.count(where: { $0 >= threshold }))
        let o: Double = y >= threshold ? 1 : 0
        let p = i / m
        let correction = fair && x.count > 1 ? i * (m - i) / (m * m * (m - 1)) : 0
        return (p - o) * (p - o) - correction
    }
}

/// Sums of the continuous ensemble scores over many cases, which add across lead buckets, days and
/// locations (``merge(_:)``); every derived score is nil when it has no cases.
///
/// Spread–skill uses the corrected form SSR = √(mean((M+1)/M · s²)) / RMSE(ensemble mean), s² the
/// members' variance with divisor M − 1, over the cases with M ≥ 2 (Fortin et al. 2014; GenCast's
/// evaluation): a perfectly reliable ensemble of any size scores 1.
public struct EnsembleScores: Sendable, Equatable {
    /// Cases with an observation and at least one member.
    public var n: Int = 0
    /// Σ M over those cases (the mean member count is `sumMembers / n`).
    public var sumMembers: Int = 0
    /// Σ of the ecdf CRPS parts.
    public var sumUnder: Double = 0
    public var sumOver: Double = 0
    public var sumSpreadTerm: Double = 0
    /// Cases with M ≥ 2: the fair CRPS, the spread and the spread–skill ratio are over these.
    public var nSpread: Int = 0
    public var sumFairCRPS: Double = 0
    /// Σ s² and Σ (M+1)/M · s².
    public var sumVariance: Double = 0
    public var sumCorrectedVariance: Double = 0
    /// Σ (ensemble mean − y)² over the M ≥ 2 cases, so the ratio compares like with like.
    public var sumSpreadCasesErrSq: Double = 0
    /// Σ (mean − y), Σ |mean − y|, Σ (mean − y)² over all n cases.
    public var sumMeanErr: Double = 0
    public var sumMeanAbsErr: Double = 0
    public var sumMeanErrSq: Double = 0
    /// Rank histogram weights, M + 1 bins (the array grows to the largest complete ensemble seen).
    public var rankCounts: [Double] = []
    /// Cases left out of the rank histogram because a member was missing.
    public var rankLeftOut: Int = 0

    /// No cases.
    public init() {}

    /// Adds one case: member values (NaN for a missing member) and the observation. A missing
    /// observation or an ensemble with no members adds nothing.
    public mutating func add(members: [Double], observed y: Double) {
        let x = EnsembleScore.present(members)
        guard y.isFinite, let ecdf = EnsembleScore.crps(sorted: x, observed: y, method: .ecdf) else { return }
        let m = Double(x.count)
        n += 1
        sumMembers += x.count
        sumUnder += ecdf.underforecast
        sumOver += ecdf.overforecast
        sumSpreadTerm += ecdf.spread
        let mean = x.reduce(0, +) / m
        let error = mean - y
        sumMeanErr += error
        sumMeanAbsErr += abs(error)
        sumMeanErrSq += error * error
        if x.count >= 2, let fair = EnsembleScore.crps(sorted: x, observed: y, method: .fair) {
            nSpread += 1
            sumFairCRPS += fair.total
            let variance = x.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / (m - 1)
            sumVariance += variance
            sumCorrectedVariance += (m + 1) / m * variance
            sumSpreadCasesErrSq += error * error
        }
        if let rank = EnsembleScore.rank(members: members, observed: y) {
            if rankCounts.count < members.count + 1 {
                rankCounts += Array(repeating: 0, count: members.count + 1 - rankCounts.count)
            }
            for bin in rank.first..<(rank.first + rank.count) { rankCounts[bin] += 1 / Double(rank.count) }
        } else {
            rankLeftOut += 1
        }
    }

    /// Adds another accumulator's cases (the rank histograms must come from ensembles of one size).
    public mutating func merge(_ other: EnsembleScores) {
        n += other.n
        sumMembers += other.sumMembers
        sumUnder += other.sumUnder
        sumOver += other.sumOver
        sumSpreadTerm += other.sumSpreadTerm
        nSpread += other.nSpread
        sumFairCRPS += other.sumFairCRPS
        sumVariance += other.sumVariance
        sumCorrectedVariance += other.sumCorrectedVariance
        sumSpreadCasesErrSq += other.sumSpreadCasesErrSq
        sumMeanErr += other.sumMeanErr
        sumMeanAbsErr += other.sumMeanAbsErr
        sumMeanErrSq += other.sumMeanErrSq
        if rankCounts.count < other.rankCounts.count {
            rankCounts += Array(repeating: 0, count: other.rankCounts.count - rankCounts.count)
        }
        for (bin, weight) in other.rankCounts.enumerated() { rankCounts[bin] += weight }
        rankLeftOut += other.rankLeftOut
    }

    private var count: Double? { n > 0 ? Double(n) : nil }
    private var spreadCount: Double? { nSpread > 0 ? Double(nSpread) : nil }

    /// Mean CRPS of the members' empirical CDF (`method="ecdf"`).
    public var crps: Double? { count.map { (sumUnder + sumOver - sumSpreadTerm) / $0 } }
    /// Mean fair CRPS (`method="fair"`) over the cases with M ≥ 2.
    public var fairCRPS: Double? { spreadCount.map { sumFairCRPS / $0 } }
    /// The mean ecdf CRPS parts: members below the observation, above it, and the spread credited back.
    public var crpsUnderforecast: Double? { count.map { sumUnder / $0 } }
    public var crpsOverforecast: Double? { count.map { sumOver / $0 } }
    public var crpsSpread: Double? { count.map { sumSpreadTerm / $0 } }
    /// The ensemble mean's bias, MAE and RMSE.
    public var meanBias: Double? { count.map { sumMeanErr / $0 } }
    public var meanMAE: Double? { count.map { sumMeanAbsErr / $0 } }
    public var meanRMSE: Double? { count.map { (sumMeanErrSq / $0).squareRoot() } }
    /// The spread: √(mean s²), the root of the mean member variance.
    public var spread: Double? { spreadCount.map { (sumVariance / $0).squareRoot() } }
    /// √(mean((M+1)/M · s²)) / RMSE of the mean over the same cases; nil when the mean is perfect.
    public var spreadSkillRatio: Double? {
        guard nSpread > 0, sumSpreadCasesErrSq > 0 else { return nil }
        return (sumCorrectedVariance / sumSpreadCasesErrSq).squareRoot()
    }
    /// The mean member count.
    public var meanMembers: Double? { count.map { Double(sumMembers) / $0 } }

    /// How far the rank histogram is from flat: Pearson's χ² against equal bins, its degrees of
    /// freedom (bins − 1) and the probability of a χ² at least this large from a flat histogram.
    /// Fractional tie weights are counted as they are. Nil with fewer than two bins or no cases.
    public var rankFlatness: (chiSquare: Double, degrees: Int, pValue: Double)? {
        let total = rankCounts.reduce(0, +)
        guard rankCounts.count >= 2, total > 0 else { return nil }
        let expected = total / Double(rankCounts.count)
        let chi = rankCounts.reduce(0) { $0 + ($1 - expected) * ($1 - expected) / expected }
        let degrees = rankCounts.count - 1
        return (chi, degrees, ChiSquare.survival(chi, degrees: Double(degrees)))
    }
}

/// The fair ensemble Brier score and a reliability table for one event threshold, as sums.
///
/// The reliability table bins each case's member fraction i/m in ten bins of width 0.1 ([0, 0.1),
/// …, [0.9, 1]) and counts cases, the fractions' sum and the events observed per bin, so merging
/// tables adds them.
public struct EnsembleEventScores: Sendable, Equatable {
    /// The event is `value >= threshold`, as `scores`' default `event_threshold_operator` (≥).
    public var threshold: Double
    public var n: Int = 0
    /// Σ fair Brier score (the correction dropped for m = 1).
    public var sumFairBrier: Double = 0
    /// Σ plain Brier score of the member fraction.
    public var sumBrier: Double = 0
    public static let binCount = 10
    public var binCases = [Int](repeating: 0, count: binCount)
    public var binForecastSum = [Double](repeating: 0, count: binCount)
    public var binEvents = [Int](repeating: 0, count: binCount)

    /// No cases for `threshold`.
    public init(threshold: Double) { self.threshold = threshold }

    /// The bin of a member fraction p in [0, 1].
    public static func bin(_ p: Double) -> Int { min(binCount - 1, max(0, Int((p * Double(binCount)).rounded(.down)))) }

    /// Adds one case; a missing observation or no members adds nothing.
    public mutating func add(members: [Double], observed y: Double) {
        guard y.isFinite, let fair = EnsembleScore.fairBrier(members: members, observed: y, threshold: threshold),
            let plain = EnsembleScore.fairBrier(members: members, observed: y, threshold: threshold, fair: false)
        else { return }
        let x = members.filter(\.isFinite)
        let p = Double(x.count(where: { $0 >= threshold })) / Double(x.count)
        n += 1
        sumFairBrier += fair
        sumBrier += plain
        let bin = Self.bin(p)
        binCases[bin] += 1
        binForecastSum[bin] += p
        if y >= threshold { binEvents[bin] += 1 }
    }

    /// Adds another table of the same threshold.
    public mutating func merge(_ other: EnsembleEventScores) {
        n += other.n
        sumFairBrier += other.sumFairBrier
        sumBrier += other.sumBrier
        for bin in 0..<Self.binCount {
            binCases[bin] += other.binCases[bin]
            binForecastSum[bin] += other.binForecastSum[bin]
            binEvents[bin] += other.binEvents[bin]
        }
    }

    /// Mean fair Brier score.
    public var fairBrier: Double? { n > 0 ? sumFairBrier / Double(n) : nil }
    /// Mean Brier score of the raw member fraction.
    public var brier: Double? { n > 0 ? sumBrier / Double(n) : nil }

    /// The reliability table's rows: bins with cases, their mean forecast fraction and observed frequency.
    public var reliability: [(bin: Int, cases: Int, meanForecast: Double, observedFrequency: Double)] {
        (0..<Self.binCount).compactMap { bin in
            let cases = binCases[bin]
            guard cases > 0 else { return nil }
            return (bin, cases, binForecastSum[bin] / Double(cases), Double(binEvents[bin]) / Double(cases))
        }
    }
}

/// The χ² distribution's upper tail, for the rank histogram's test of flatness.
public enum ChiSquare {
    /// P(X ≥ x) for X ~ χ²(degrees): the regularized upper incomplete gamma Q(k/2, x/2).
    public static func survival(_ x: Double, degrees k: Double) -> Double {
        guard x > 0 else { return 1 }
        return IncompleteGamma.upper(a: k / 2, x: x / 2)
    }
}

/// The regularized incomplete gamma functions (Numerical Recipes §6.2: a series below a + 1, Lentz's
/// continued fraction above it).
enum IncompleteGamma {
    static func upper(a: Double, x: Double) -> Double {
        guard x > 0 else { return 1 }
        if x < a + 1 { return 1 - lowerSeries(a: a, x: x) }
        return upperFraction(a: a, x: x)
    }

    private static func lowerSeries(a: Double, x: Double) -> Double {
        var term = 1 / a
        var sum = term
        var ap = a
        for _ in 0..<10_000 {
            ap += 1
            term *= x / ap
            sum += term
            if abs(term) < abs(sum) * 1e-16 { break }
        }
        return sum * exp(-x + a * log(x) - lgamma(a))
    }

    private static func upperFraction(a: Double, x: Double) -> Double {
        let tiny = 1e-300
        var b = x + 1 - a
        var c = 1 / tiny
        var d = 1 / b
        var h = d
        for i in 1..<10_000 {
            let an = -Double(i) * (Double(i) - a)
            b += 2
            d = an * d + b
            if abs(d) < tiny { d = tiny }
            c = b + an / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let delta = d * c
            h *= delta
            if abs(delta - 1) < 1e-16 { break }
        }
        return exp(-x + a * log(x) - lgamma(a)) * h
    }
}
