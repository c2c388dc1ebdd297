import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The Diebold-Mariano test of equal forecast accuracy with the small-sample correction of
/// Harvey, Leybourne and Newbold (1997), as BoM's `scores` computes it (method "HLN", Student's t
/// with n − 1 degrees of freedom).
///
/// The input is a series of loss differences `d_t = loss_A(t) − loss_B(t)` in time order. Errors of
/// h-step-ahead forecasts are autocorrelated up to lag h − 1, so the variance of the mean sums the
/// autocovariances up to that lag instead of assuming independent hours.
public struct DieboldMariano: Sendable, Equatable {
    /// Number of loss differences.
    public var n: Int
    /// The forecast horizon in steps of the series, as asked for.
    public var horizon: Int
    /// The horizon the statistic was computed with: `horizon`, or 1 when the variance estimate at
    /// `horizon` was not positive (as R's `forecast::dm.test` does); nil when there is no statistic.
    public var horizonUsed: Int?
    /// Mean loss difference, A − B: negative when A has the smaller loss.
    public var meanDifference: Double
    /// The corrected statistic; nil when it cannot be computed (all differences zero, a variance
    /// estimate that is not positive, or too short a series for the horizon).
    public var statistic: Double?
    /// Two-sided p-value of "no difference in accuracy".
    public var pValue: Double?
    /// The confidence interval of the mean difference at `confidence`.
    public var confidenceInterval: (low: Double, high: Double)?
    public var confidence: Double

    public static func == (a: Self, b: Self) -> Bool {
        a.n == b.n && a.horizon == b.horizon && a.horizonUsed == b.horizonUsed && a.meanDifference == b.meanDifference
            && a.statistic == b.statistic
            && a.pValue == b.pValue && a.confidenceInterval?.low == b.confidenceInterval?.low
            && a.confidenceInterval?.high == b.confidenceInterval?.high && a.confidence == b.confidence
    }

    /// Tests `differences` (time-ordered, no missing values) of `horizon`-step-ahead forecasts.
    public init(differences d: [Double], horizon h: Int, confidence: Double = 0.95) {
        n = d.count
        horizon = h
        self.confidence = confidence
        meanDifference = d.isEmpty ? .nan : d.reduce(0, +) / Double(d.count)
        // The test needs 0 < h < n, and at least one non-zero difference.
        guard h > 0, h < n, d.contains(where: { $0 != 0 }) else { return }
        guard
            let (stat, standardError, used) = Self.statistic(d, mean: meanDifference, horizon: h)
                ?? (h > 1 ? Self.statistic(d, mean: meanDifference, horizon: 1) : nil)
        else { return }
        statistic = stat
        horizonUsed = used
        let nd = Double(n)
        let degrees = nd - 1
        pValue = 2 * StudentT.survival(abs(stat), degrees: degrees)
        let q = StudentT.quantile(1 - (1 - confidence) / 2, degrees: degrees)
        confidenceInterval = (meanDifference - q * standardError, meanDifference + q * standardError)
    }

    /// The HLN statistic and the standard error of the mean at horizon `h`; nil when the
    /// variance estimate is not positive.
    static func statistic(_ d: [Double], mean: Double, horizon h: Int) -> (Double, Double, Int)? {
        let n = d.count
        let nd = Double(n)
        // Harvey et al. (1997), equation (5): (γ0 + 2 Σ_{k=1}^{h−1} γk) / n², γk = Σ (d_t − d̄)(d_{t−k} − d̄).
        var sum = 0.0
        for k in 0..<h {
            var gamma = 0.0
            for t in k..<n { gamma += (d[t] - mean) * (d[t - k] - mean) }
            sum += k == 0 ? gamma : 2 * gamma
        }
        let variance = sum / (nd * nd)
        guard variance > 0, variance.isFinite else { return nil }
        // Equation (9): the small-sample correction.
        let hd = Double(h)
        let corrected: Double = nd + 1 - 2 * hd + hd * (hd - 1) / nd
        let correction = (corrected / nd).squareRoot()
        guard correction.isFinite, correction > 0 else { return nil }
        let standardError = variance.squareRoot() / correction
        return (mean / standardError, standardError, h)
    }
}

/// Student's t distribution, for the Diebold-Mariano test.
public enum StudentT {
    /// P(T ≤ t) with `degrees` degrees of freedom.
    public static func cdf(_ t: Double, degrees: Double) -> Double {
        t >= 0 ? 1 - survival(t, degrees: degrees) : survival(-t, degrees: degrees)
    }

    /// P(T > t) for t ≥ 0, computed directly so tiny p-values keep their precision.
    public static func survival(_ t: Double, degrees v: Double) -> Double {
        guard t.isFinite else { return t > 0 ? 0 : 1 }
        return 0.5 * IncompleteBeta.regularized(x: v / (v + t * t), a: v / 2, b: 0.5)
    }

