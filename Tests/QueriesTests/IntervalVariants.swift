import Foundation
import WxCore

@testable import WxQueries

/// The interval methods the coverage Monte Carlo compares with `query verify`'s (RELIABILITY.md's
/// tables), none of them taken: other block lengths, other widenings, the stabilising scales and the
/// bootstrap-t, and verify's spread-score treatments one at a time. Built from the product's own pieces (`DayBootstrap.percentiles`, its resampling loop
/// and `bracket`), so `Method()` is exactly verify's method.
enum IntervalVariants {
    struct Method: Sendable {
        enum Rule: Sendable {
            /// The shortest blocks keeping `share` of an AR(1) fit's long-run variance.
            case keep(share: Double)
            /// Politis and White (2004) with Patton, Politis and White's (2009) correction.
            case politisWhite
        }
        var rule = Rule.keep(share: 0.9)
        /// The t widening's degrees of freedom: days / (2L) (pairs of blocks), or days / L − 1.
        var pairsOfBlocks = true
        /// The studentized bootstrap (bootstrap-t) instead of widened BCa percentiles: each resample's
        /// score over its own block standard error, the batch means of the days' influences in draw order.
        var studentized = false
        /// Widen (or studentize) on the score's `stabilising` scale.
        var stabilised = false
        /// Widenings that grow with the persistence (round s32c): `.batch` also scales by √(K / (K − 1))
        /// for K = days / L blocks (the bias of a batch-means variance of K batches), `.unclamped` lets ν
        /// fall below 2, to 1.
        enum Growth: Sendable { case none, batch, unclamped }
        var growth = Growth.none
        /// Which of verify's spread-score treatments (`DayBootstrap.SpreadCorrection`) to apply: all of them
        /// (verify's method), none (verify's method before round h32v) or some.
        var spread = DayBootstrap.SpreadCorrection.Parts.all
    }

    /// `DayBootstrap.intervals` by `method`; `Method()` gives the same intervals to the bit.
    static func intervals(
        days input: [(start: Int64, sums: SummarySums)], confidence: Double, resamples: Int = 1000,
        blockLength fixed: Double? = nil, adjusted: Bool = true, widened: Bool = true, seed: UInt64,
        method: Method = Method()
    ) -> ScoreIntervals? {
        let days = input.sorted { $0.start < $1.start }
        guard days.count >= DayBootstrap.minimumDays, confidence > 0, confidence < 1 else { return nil }
        let calendar = DayBootstrap.DayCalendar(days)
        var length = fixed
        if length == nil {
            switch method.rule {
            case .keep(let share):
                length = DayBootstrap.blockLength(calendar.contributions(days), days: days.count, share: share)
            case .politisWhite: length = calendar.contributions(days).map(politisWhite).max() ?? 1
            }
        }
        guard
            let resampled = DayBootstrap.percentiles(
                days: days, confidence: confidence, resamples: resamples, blockLength: length, adjusted: adjusted,
                seed: seed)
        else { return nil }
        let n = Double(resampled.days), blockLength = resampled.blockLength
        let tail = (1 - confidence) / 2
        let degrees =
            method.pairsOfBlocks
            ? max(method.growth == .unclamped ? 1 : 2, n / (2 * blockLength)) : max(2, n / blockLength - 1)
        let blocks = n / blockLength
        let batchBias = method.growth == .batch && blocks > 1.5 ? (blocks / (blocks - 1)).squareRoot() : 1
        let widen =
            widened
            ? batchBias * StudentT.quantile(1 - tail, degrees: degrees) / DayBootstrap.normalQuantile(1 - tail) : 1
        let student =
            method.studentized ? bootstrapT(days, calendar, resampled, confidence, resamples, seed, method) : [:]
        let correction =
            method.spread.isEmpty
            ? nil : DayBootstrap.SpreadCorrection(resampled, confidence: confidence, parts: method.spread)
        var out: [IntervalScore: ScoreInterval] = [:]
        for (score, p) in resampled.scores {
            let estimate = p.estimate
            var ends = (low: estimate - (estimate - p.low) * widen, high: estimate + (p.high - estimate) * widen)
            if method.stabilised, let scale = score.stabilising {
                let y = scale.forward(estimate)
                let stable = (
                    low: scale.back(y - (y - scale.forward(p.low)) * widen),
                    high: scale.back(y + (scale.forward(p.high) - y) * widen)
                )
                if stable.low.isFinite && stable.high.isFinite { ends = stable }
            }
            if let t = student[score] { ends = t }
            if let correction { ends = correction.ends(score, estimate: estimate, low: ends.low, high: ends.high) }
            out[score] = DayBootstrap.bracket(score, estimate: estimate, low: ends.low, high: ends.high)
        }
        return ScoreIntervals(
            confidence: confidence, days: resampled.days, blockLength: blockLength, resamples: resamples, scores: out)
    }

