import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A score's confidence interval.
public struct ScoreInterval: Sendable, Equatable {
    public var low: Double
    public var high: Double
}

/// The scores `query verify` gives intervals for, by their JSON names.
public enum IntervalScore: String, CaseIterable, Sendable {
    case bias, mae, rmse
    case errorSD = "error_sd"
    case correlation
    case persistenceSkill = "persistence_skill"
    case pod, far, csi, ets, brier

    /// The score of some summed pairs.
    public func value(_ s: SummarySums) -> Double? {
        switch self {
        case .bias: return s.continuous.bias
        case .mae: return s.continuous.mae
        case .rmse: return s.continuous.rmse
        case .errorSD: return s.continuous.errorStdDev
        case .correlation: return s.continuous.correlation
        case .persistenceSkill: return s.persistence?.skill
        case .pod: return s.contingency?.pod
        case .far: return s.contingency?.far
        case .csi: return s.contingency?.csi
        case .ets: return s.contingency?.ets
        case .brier: return s.brier?.score
        }
    }

    /// The values the score can take: the t/z widening of a skewed interval near a limit (a small MAE,
    /// a POD near 1) would otherwise reach past it, to a negative MAE.
    public var possible: ClosedRange<Double> {
        switch self {
        case .bias: return -Double.infinity...Double.infinity
        case .mae, .rmse, .errorSD: return 0...Double.infinity
        case .correlation: return -1...1
        case .persistenceSkill: return -Double.infinity...1
        case .pod, .far, .csi, .brier: return 0...1
        case .ets: return -1.0 / 3...1
        }
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

/// The intervals of one group's scores, and how they were made.
public struct ScoreIntervals: Sendable, Equatable {
    public var confidence: Double
    /// Valid days resampled, and the mean block length in days.
    public var days: Int
    public var blockLength: Double
    public var resamples: Int
    public var scores: [IntervalScore: ScoreInterval]
}

/// A seeded stationary block bootstrap over valid days of kept daily sums (Politis and Romano,
/// 1994): a resample is a calendar's worth of days drawn in blocks of random length (geometric,
/// mean `blockLength`) that wrap round the calendar; each score is computed from the resample's
/// summed sums, so resampling days is adding rows of sums, never revisiting pairs. A day without
/// pairs is a gap in the calendar (it adds nothing), so blocks keep real neighbours together.
///
/// The mean block length comes from the days: an AR(1) fit to their MAE and bias contributions
/// (the larger autocorrelation, corrected for its small-sample bias) gives the shortest blocks whose
/// resamples keep 90% of the AR(1) long-run variance; 1 for independent days. The interval is BCa's
/// (bias-corrected and accelerated percentiles, the acceleration from a jackknife deleting one block
/// of days at a time): a second-moment score (RMSE, error SD, correlation) of days whose errors share
/// the day's weather is skewed, and the plain percentiles covered it 87–92% of the time. A percentile
/// interval of a few dozen days of persistent weather is still too narrow (the blocks are few), so each end's
/// distance from the estimate is scaled by t(ν)/z with ν = days / (2 × block length), as many
/// degrees of freedom as independent pairs of blocks: with independent days that widens a 60-day
/// interval by about 2%, at a block length of 16 days by 40%.
public enum DayBootstrap {
    /// Fewer valid days give no interval: a bootstrap of a handful of days understates the spread.
    public static let minimumDays = 10
    /// Resamples per interval.
    public static let defaultResamples = 1000

    /// The intervals of the scores of `days` (day start instants and their sums, in any order);
    /// nil below `minimumDays`. The same input and seed give the same intervals. `adjusted: false`
    /// keeps the plain percentiles, `widened: false` leaves out the t/z widening (both off: what an
    /// independent resampling's percentile interval is checked against); `studentized: true` gives the
    /// bootstrap-t on the scores' stabilising scales instead (measured against verify's method in the
    /// Monte Carlo of the tests, and not better there).
    public static func intervals(
        days input: [(start: Int64, sums: SummarySums)], confidence: Double, resamples: Int = defaultResamples,
        blockLength fixed: Double? = nil, adjusted: Bool = true, widened: Bool = true, studentized: Bool = false,
        seed: UInt64
    ) -> ScoreIntervals? {
        var method = Method()
        method.studentized = studentized
        method.stabilised = studentized
        return intervals(
            days: input, confidence: confidence, resamples: resamples, blockLength: fixed, adjusted: adjusted,
            widened: widened, seed: seed, method: method)
    }

    /// The choices the Monte Carlo of the tests compares; `Method()` is what `query verify` uses.
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
        /// score over its own block standard error (``DayTable/resample(_:blockLength:seed:influence:_:)``).
        var studentized = false
        /// Widen (or studentize) on the score's ``IntervalScore/stabilising`` scale.
        var stabilised = false
    }

    static func intervals(
        days input: [(start: Int64, sums: SummarySums)], confidence: Double, resamples: Int,
        blockLength fixed: Double?, adjusted: Bool, widened: Bool, seed: UInt64, method: Method
    ) -> ScoreIntervals? {
        let days = input.sorted { $0.start < $1.start }
        guard days.count >= minimumDays, confidence > 0, confidence < 1 else { return nil }
        // Calendar positions (a DST day is 23 or 25 hours long, so round).
        let first = days[0].start
        let positions = days.map { Int((Double($0.start - first) / 86_400).rounded()) }
        let span = positions.last! + 1
        var total = SummarySums()
        for day in days { total.merge(day.sums) }
        let length =
            fixed ?? blockLengthFor(days: days, positions: positions, span: span, total: total, rule: method.rule)
        let scores = IntervalScore.allCases.filter { $0.value(total) != nil }
        let table = DayTable(days: days, positions: positions, span: span)
        var samples = [[Double]](repeating: [], count: scores.count)
        for index in samples.indices { samples[index].reserveCapacity(resamples) }
        let estimates = scores.map { $0.value(total) ?? .nan }
        // Bootstrap-t: each day's influence on each score, batched in runs of the rounded block length.
        let batch = max(1, Int(length.rounded()))
        let influence =
            method.studentized ? Influence(table.influences(estimates: estimates, scores: scores), batch: batch) : nil
        let errors = influence.map { table.batchVariances($0) } ?? []
        var studentized = [[Double]](repeating: [], count: method.studentized ? scores.count : 0)
        table.resample(resamples, blockLength: length, seed: seed, influence: influence) { resample, variances in
            for (index, score) in scores.enumerated() {
                guard let value = score.value(resample), value.isFinite else { continue }
                samples[index].append(value)
                guard !studentized.isEmpty, variances[index] > 0 else { continue }
                var t = (value - estimates[index]) / variances[index].squareRoot()
                if method.stabilised, let scale = score.stabilising {
                    t =
                        (scale.forward(value) - scale.forward(estimates[index]))
                        / (variances[index].squareRoot() * scale.slope(value))
                }
                if t.isFinite { studentized[index].append(t) }
            }
        }
        var out: [IntervalScore: ScoreInterval] = [:]
        let tail = (1 - confidence) / 2
        let degrees =
            method.pairsOfBlocks
            ? max(2, Double(days.count) / (2 * length)) : max(2, Double(days.count) / length - 1)
        let widen = widened ? StudentT.quantile(1 - tail, degrees: degrees) / normalQuantile(1 - tail) : 1
        // Per score, the delete-a-block jackknife's values, for BCa's acceleration.
        var jackknife = [[Double]](repeating: [], count: scores.count)
        if adjusted {
            table.jackknife(blockLength: max(1, Int(length.rounded()))) { rest in
                for (index, score) in scores.enumerated() {
                    if let value = score.value(rest), value.isFinite { jackknife[index].append(value) }
                }
            }
        }
        let z = normalQuantile(tail)
        for (index, score) in scores.enumerated() {
            let sorted = samples[index].sorted()
            // A score undefined in many resamples (a rare event's POD) has no honest interval.
            guard sorted.count >= resamples * 9 / 10, let estimate = score.value(total) else { continue }
            let levels =
                (adjusted ? bcaLevels(sorted, estimate: estimate, jackknife: jackknife[index], z: z) : nil)
                ?? (tail, 1 - tail)
            guard let low = Quantiles.quantile(sorted, levels.low), let high = Quantiles.quantile(sorted, levels.high)
            else { continue }
            let possible = score.possible
            var ends = (low: estimate - (estimate - low) * widen, high: estimate + (high - estimate) * widen)
            if method.stabilised, let scale = score.stabilising {
                let y = scale.forward(estimate)
                let stable = (
                    low: scale.back(y - (y - scale.forward(low)) * widen),
                    high: scale.back(y + (scale.forward(high) - y) * widen)
                )
                if stable.low.isFinite && stable.high.isFinite { ends = stable }
            }
            if !studentized.isEmpty, errors[index] > 0, studentized[index].count >= resamples * 9 / 10 {
                // θ̂ − t*₁₋α·SE … θ̂ − t*α·SE, on the stabilising scale where asked.
                let t = studentized[index].sorted()
                if let tLow = Quantiles.quantile(t, tail), let tHigh = Quantiles.quantile(t, 1 - tail) {
                    let se = errors[index].squareRoot()
                    ends = (low: estimate - tHigh * se, high: estimate - tLow * se)
                    if method.stabilised, let scale = score.stabilising {
                        let y = scale.forward(estimate), seY = se * scale.slope(estimate)
                        let stable = (low: scale.back(y - tHigh * seY), high: scale.back(y - tLow * seY))
                        if stable.low.isFinite && stable.high.isFinite { ends = stable }
                    }
                }
            }
            // BCa's levels can move both ends past a strongly biased estimate; the printed
            // "1.31 (1.18–1.45)" always brackets its score.
            out[score] = ScoreInterval(
                low: max(possible.lowerBound, min(estimate, ends.low)),
                high: min(possible.upperBound, max(estimate, ends.high)))
        }
        return ScoreIntervals(
            confidence: confidence, days: days.count, blockLength: length, resamples: resamples, scores: out)
    }

    /// BCa's percentile levels (Efron, 1987) for a tail of normal quantile `z` (negative) of a
    /// sorted bootstrap distribution: the bias correction z₀ from the share of resamples below the
    /// estimate, the acceleration a from the skewness of the jackknife values; nil where they give no
    /// levels (then the plain percentiles).
    static func bcaLevels(
        _ sorted: [Double], estimate: Double, jackknife: [Double], z: Double
    ) -> (low: Double, high: Double)? {
        guard jackknife.count >= 3, !sorted.isEmpty else { return nil }
        var below = 0, ties = 0
        for value in sorted {
            if value < estimate { below += 1 } else if value == estimate { ties += 1 }
        }
        let count = Double(sorted.count)
        let share = min(max((Double(below) + 0.5 * Double(ties)) / count, 0.5 / count), 1 - 0.5 / count)
        let z0 = normalQuantile(share)
        let mean = jackknife.reduce(0, +) / Double(jackknife.count)
        var squares = 0.0, cubes = 0.0
        for value in jackknife {
            let d = mean - value
            squares += d * d
            cubes += d * d * d
        }
        let a = squares > 0 ? cubes / (6 * pow(squares, 1.5)) : 0
        func level(_ quantile: Double) -> Double? {
            let w = z0 + quantile
            let denominator = 1 - a * w
            guard denominator > 0 else { return nil }
            return 0.5 * erfc(-(z0 + w / denominator) / 2.0.squareRoot())
        }
        guard let low = level(z), let high = level(-z), low.isFinite, high.isFinite, low < high else { return nil }
        return (low, high)
    }

    /// The block length for the days' MAE and bias contributions (`Σ|e| − MAE·n` and `Σe − bias·n`
    /// per day, zero on a gap), the longer of the two.
    static func blockLengthFor(
        days: [(start: Int64, sums: SummarySums)], positions: [Int], span: Int, total: SummarySums,
        rule: Method.Rule = .keep(share: 0.9)
    ) -> Double {
        let mae = total.continuous.mae ?? 0, bias = total.continuous.bias ?? 0
        var absolute = [Double](repeating: .nan, count: span), signed = absolute
        for (day, position) in zip(days, positions) {
            let c = day.sums.continuous, n = Double(c.n)
            absolute[position] = c.sumAbsErr - mae * n
            signed[position] = c.sumErr - bias * n
        }
        switch rule {
        case .keep(let share):
            return max(
                blockLength(absolute, days: days.count, share: share),
                blockLength(signed, days: days.count, share: share))
        case .politisWhite:
            return max(politisWhite(absolute), politisWhite(signed))
        }
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

    /// The shortest mean block length whose stationary-bootstrap variance of the mean of an AR(1)
    /// series with the series' lag-1 autocorrelation ρ keeps 90% of its long-run variance: with
    /// q = ρ(1 − 1/L), 1 + 2q/(1 − q) ≥ 0.9 (1 + ρ)/(1 − ρ). ρ comes from adjacent days only (NaN
    /// marks a gap), plus Kendall's (1 + 3ρ)/n for its downward bias; at most half the span.
    static func blockLength(_ x: [Double], days: Int, share: Double = 0.9) -> Double {
        var lagged = 0.0, squares = 0.0, pairs = 0
        for (t, value) in x.enumerated() where !value.isNaN {
            squares += value * value
            if t > 0, !x[t - 1].isNaN {
                lagged += value * x[t - 1]
                pairs += 1
            }
        }
        guard squares > 0, pairs > 0 else { return 1 }
        let estimate = (lagged / Double(pairs)) / (squares / Double(days))
        let clipped = min(max(estimate, 0), 0.97)
        let rho = min(0.97, clipped + (1 + 3 * clipped) / Double(days))
        let target = share * (1 + rho) / (1 - rho)
        let a = (target - 1) / 2
        guard a > 0 else { return 1 }
        let needed = a / (1 + a) / rho
        let most = max(1, Double(x.count) / 2)
        guard needed < 1 else { return most }
        return min(most, max(1, 1 / (1 - needed)))
    }

    /// The standard normal quantile, by bisection on erfc (monotone, so to the last bit).
    static func normalQuantile(_ p: Double) -> Double {
        var low = -40.0, high = 40.0
        for _ in 0..<200 {
            let mid = (low + high) / 2
            if mid == low || mid == high { break }
            if 0.5 * erfc(-mid / 2.0.squareRoot()) < p { low = mid } else { high = mid }
        }
        return (low + high) / 2
    }

    /// A seed from a group's name (FNV-1a), so every group draws its own resamples and the same
    /// command prints the same intervals.
    public static func seed(_ text: String) -> UInt64 {
        var hash = FNV1a()
        for byte in text.utf8 { hash.add(byte) }
        return hash.value
    }
}

/// The days' sums laid out for the resampling loop: one dense row per occupied calendar day of only
/// the columns some day has (a temperature has no 2×2 table or Brier sums, so 12 of 22), then, for a
/// score only some days have, a 0/1 column counting them, so a resample knows whether it drew one;
/// four columns to a vector, so a drawn day is a few vector additions into sums kept in registers,
/// and a resample allocates nothing but the `SummarySums` its scores are read from.
struct DayTable {
    let span: Int
    /// Per calendar position, its day's row; -1 for a gap.
    let slot: [Int32]
    /// The columns kept (indices into `SummarySums.columns`), in row order.
    let kept: [Int]
    /// Per kept column, the 0/1 column of the days having it; nil when every day has it.
    let indicator: [Int?]
    /// Vectors per row: 4 (zero-padded) for up to 16 columns, the loop's register-held case.
    let chunks: Int
    let rows: [SIMD4<Double>]
    let days: Int

    init(days input: [(start: Int64, sums: SummarySums)], positions: [Int], span: Int) {
        self.span = span
        var slot = [Int32](repeating: -1, count: span)
        var merged: [[Double?]] = []
        for (day, position) in zip(input, positions) {
            if slot[position] < 0 {
                slot[position] = Int32(merged.count)
                merged.append(Array(repeating: nil, count: SummarySums.columns.count))
            }
            let row = Int(slot[position])
            // Two days on one position (DST rounding) add up, as one day.
            for (column, value) in day.sums.values.enumerated() {
                if let value { merged[row][column] = (merged[row][column] ?? 0) + value }
            }
        }
        var kept: [Int] = [], partial: [Int] = []
        for column in SummarySums.columns.indices {
            let having = merged.reduce(0) { $0 + ($1[column] == nil ? 0 : 1) }
            guard having > 0 else { continue }
            kept.append(column)
            if having < merged.count { partial.append(column) }
        }
        let width = kept.count + partial.count
        let chunks = max(4, (width + 3) / 4)
        var flat = [Double](repeating: 0, count: merged.count * chunks * 4)
        for (row, values) in merged.enumerated() {
            let base = row * chunks * 4
            for (k, column) in kept.enumerated() { flat[base + k] = values[column] ?? 0 }
            for (k, column) in partial.enumerated() where values[column] != nil { flat[base + kept.count + k] = 1 }
        }
        self.slot = slot
        self.kept = kept
        self.indicator = kept.map { column in partial.firstIndex(of: column).map { kept.count + $0 } }
        self.chunks = chunks
        self.rows = (0..<merged.count * chunks).map {
            SIMD4(flat[4 * $0], flat[4 * $0 + 1], flat[4 * $0 + 2], flat[4 * $0 + 3])
        }
        self.days = merged.count
    }

    /// The `SummarySums` of summed rows (`sum`, `chunks` vectors); `drawn`: whether any day was.
    func sums(_ sum: UnsafeBufferPointer<SIMD4<Double>>, drawn: Bool, into values: inout [Double?]) -> SummarySums {
        for (k, column) in kept.enumerated() {
            let has = indicator[k].map { sum[$0 / 4][$0 % 4] > 0.5 } ?? drawn
            values[column] = has ? sum[k / 4][k % 4] : nil
        }
        return SummarySums(values: values)
    }

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

    /// The days' influences summed in runs of `batch` calendar positions (the batch-means estimate of
    /// the long-run variance): Σ_b (U_b − k_b·Ū)², U_b a run's sum, k_b its days, Ū the mean per day.
    struct Moments {
        var squares: Double = 0, weighted: Double = 0, sum: Double = 0
    }

    /// The batch variance of each score over the calendar as it is (the bootstrap-t's standard error²).
    func batchVariances(_ influence: Influence) -> [Double] {
        let width = influence.width
        var moments = [Moments](repeating: .init(), count: width)
        var run = [Double](repeating: 0, count: width)
        var k = 0.0, kSquares = 0.0, total = 0.0
        for position in 0..<span {
            let row = Int(slot[position])
            if row >= 0 {
                for i in 0..<width { run[i] += influence.values[row * width + i] }
                k += 1
            }
            if (position + 1) % influence.batch == 0 || position == span - 1 {
                for i in 0..<width {
                    moments[i].squares += run[i] * run[i]
                    moments[i].weighted += k * run[i]
                    moments[i].sum += run[i]
                    run[i] = 0
                }
                kSquares += k * k
                total += k
                k = 0
            }
        }
        return moments.map { Influence.variance($0, kSquares: kSquares, days: total) }
    }

    /// Draws `count` stationary-bootstrap resamples of the calendar (geometric blocks of mean
    /// `blockLength` wrapping round it) and hands each one's summed sums to `body`, with, given the
    /// days' `influence`, each score's batch variance over the resample's drawn days in draw order
    /// (empty without).
    func resample(
        _ count: Int, blockLength: Double, seed: UInt64, influence: Influence? = nil,
        _ body: (SummarySums, [Double]) -> Void
    ) {
        var random = SplitMix(state: seed)
        let jump = 1 / max(1, blockLength)
        let span = span, chunks = chunks
        var values = [Double?](repeating: nil, count: SummarySums.columns.count)
        var sum = [SIMD4<Double>](repeating: .zero, count: chunks)
        let width = influence?.width ?? 0, batch = influence?.batch ?? 1
        let weights = influence?.values ?? []
        var run = [Double](repeating: 0, count: width)
        var moments = [Moments](repeating: .init(), count: width)
        var variances = [Double](repeating: 0, count: width)
        rows.withUnsafeBufferPointer { rows in
            slot.withUnsafeBufferPointer { slot in
                for _ in 0..<count {
                    var k = 0.0, kSquares = 0.0, total = 0.0
                    if width > 0 {
                        for i in 0..<width { moments[i] = .init() }
                    }
                    var drawn = false
                    var position = random.below(span)
                    var s0 = SIMD4<Double>.zero, s1 = s0, s2 = s0, s3 = s0
                    for c in 0..<chunks { sum[c] = .zero }
                    for step in 0..<span {
                        if step > 0 {
                            // Independent days (jump 1) start a block every day: no coin to toss.
                            if jump >= 1 || random.uniform() < jump {
                                position = random.below(span)
                            } else {
                                position = position + 1 == span ? 0 : position + 1
                            }
                        }
                        let row = Int(slot[position])
                        if width > 0 {
                            if row >= 0 {
                                for i in 0..<width { run[i] += weights[row * width + i] }
                                k += 1
                            }
                            if (step + 1) % batch == 0 || step == span - 1 {
                                for i in 0..<width {
                                    moments[i].squares += run[i] * run[i]
                                    moments[i].weighted += k * run[i]
                                    moments[i].sum += run[i]
                                    run[i] = 0
                                }
                                kSquares += k * k
                                total += k
                                k = 0
                            }
                        }
                        guard row >= 0 else { continue }
                        drawn = true
                        let base = row * chunks
                        if chunks == 4 {
                            s0 += rows[base]
                            s1 += rows[base + 1]
                            s2 += rows[base + 2]
                            s3 += rows[base + 3]
                        } else {
                            for c in 0..<chunks { sum[c] += rows[base + c] }
                        }
                    }
                    if chunks == 4 {
                        sum[0] = s0
                        sum[1] = s1
                        sum[2] = s2
                        sum[3] = s3
                    }
                    for i in 0..<width {
                        variances[i] = Influence.variance(moments[i], kSquares: kSquares, days: total)
                    }
                    body(sum.withUnsafeBufferPointer { sums($0, drawn: drawn, into: &values) }, variances)
                }
            }
        }
    }

    /// The delete-a-block jackknife: for each run of `length` calendar positions that holds a day
    /// (but not every day), the summed sums of all the other days.
    func jackknife(blockLength length: Int, _ body: (SummarySums) -> Void) {
        var total = [SIMD4<Double>](repeating: .zero, count: chunks), block = total
        for index in rows.indices { total[index % chunks] += rows[index] }
        var values = [Double?](repeating: nil, count: SummarySums.columns.count)
        var start = 0
        while start < span {
            for c in 0..<chunks { block[c] = .zero }
            var held = 0
            for position in start..<min(span, start + length) where slot[position] >= 0 {
                held += 1
                for c in 0..<chunks { block[c] += rows[Int(slot[position]) * chunks + c] }
            }
            start += length
            guard held > 0, held < days else { continue }
            let rest = (0..<chunks).map { total[$0] - block[$0] }
            body(rest.withUnsafeBufferPointer { sums($0, drawn: true, into: &values) })
        }
    }
}

/// The days' influences on the scores (``DayTable/influences(estimates:scores:)``) and the run of
/// calendar positions their batch variance sums over.
struct Influence {
    let values: [Double]
    let width: Int
    let batch: Int

    init(_ influences: (values: [Double], width: Int), batch: Int) {
        self.values = influences.values
        self.width = influences.width
        self.batch = batch
    }

    /// Σ_b (U_b − k_b·Ū)² from Σ U_b², Σ k_b·U_b, Σ U_b and Σ k_b², with Ū = Σ U_b / days.
    static func variance(_ m: DayTable.Moments, kSquares: Double, days: Double) -> Double {
        guard days > 0 else { return 0 }
        let mean = m.sum / days
        return max(0, m.squares - 2 * mean * m.weighted + mean * mean * kSquares)
    }
}

/// SplitMix64: small, fast and the same on every platform.
struct SplitMix {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    mutating func uniform() -> Double { Double(next() >> 11) / Double(1 << 53) }

    /// Uniform in 0..<n (Lemire's multiply-shift: no division in the resampling loop; its bias,
    /// below n / 2⁶⁴, is far under the resampling's own error).
    mutating func below(_ n: Int) -> Int {
        Int(truncatingIfNeeded: next().multipliedFullWidth(by: UInt64(n)).high)
    }
}
