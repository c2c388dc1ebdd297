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
    /// False when the differences do not vary beyond rounding noise (identical models, a constant
    /// offset): then there is no statistic, whatever the number of days.
    public var differencesVary = false

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
        // The test needs 0 < h < n, and differences that vary: a constant difference leaves only
        // rounding noise in the variance, which would give a statistic of 1e16.
        differencesVary = Self.vary(d, mean: meanDifference)
        guard h > 0, h < n, differencesVary else { return }
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

    /// Whether the differences vary by more than rounding noise (false for identical models).
    static func vary(_ d: [Double], mean: Double) -> Bool {
        var centred = 0.0, squares = 0.0
        for x in d {
            centred += (x - mean) * (x - mean)
            squares += x * x
        }
        return centred > 0 && centred > 1e-24 * squares
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

/// One day of matched loss differences: the sum of `A − B` over the day's matched hours, and how many.
public struct DailyDifference: Sendable, Equatable {
    /// The day's index (days since the epoch, UTC).
    public var day: Int64
    public var sum: Double
    public var hours: Int

    public init(day: Int64, sum: Double, hours: Int) {
        self.day = day
        self.sum = sum
        self.hours = hours
    }
}

/// A test of "no difference in accuracy" whose size holds when daily errors persist for days
/// (weather regimes), `wxdb query compare`'s default.
///
/// The difference tested is the one the MAE columns show: `Σ sum / Σ hours` over the days, A's MAE
/// minus B's on the matched hours. Its variance is a heteroskedasticity and autocorrelation
/// consistent (HAC) estimate over days: the days' deviations `u = sum − θ·hours` are placed on the
/// calendar (a missing day is a zero, a gap, never its neighbours' neighbour) and projected on the
/// first K cosines of the span, the equal-weighted cosine (EWC) long-run variance of Lazarus, Lewis,
/// Stock and Watson (2018); the statistic is then Student's t with K degrees of freedom
/// (fixed-smoothing), which keeps the size near nominal at 50–120 days where Newey–West with
/// normal critical values does not. K comes from the data: an AR(1) fit to the days (bias-corrected
/// for the short series) sets it so the estimate's leading bias stays near 10%, fewer cosines the
/// longer the errors persist, between 4 and half the span; the variance is then divided by the share
/// of it those K cosines catch under that AR(1) (``captured(span:days:cosines:autocorrelation:)``),
/// which a short record of persistent errors needs even at 4 cosines.
public struct DailyDifferenceTest: Sendable, Equatable {
    /// Days with matched hours, and the calendar span from the first to the last.
    public var days: Int
    public var span: Int
    /// Matched hours.
    public var hours: Int
    /// Mean loss difference per matched hour, A − B (MAE A − MAE B): negative when A did better.
    public var meanDifference: Double
    /// The day-to-day autocorrelation of the deviations, as estimated (before the small-sample correction).
    public var autocorrelation: Double?
    /// The cosines used, which are the t distribution's degrees of freedom; nil without a test.
    public var degrees: Int?
    public var standardError: Double?
    public var statistic: Double?
    /// Two-sided p-value of "no difference in accuracy".
    public var pValue: Double?
    public var confidenceInterval: (low: Double, high: Double)?
    public var confidence: Double
    /// Why there is no test, when there is none.
    public var untested: Untested?

    /// Why a series cannot be tested.
    public enum Untested: Sendable, Equatable {
        /// Fewer days than `DailyDifferenceTest.minimumDays`.
        case tooFewDays
        /// The daily differences do not vary (identical models, or a constant offset): there is
        /// nothing to estimate a variance from, whatever the number of days.
        case noVariance
    }

    /// The fewest days with matched hours a test runs on (4 cosines need a span of 8 days).
    public static let minimumDays = 8

    public static func == (a: Self, b: Self) -> Bool {
        a.days == b.days && a.span == b.span && a.hours == b.hours && a.meanDifference == b.meanDifference
            && a.degrees == b.degrees && a.statistic == b.statistic && a.pValue == b.pValue
            && a.confidenceInterval?.low == b.confidenceInterval?.low
            && a.confidenceInterval?.high == b.confidenceInterval?.high && a.untested == b.untested
    }

    /// Tests `daily` (sorted by day, one entry per day, days without matched hours left out or with 0 hours).
    public init(daily input: [DailyDifference], confidence: Double = 0.95) {
        let daily = input.filter { $0.hours > 0 }
        self.confidence = confidence
        days = daily.count
        hours = daily.reduce(0) { $0 + $1.hours }
        span = daily.isEmpty ? 0 : Int(daily[daily.count - 1].day - daily[0].day) + 1
        let total = daily.reduce(0.0) { $0 + $1.sum }
        meanDifference = hours > 0 ? total / Double(hours) : .nan
        guard days >= Self.minimumDays else {
            untested = .tooFewDays
            return
        }
        let theta = meanDifference
        // Deviations on the calendar: zero on a day without matched hours.
        var u = [Double](repeating: 0, count: span)
        var present = [Bool](repeating: false, count: span)
        var squares = 0.0, scale = 0.0
        for day in daily {
            let t = Int(day.day - daily[0].day)
            u[t] = day.sum - theta * Double(day.hours)
            present[t] = true
            squares += u[t] * u[t]
            scale += day.sum * day.sum
        }
        // A constant per-hour difference leaves only rounding noise in u.
        guard squares > 1e-24 * scale, squares > 0 else {
            untested = .noVariance
            return
        }
        var lagged = 0.0, pairs = 0
        for t in 1..<span where present[t] && present[t - 1] {
            lagged += u[t] * u[t - 1]
            pairs += 1
        }
        let rho = pairs > 0 ? (lagged / Double(pairs)) / (squares / Double(days)) : 0
        autocorrelation = rho
        let k = Self.cosines(span: span, days: days, autocorrelation: rho)
        var omega = 0.0
        let t0 = Double(span)
        for j in 1...k {
            var projection = 0.0
            let step = Double.pi * Double(j) / t0
            for t in 0..<span where present[t] { projection += cos(step * (Double(t) + 0.5)) * u[t] }
            projection *= (2 / t0).squareRoot()
            omega += projection * projection
        }
        omega /= Double(k)
        omega /= Self.captured(span: span, days: days, cosines: k, autocorrelation: rho)
        let se = (t0 * omega).squareRoot() / Double(hours)
        guard se > 0, se.isFinite else {
            untested = .noVariance
            return
        }
        degrees = k
        standardError = se
        let stat = theta / se
        statistic = stat
        pValue = 2 * StudentT.survival(abs(stat), degrees: Double(k))
        let q = StudentT.quantile(1 - (1 - confidence) / 2, degrees: Double(k))
        confidenceInterval = (theta - q * se, theta + q * se)
    }

    /// The number of cosines for a span: the most that keep the leading bias of the variance
    /// estimate, π²K²ω / (6T²) with ω = 2ρ / (1 − ρ)² for AR(1) days, at about 10%, between 4 and
    /// half the span (and of the days present). ρ is first corrected for its downward bias in
    /// short series (Kendall: + (1 + 3ρ) / n).
    static func cosines(span: Int, days: Int, autocorrelation rho: Double) -> Int {
        let upper = max(4, min(span, days) / 2)
        let r = Self.corrected(rho, days: days)
        let omega = 2 * r / ((1 - r) * (1 - r))
        guard omega > 0 else { return upper }
        let k = Double(span) * (0.6 / (Double.pi * Double.pi * omega)).squareRoot()
        return min(upper, max(4, Int(k.rounded(.down))))
    }

    /// The lag-1 autocorrelation clipped to 0…0.97 and corrected for its downward bias in a short
    /// series (Kendall: + (1 + 3ρ) / n).
    static func corrected(_ rho: Double, days: Int) -> Double {
        let clipped = min(max(rho, 0), 0.97)
        return min(0.97, clipped + (1 + 3 * clipped) / Double(days))
    }

    /// The share of the long-run variance the K cosines catch on average when the days are AR(1):
    /// the mean over their frequencies λⱼ = πj / T of the AR(1) spectrum relative to its value at
    /// zero, (1 − ρ)² / (1 − 2ρ cos λⱼ + ρ²), with ρ corrected as for the number of cosines. Persistent
    /// errors put most of their variance at the lowest frequencies, so in a short record even 4 cosines
    /// sit on the slope of the spectrum and understate it (by about 12% at 52 days of errors persisting
    /// 5 days): dividing by the share removes that leading bias, so the t's size holds where the few
    /// cosines estimate the persistence low.
    static func captured(span: Int, days: Int, cosines k: Int, autocorrelation rho: Double) -> Double {
        let r = Self.corrected(rho, days: days)
        var share = 0.0
        for j in 1...k {
            let lambda = Double.pi * Double(j) / Double(span)
            share += (1 - r) * (1 - r) / (1 - 2 * r * cos(lambda) + r * r)
        }
        return share / Double(k)
    }
}

/// Holm's step-down adjustment: one verdict over a family of tests whose chance of any false
/// rejection stays at the level, whatever the dependence between them (lead buckets share days).
public enum Holm {
    /// The adjusted p-values, in the order given; nil stays nil (not part of the family).
    public static func adjusted(_ p: [Double?]) -> [Double?] {
        let tested = p.enumerated().compactMap { index, value in value.map { (index, $0) } }
            .sorted { $0.1 < $1.1 }
        var out = [Double?](repeating: nil, count: p.count)
        var running = 0.0
        for (rank, (index, value)) in tested.enumerated() {
            running = max(running, min(1, Double(tested.count - rank) * value))
            out[index] = running
        }
        return out
    }
}

/// One verdict over lead buckets that share days, by the buckets' joint distribution instead of
/// Holm's worst case: a step-down max-t (Westfall and Young's min-p, in the form of Romano and
/// Wolf, 2005). Under "no difference anywhere" each bucket's HAC statistic is t = Z₀ / √(Σ Zₖ² / K)
/// with Z₀ … Z_K its mean and its K cosine projections, each a normal vector across buckets with the
/// buckets' long-run correlation R; so draws of those vectors give the joint law of every bucket's
/// own p-value, and a bucket's adjusted p is the chance that the smallest p among it and the buckets
/// less significant than it falls that low (monotone over the steps). Each bucket's own test is
/// unchanged (its marginal is its t with K degrees of freedom); where the buckets' errors move
/// together, as the leads of one model's runs do, the joint verdict loses much less than Holm; where
/// they are independent it is Šidák's, which Holm is never better than by more than rounding.
///
/// R is estimated from the buckets' daily deviations on one calendar, projected on its first
/// k = span / 2 cosines (nearer the short-run correlation than the long-run one, which, when shared
/// weather persists longer than each lead's own noise, is higher), and shrunk towards independence
/// by m / (m + k) for its estimation noise. Underestimating a positive correlation only moves the
/// verdict towards Holm's caution.
public enum JointDifferenceTest {
    /// Draws of the joint law: the adjusted p's Monte Carlo error at 0.05 is about 0.005.
    public static let defaultDraws = 2000
    /// Fixed, so the same command gives the same verdict.
    static let seed: UInt64 = 0x6A6F_696E_7421

    /// The adjusted p-values of the buckets' tests (`tests[b]`: its own p and degrees of freedom, nil
    /// when untested; nil stays nil), given each bucket's days and tested mean difference per hour.
    public static func adjusted(
        daily: [[DailyDifference]], tests: [(pValue: Double, meanDifference: Double, degrees: Int)?],
        draws: Int = defaultDraws
    ) -> [Double?] {
        let tested = tests.indices.filter { tests[$0] != nil }
        var out = [Double?](repeating: nil, count: tests.count)
        guard !tested.isEmpty else { return out }
        let correlation = longRunCorrelation(
            daily: tested.map { daily[$0] }, means: tested.map { tests[$0]!.meanDifference })
        let p = stepDown(
            pValues: tested.map { tests[$0]!.pValue }, degrees: tested.map { tests[$0]!.degrees },
            correlation: correlation, draws: draws, seed: seed)
        for (index, bucket) in tested.enumerated() { out[bucket] = p[index] }
        return out
    }

    /// The buckets' correlation: each one's deviations `sum − θ·hours` on the calendar from the first
    /// day of any bucket to the last (zero on a day it lacks), projected on the first span / 2 cosines.
    static func longRunCorrelation(daily: [[DailyDifference]], means: [Double]) -> [[Double]] {
        let m = daily.count
        let first = daily.compactMap { $0.first?.day }.min() ?? 0
        let last = daily.compactMap { $0.last?.day }.max() ?? 0
        let span = Int(last - first) + 1
        var occupied = Set<Int64>()
        for days in daily { for day in days where day.hours > 0 { occupied.insert(day.day) } }
        let k = max(1, min(span, occupied.count) / 2)
        var u = [[Double]](repeating: [Double](repeating: 0, count: span), count: m)
        for (b, days) in daily.enumerated() {
            for day in days where day.hours > 0 {
                u[b][Int(day.day - first)] += day.sum - means[b] * Double(day.hours)
            }
        }
        var projections = [[Double]](repeating: [Double](repeating: 0, count: k), count: m)
        let t0 = Double(span)
        for j in 1...k {
            let step = Double.pi * Double(j) / t0
            for t in 0..<span {
                let c = cos(step * (Double(t) + 0.5))
                for b in 0..<m where u[b][t] != 0 { projections[b][j - 1] += c * u[b][t] }
            }
        }
        var r = [[Double]](repeating: [Double](repeating: 0, count: m), count: m)
        for a in 0..<m {
            for b in 0...a {
                var s = 0.0
                for j in 0..<k { s += projections[a][j] * projections[b][j] }
                r[a][b] = s
                r[b][a] = s
            }
        }
        let scale = (0..<m).map { r[$0][$0] > 0 ? 1 / r[$0][$0].squareRoot() : 0 }
        // A correlation matrix of m buckets estimated from k projections spreads its eigenvalues
        // (a few large, many small), which makes the buckets look fewer than they are and the max-t
        // too bold: equal models were named apart in 6.2–6.4% of histories with the raw estimate.
        // Shrinking it towards independence by m / (m + k) keeps the family-wise rate.
        let keep = Double(k) / Double(m + k)
        for a in 0..<m {
            for b in 0..<m { r[a][b] = a == b ? 1 : keep * r[a][b] * scale[a] * scale[b] }
        }
        return r
    }

    /// Westfall–Young step-down min-p adjusted p-values for tests whose statistics are, under the
    /// null, Z₀ / √(Σₖ Zₖ² / K) (Student's t with K = `degrees[b]` degrees of freedom; nil: the
    /// normal Z₀) with Z₀, Z₁, … independent normal vectors of correlation `correlation`.
    static func stepDown(
        pValues p: [Double], degrees: [Int?], correlation: [[Double]], draws: Int, seed: UInt64
    ) -> [Double] {
        let m = p.count
        let factor = cholesky(correlation)
        let order = p.indices.sorted { p[$0] < p[$1] }
        let most = degrees.compactMap { $0 }.max() ?? 0
        var random = SplitMix(state: seed)
        // The factor packed by rows (row a holds a + 1 entries), read through one buffer: the loop
        // below runs (K + 1) × draws times.
        var packed: [Double] = []
        for a in 0..<m { packed += factor[a][0...a] }
        let limit = degrees.map { $0 ?? 0 }
        var hits = [Int](repeating: 0, count: m)
        var g = [Double](repeating: 0, count: m + 1), numerator = g, denominator = g, drawn = g
        for _ in 0..<draws {
            packed.withUnsafeBufferPointer { l in
                for k in 0...most {
                    // Box–Muller, two normals per pair of uniforms.
                    var b = 0
                    while b < m {
                        let u1 = (Double(random.next() >> 11) + 0.5) / Double(1 << 53), u2 = random.uniform()
                        let radius = (-2 * log(u1)).squareRoot(), angle = 2 * Double.pi * u2
                        g[b] = radius * cos(angle)
                        g[b + 1] = radius * sin(angle)
                        b += 2
                    }
                    var offset = 0
                    for a in 0..<m {
                        var s = 0.0
                        for c in 0...a { s += l[offset + c] * g[c] }
                        offset += a + 1
                        if k == 0 {
                            numerator[a] = s
                            denominator[a] = 0
                        } else if k <= limit[a] {
                            denominator[a] += s * s
                        }
                    }
                }
            }
            for b in 0..<m {
                if let v = degrees[b] {
                    let t = abs(numerator[b]) / (denominator[b] / Double(v)).squareRoot()
                    drawn[b] = StudentT.twoSidedTail(t, degrees: v)
                } else {
                    drawn[b] = erfc(abs(numerator[b]) / 2.0.squareRoot())
                }
            }
            // From the least significant bucket up: the smallest drawn p among each step's buckets.
            var smallest = Double.infinity
            for step in stride(from: m - 1, through: 0, by: -1) {
                smallest = min(smallest, drawn[order[step]])
                if smallest <= p[order[step]] { hits[step] += 1 }
            }
        }
        var out = [Double](repeating: 1, count: m)
        var running = 0.0
        for step in 0..<m {
            running = max(running, Double(hits[step] + 1) / Double(draws + 1))
            out[order[step]] = min(1, max(running, p[order[step]]))
        }
        return out
    }

    /// The lower-triangular L with L·Lᵀ = `r` for a positive semidefinite `r`: a column whose pivot
    /// vanishes (a bucket that is a combination of earlier ones) is zero.
    static func cholesky(_ r: [[Double]]) -> [[Double]] {
        let m = r.count
        var l = [[Double]](repeating: [Double](repeating: 0, count: m), count: m)
        for j in 0..<m {
            var d = r[j][j]
            for k in 0..<j { d -= l[j][k] * l[j][k] }
            guard d > 1e-10 else { continue }
            let pivot = d.squareRoot()
            l[j][j] = pivot
            for i in (j + 1)..<m {
                var s = r[i][j]
                for k in 0..<j { s -= l[i][k] * l[j][k] }
                l[i][j] = s / pivot
            }
        }
        return l
    }
}

extension StudentT {
    /// P(|T| ≥ t) for t ≥ 0 and a whole number of degrees of freedom, by the finite series of
    /// Abramowitz and Stegun 26.7.3–4 (fast enough to run thousands of times per bucket; absolute
    /// precision about 1e-16, so not for p-values far below that).
    public static func twoSidedTail(_ t: Double, degrees v: Int) -> Double {
        guard t.isFinite else { return t.isNaN ? .nan : 0 }
        let nu = Double(v), root = (nu + t * t).squareRoot()
        let s = t / root, c = nu.squareRoot() / root, c2 = c * c
        var inside: Double
        if v % 2 == 0 {
            var term = 1.0, sum = 1.0
            var j = 1
            while 2 * j <= v - 2 {
                term *= c2 * Double(2 * j - 1) / Double(2 * j)
                sum += term
                j += 1
            }
            inside = s * sum
        } else {
            let theta = atan2(t, nu.squareRoot())
            var sum = 0.0
            if v > 1 {
                var term = c
                sum = term
                var j = 1
                while 2 * j + 1 <= v - 2 {
                    term *= c2 * Double(2 * j) / Double(2 * j + 1)
                    sum += term
                    j += 1
                }
            }
            inside = 2 / Double.pi * (theta + s * sum)
        }
        inside = min(1, max(0, inside))
        return 1 - inside
    }
}