    /// The bootstrap-t's ends, θ̂ − t*₁₋α·SE … θ̂ − t*α·SE (on the stabilising scale where asked), per
    /// score that has them: the same resamples as the percentiles (same seed), each one's t* over its
    /// own batch-means SE of the days' influences in runs of the rounded block length.
    static func bootstrapT(
        _ days: [(start: Int64, sums: SummarySums)], _ calendar: DayBootstrap.DayCalendar,
        _ resampled: (
            days: Int, blockLength: Double, total: SummarySums, scores: [(IntervalScore, DayBootstrap.Percentiles)]
        ),
        _ confidence: Double, _ resamples: Int, _ seed: UInt64, _ method: Method
    ) -> [IntervalScore: (low: Double, high: Double)] {
        let total = calendar.total
        let scores = IntervalScore.allCases.filter { $0.value(total) != nil }
        let estimates = scores.map { $0.value(total) ?? .nan }
        let table = DayTable(days: days, positions: calendar.positions, span: calendar.span)
        let batch = max(1, Int(resampled.blockLength.rounded()))
        var moments = BatchMoments(
            table.influences(estimates: estimates, scores: scores), batch: batch, span: calendar.span)
        // The record's own standard error: its days in calendar order.
        moments.start()
        for position in 0..<calendar.span { moments.step(position, row: Int(table.slot[position])) }
        let errors = moments.variances
        var studentized = [[Double]](repeating: [], count: scores.count)
        table.resample(resamples, blockLength: resampled.blockLength, seed: seed, following: &moments) {
            resample, moments in
            let variances = moments.variances
            for (index, score) in scores.enumerated() {
                guard let value = resample.finite(score), variances[index] > 0 else { continue }
                var t = (value - estimates[index]) / variances[index].squareRoot()
                if method.stabilised, let scale = score.stabilising {
                    t =
                        (scale.forward(value) - scale.forward(estimates[index]))
                        / (variances[index].squareRoot() * scale.slope(value))
                }
                if t.isFinite { studentized[index].append(t) }
            }
        }
        let tail = (1 - confidence) / 2
        var out: [IntervalScore: (low: Double, high: Double)] = [:]
        for (index, score) in scores.enumerated() {
            guard errors[index] > 0, studentized[index].count >= resamples * 9 / 10 else { continue }
            let t = studentized[index].sorted(), estimate = estimates[index]
            guard let tLow = Quantiles.quantile(t, tail), let tHigh = Quantiles.quantile(t, 1 - tail) else { continue }
            let se = errors[index].squareRoot()
            var ends = (low: estimate - tHigh * se, high: estimate - tLow * se)
            if method.stabilised, let scale = score.stabilising {
                let y = scale.forward(estimate), seY = se * scale.slope(estimate)
                let stable = (low: scale.back(y - tHigh * seY), high: scale.back(y - tLow * seY))
                if stable.low.isFinite && stable.high.isFinite { ends = stable }
            }
            out[score] = ends
        }
        return out
    }

    /// The stationary bootstrap's mean block length of Politis and White (2004), as corrected by
    /// Patton, Politis and White (2009) (and as Python's `arch` computes it): the autocorrelations'
    /// flat-top window ends at twice the first lag m after which K_n = max(5, √log₁₀ n) lags are all
    /// within 2√(log₁₀ n / n), and b = (2Ĝ² / D̂)^{1/3} n^{1/3} with Ĝ = Σ λ(k/M)|k|R(k),
    /// D̂ = 2ĝ(0)², ĝ(0) = Σ λ(k/M)R(k). Lags pair only days both present (NaN marks a gap). At least 1,
    /// at most min(3√n, n/3).
    static func politisWhite(_ x: [Double]) -> Double {
        let n = x.count
        guard n >= 8 else { return 1 }
        var present = 0, mean = 0.0
        for value in x where !value.isNaN {
            present += 1
            mean += value
        }
        guard present > 2 else { return 1 }
        mean /= Double(present)
        let maxLag = min(n - 1, Int((Double(n).squareRoot() * 3).rounded(.up)) + 10)
        var covariance = [Double](repeating: 0, count: maxLag + 1)
        for k in 0...maxLag {
            var s = 0.0
            for t in k..<n where !x[t].isNaN && !x[t - k].isNaN { s += (x[t] - mean) * (x[t - k] - mean) }
            covariance[k] = s / Double(present)
        }
        guard covariance[0] > 0 else { return 1 }
        let logN = log10(Double(n))
        let kn = max(5, Int(logN.squareRoot().rounded(.up)))
        let bound = 2 * (logN / Double(n)).squareRoot()
        var m = maxLag - kn
        for lag in 1...max(1, maxLag - kn) {
            if (lag..<(lag + kn)).allSatisfy({ abs(covariance[$0] / covariance[0]) < bound }) {
                m = lag - 1
                break
            }
        }
        // No significant autocorrelation at all: independent days, blocks of one.
        let window = min(2 * m, maxLag)
        guard window > 0 else { return 1 }
        var g = 0.0, spectral = covariance[0]
        for k in 1...window {
            let t = Double(k) / Double(window)
            let weight = t <= 0.5 ? 1 : 2 * (1 - t)
            g += 2 * weight * Double(k) * covariance[k]
            spectral += 2 * weight * covariance[k]
        }
        guard spectral > 0 else { return 1 }
        let d = 2 * spectral * spectral
        let b = pow(2 * g * g / d, 1.0 / 3) * pow(Double(n), 1.0 / 3)
        let most = min(3 * Double(n).squareRoot(), Double(n) / 3)
        return min(most, max(1, b))
    }
}