    /// The t with P(T ≤ t) = p, for 0 < p < 1, found by bisection on the CDF (monotone, so it
    /// converges to the last bit).
    public static func quantile(_ p: Double, degrees: Double) -> Double {
        precondition(p > 0 && p < 1, "quantile needs 0 < p < 1")
        if p == 0.5 { return 0 }
        if p < 0.5 { return -quantile(1 - p, degrees: degrees) }
        var low = 0.0
        var high = 1.0
        while cdf(high, degrees: degrees) < p { high *= 2 }
        for _ in 0..<200 {
            let mid = (low + high) / 2
            if mid == low || mid == high { break }
            if cdf(mid, degrees: degrees) < p { low = mid } else { high = mid }
        }
        return (low + high) / 2
    }
}

/// The regularized incomplete beta function I_x(a, b), by Lentz's continued fraction.
enum IncompleteBeta {
    static func regularized(x: Double, a: Double, b: Double) -> Double {
        if x <= 0 { return 0 }
        if x >= 1 { return 1 }
        let logBeta: Double = lgamma(a + b) - lgamma(a) - lgamma(b)
        let logPowers: Double = a * log(x) + b * log(1 - x)
        let front = exp(logBeta + logPowers)
        // The continued fraction converges fast for x < (a + 1) / (a + b + 2); use the symmetry otherwise.
        if x < (a + 1) / (a + b + 2) { return front * fraction(x: x, a: a, b: b) / a }
        return 1 - front * fraction(x: 1 - x, a: b, b: a) / b
    }

    private static func fraction(x: Double, a: Double, b: Double) -> Double {
        let tiny = 1e-300
        var c = 1.0
        var d = 1 - (a + b) * x / (a + 1)
        if abs(d) < tiny { d = tiny }
        d = 1 / d
        var h = d
        for m in 1...10_000 {
            let m = Double(m)
            let evenDenominator: Double = (a + 2 * m - 1) * (a + 2 * m)
            let even: Double = m * (b - m) * x / evenDenominator
            d = 1 + even * d
            if abs(d) < tiny { d = tiny }
            c = 1 + even / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            h *= d * c
            let oddDenominator: Double = (a + 2 * m) * (a + 2 * m + 1)
            let odd: Double = -(a + m) * (a + b + m) * x / oddDenominator
            d = 1 + odd * d
            if abs(d) < tiny { d = tiny }
            c = 1 + odd / c
            if abs(c) < tiny { c = tiny }
            d = 1 / d
            let step = d * c
            h *= step
            if abs(step - 1) < 1e-16 { break }
        }
        return h
    }
}

/// The Flip-Flop Index of Griffiths et al. (2019): how much successive forecasts for one target
/// change their mind, beyond the net change from first to last extreme.
public enum FlipFlop {
    /// `(Σ|x(i+1) − x(i)| − (max x − min x)) / (N − 2)` over forecasts in issue order; nil for
    /// fewer than three. With `angular`, differences go the short way round the compass and the
    /// range is the smallest sector holding every direction (at most 180°), as `scores` does.
    public static func index(_ x: [Double], angular: Bool = false) -> Double? {
        guard x.count >= 3 else { return nil }
        var travelled = 0.0
        for i in 1..<x.count {
            travelled += angular ? angularDistance(x[i], x[i - 1]) : abs(x[i] - x[i - 1])
        }
        let range = angular ? min(180, sectorSize(x)) : x.max()! - x.min()!
        return (travelled - range) / Double(x.count - 2)
    }

    /// The smaller angle between two directions in degrees, in [0, 180].
    static func angularDistance(_ a: Double, _ b: Double) -> Double {
        let d = abs(a - b).truncatingRemainder(dividingBy: 360)
        return d > 180 ? 360 - d : d
    }

    /// The smallest sector that holds every direction: 360° less the widest gap between neighbours.
    static func sectorSize(_ x: [Double]) -> Double {
        let sorted = x.map {
            let r = $0.truncatingRemainder(dividingBy: 360)
            return r < 0 ? r + 360 : r
        }.sorted()
        var widest = sorted[0] + 360 - sorted[sorted.count - 1]
        for i in 1..<sorted.count { widest = max(widest, sorted[i] - sorted[i - 1]) }
        return 360 - widest
    }
}

/// Median and other order statistics of a sample, as numpy's default (linear) interpolation.
enum Quantiles {
    static func quantile(_ sorted: [Double], _ q: Double) -> Double? {
        guard !sorted.isEmpty else { return nil }
        let position = q * Double(sorted.count - 1)
        let lower = Int(position.rounded(.down))
        let upper = min(lower + 1, sorted.count - 1)
        let fraction = position - Double(lower)
        return sorted[lower] + (sorted[upper] - sorted[lower]) * fraction
    }
}