extension SummarySums {
    /// The score, when it is defined and finite.
    fileprivate func finite(_ score: IntervalScore) -> Double? {
        guard let value = score.value(self), value.isFinite else { return nil }
        return value
    }
}

extension IntervalScore {
    /// A scale on which the score's spread depends little on the score itself: the log of a positive
    /// spread (MAE, RMSE, error SD: a record of calm days has both a small RMSE and a small spread of
    /// it) and Fisher's z of a correlation; nil (the score's own scale) for the rest.
    var stabilising: (forward: (Double) -> Double, back: (Double) -> Double, slope: (Double) -> Double)? {
        switch self {
        case .mae, .rmse, .errorSD: return (forward: { log($0) }, back: { exp($0) }, slope: { 1 / $0 })
        case .correlation: return (forward: { atanh($0) }, back: { tanh($0) }, slope: { 1 / (1 - $0 * $0) })
        default: return nil
        }
    }
}

extension DayTable {
    /// Each occupied day's influence on each score: the score of all days less the score without that
    /// day (≈ the score's gradient times the day's sums; the scores are ratios of sums, so these add up
    /// to about 0). Row-major, `scores.count` per day; 0 where leaving the day out leaves no score.
    func influences(estimates: [Double], scores: [IntervalScore]) -> (values: [Double], width: Int) {
        var total = [SIMD4<Double>](repeating: .zero, count: chunks)
        for index in rows.indices { total[index % chunks] += rows[index] }
        var values = [Double?](repeating: nil, count: SummarySums.columns.count)
        var out = [Double](repeating: 0, count: days * scores.count)
        for row in 0..<days {
            let rest = (0..<chunks).map { total[$0] - rows[row * chunks + $0] }
            let sums = rest.withUnsafeBufferPointer { self.sums($0, drawn: days > 1, into: &values) }
            for (index, score) in scores.enumerated() {
                guard let value = score.value(sums), value.isFinite, estimates[index].isFinite else { continue }
                out[row * scores.count + index] = estimates[index] - value
            }
        }
        return (out, scores.count)
    }
}

/// The batch-means long-run variance of the days' influences as a resample draws them: the influences
/// summed in runs of `batch` calendar steps, Σ_b (U_b − k_b·Ū)² with U_b a run's sum, k_b its days and
/// Ū the mean per day. Followed over the calendar as it is, the record's own (the bootstrap-t's SE²).
struct BatchMoments: DrawFollower {
    let values: [Double]
    let width: Int
    let batch: Int
    let span: Int
    var run: [Double]
    var squares: [Double], weighted: [Double], sums: [Double]
    var k = 0.0, kSquares = 0.0, total = 0.0

    init(_ influences: (values: [Double], width: Int), batch: Int, span: Int) {
        values = influences.values
        width = influences.width
        self.batch = batch
        self.span = span
        run = [Double](repeating: 0, count: width)
        squares = run
        weighted = run
        sums = run
    }

    mutating func start() {
        for i in 0..<width {
            run[i] = 0
            squares[i] = 0
            weighted[i] = 0
            sums[i] = 0
        }
        k = 0
        kSquares = 0
        total = 0
    }

    mutating func step(_ step: Int, row: Int) {
        if row >= 0 {
            for i in 0..<width { run[i] += values[row * width + i] }
            k += 1
        }
        guard (step + 1) % batch == 0 || step == span - 1 else { return }
        for i in 0..<width {
            squares[i] += run[i] * run[i]
            weighted[i] += k * run[i]
            sums[i] += run[i]
            run[i] = 0
        }
        kSquares += k * k
        total += k
        k = 0
    }

    /// Per score, Σ U_b² − 2Ū Σ k_b·U_b + Ū² Σ k_b², with Ū = Σ U_b / days.
    var variances: [Double] {
        (0..<width).map { i in
            guard total > 0 else { return 0 }
            let mean = sums[i] / total
            return max(0, squares[i] - 2 * mean * weighted[i] + mean * mean * kSquares)
        }
    }
}
