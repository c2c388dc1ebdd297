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
/// interval by about 2%, at a block length of 16 days by 40%. The spread scores (RMSE, error SD,
/// correlation) of persistent errors then get ``SpreadCorrection``'s ends: such a record looks calmer
/// than its weather, and their misses fell on that one side.
public enum DayBootstrap {
    /// Fewer valid days give no interval: a bootstrap of a handful of days understates the spread.
    public static let minimumDays = 10
    /// Resamples per interval.
    public static let defaultResamples = 1000

    /// The intervals of the scores of `days` (day start instants and their sums, in any order);
    /// nil below `minimumDays`. The same input and seed give the same intervals. `adjusted: false`
    /// keeps the plain percentiles, `widened: false` leaves out the t/z widening, `spread: false` the
    /// ``SpreadCorrection`` (all three off: what an independent resampling's percentile interval is
    /// checked against).
    public static func intervals(
        days input: [(start: Int64, sums: SummarySums)], confidence: Double, resamples: Int = defaultResamples,
        blockLength fixed: Double? = nil, adjusted: Bool = true, widened: Bool = true, spread: Bool = true,
        seed: UInt64
    ) -> ScoreIntervals? {
        guard
            let resampled = percentiles(
                days: input, confidence: confidence, resamples: resamples, blockLength: fixed, adjusted: adjusted,
                seed: seed)
        else { return nil }
        let widen =
            widened ? widening(days: resampled.days, blockLength: resampled.blockLength, confidence: confidence) : 1
        let correction = spread ? SpreadCorrection(resampled, confidence: confidence) : nil
        var out: [IntervalScore: ScoreInterval] = [:]
        for (score, p) in resampled.scores {
            var ends = (
                low: p.estimate - (p.estimate - p.low) * widen, high: p.estimate + (p.high - p.estimate) * widen
            )
            if let correction { ends = correction.ends(score, estimate: p.estimate, low: ends.low, high: ends.high) }
            out[score] = bracket(score, estimate: p.estimate, low: ends.low, high: ends.high)
        }
        return ScoreIntervals(
            confidence: confidence, days: resampled.days, blockLength: resampled.blockLength, resamples: resamples,
            scores: out)
    }

    /// t(ν)/z for ν = days / (2 × block length), at least 2: as many degrees of freedom as independent
    /// pairs of blocks.
    static func widening(days: Int, blockLength: Double, confidence: Double) -> Double {
        let tail = (1 - confidence) / 2
        let degrees = max(2, Double(days) / (2 * blockLength))
        return StudentT.quantile(1 - tail, degrees: degrees) / normalQuantile(1 - tail)
    }

    /// What removing a record's own mean hides from its spread scores when errors persist, and the interval
    /// ends that make up for it. Σ(e − ē)² misses n·Var(ē): E[s²] = σ² − (Var(ē) − σ²/n) (the n − 1 divisor
    /// takes back the independent part), so a record of persistent errors looks calmer than its weather, and
    /// the spread scores' coverage misses fell on that side (the truth above RMSE's and error SD's interval,
    /// below the correlation's). Var(ē) is estimated by V̂, the squared standard error behind the bias
    /// interval (its bootstrap percentiles' half-width over z, before the t/z widening) times K / (K − 1)
    /// for K = days / block length blocks, the bias of a variance from K batches, which the resampling of
    /// those blocks inherits; D = V̂ − s²/n, about 0 with independent days. Error SD's ends move on the
    /// variance scale, √(end² + D); RMSE's upper end on the MSE scale, √(high² + D) (MSE is unbiased, but
    /// a calm record also understates how far it ranges upwards); the correlation's ends on Fisher's z by
    /// the change that adding n·D to the forecasts' centred sum of squares makes to r. The far end of each
    /// (RMSE's and error SD's upper, the correlation's lower) is also √(K / (K − 1)) further from the
    /// estimate. The point estimates do not change.
    struct SpreadCorrection {
        /// The treatments, each on its own for the coverage Monte Carlo; verify uses `.all`.
        struct Parts: OptionSet, Sendable {
            let rawValue: Int
            static let errorSD = Parts(rawValue: 1)
            static let correlation = Parts(rawValue: 2)
            static let rmseUpper = Parts(rawValue: 4)
            static let farEnd = Parts(rawValue: 8)
            /// V̂ × K / (K − 1) rather than V̂.
            static let blocks = Parts(rawValue: 16)
            static let all: Parts = [.errorSD, .correlation, .rmseUpper, .farEnd, .blocks]
        }
        let parts: Parts
        /// D = V̂ − s²/n, 0 without a bias interval or an error SD.
        let excess: Double
        /// √(K / (K − 1)), 1 at 1.5 blocks or fewer.
        let farScale: Double
        let continuous: ContinuousScores

        init(
            _ resampled: (days: Int, blockLength: Double, total: SummarySums, scores: [(IntervalScore, Percentiles)]),
            confidence: Double, parts: Parts = .all
        ) {
            self.parts = parts
            continuous = resampled.total.continuous
            let blocks = Double(resampled.days) / resampled.blockLength
            let batches = blocks > 1.5 ? blocks / (blocks - 1) : 1
            farScale = parts.contains(.farEnd) ? batches.squareRoot() : 1
            guard let bias = resampled.scores.first(where: { $0.0 == .bias })?.1, let sd = continuous.errorStdDev
            else {
                excess = 0
                return
            }
            let se = (bias.high - bias.low) / (2 * normalQuantile(1 - (1 - confidence) / 2))
            excess = se * se * (parts.contains(.blocks) ? batches : 1) - sd * sd / Double(continuous.n)
        }

        /// `score`'s interval ends after the correction (the ends of any other score unchanged).
        func ends(_ score: IntervalScore, estimate: Double, low: Double, high: Double) -> (low: Double, high: Double) {
            func shifted(_ x: Double) -> Double { max(0, x * x + excess).squareRoot() }
            switch score {
            case .errorSD, .rmse:
                let far = estimate + (high - estimate) * farScale
                if score == .rmse { return (low, parts.contains(.rmseUpper) ? shifted(far) : far) }
                return parts.contains(.errorSD) ? (shifted(low), shifted(far)) : (low, far)
            case .correlation:
                var ends = (low: estimate - (estimate - low) * farScale, high: high)
                guard parts.contains(.correlation), excess != 0 else { return ends }
                let c = continuous, n = Double(c.n)
                let sff = c.sumFF - c.sumF * c.sumF / n, soo = c.sumOO - c.sumO * c.sumO / n
                let sfo = c.sumFO - c.sumF * c.sumO / n
                guard sff + n * excess > 0, soo > 0 else { return ends }
                let corrected = sfo / ((sff + n * excess) * soo).squareRoot()
                func z(_ r: Double) -> Double { atanh(min(0.999_999, max(-0.999_999, r))) }
                let delta = z(corrected) - z(estimate)
                if delta.isFinite { ends = (tanh(z(ends.low) + delta), tanh(z(ends.high) + delta)) }
                return ends
            default: return (low, high)
            }
        }
    }

    /// An interval's ends kept to the score's possible values and around its estimate: BCa's levels can
    /// move both ends past a strongly biased estimate; the printed "1.31 (1.18–1.45)" always brackets
    /// its score.
    static func bracket(_ score: IntervalScore, estimate: Double, low: Double, high: Double) -> ScoreInterval {
        let possible = score.possible
        return ScoreInterval(
            low: max(possible.lowerBound, min(estimate, low)), high: min(possible.upperBound, max(estimate, high)))
    }

    /// One score's bootstrap interval before any widening: its estimate and the percentiles (BCa's
    /// levels where `adjusted`).
    struct Percentiles: Sendable {
        var estimate: Double
        var low: Double
        var high: Double
    }

    /// The resampled percentile intervals of `days`' scores, in `IntervalScore` order, with the days,
    /// their summed sums and the mean block length used (`fixed`, else ``blockLength(days:share:)``'s); nil below
    /// `minimumDays`.
    static func percentiles(
        days input: [(start: Int64, sums: SummarySums)], confidence: Double, resamples: Int, blockLength fixed: Double?,
        adjusted: Bool, seed: UInt64
    ) -> (days: Int, blockLength: Double, total: SummarySums, scores: [(IntervalScore, Percentiles)])? {
        let days = input.sorted { $0.start < $1.start }
        guard days.count >= minimumDays, confidence > 0, confidence < 1 else { return nil }
        let calendar = DayCalendar(days)
        let total = calendar.total
        let length = fixed ?? blockLength(calendar.contributions(days), days: days.count)
        let scores = IntervalScore.allCases.filter { $0.value(total) != nil }
        let table = DayTable(days: days, positions: calendar.positions, span: calendar.span)
        var samples = [[Double]](repeating: [], count: scores.count)
        for index in samples.indices { samples[index].reserveCapacity(resamples) }
        table.resample(resamples, blockLength: length, seed: seed) { resample in
            for (index, score) in scores.enumerated() {
                if let value = score.value(resample), value.isFinite { samples[index].append(value) }
            }
        }
        let tail = (1 - confidence) / 2
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
        var out: [(IntervalScore, Percentiles)] = []
        for (index, score) in scores.enumerated() {
            let sorted = samples[index].sorted()
            // A score undefined in many resamples (a rare event's POD) has no honest interval.
            guard sorted.count >= resamples * 9 / 10, let estimate = score.value(total) else { continue }
            let levels =
                (adjusted ? bcaLevels(sorted, estimate: estimate, jackknife: jackknife[index], z: z) : nil)
                ?? (tail, 1 - tail)
            guard let low = Quantiles.quantile(sorted, levels.low), let high = Quantiles.quantile(sorted, levels.high)
            else { continue }
            out.append((score, Percentiles(estimate: estimate, low: low, high: high)))
        }
        return (days.count, length, total, out)
    }

    /// Sorted days on their calendar: each day's position from the first (a DST day is 23 or 25 hours
    /// long, so rounded), the span, and the days' summed sums.
    struct DayCalendar {
        let positions: [Int]
        let span: Int
        let total: SummarySums

        init(_ days: [(start: Int64, sums: SummarySums)]) {
            let first = days[0].start
            positions = days.map { Int((Double($0.start - first) / 86_400).rounded()) }
            span = positions.last! + 1
            var total = SummarySums()
            for day in days { total.merge(day.sums) }
            self.total = total
        }

        /// Per calendar position, the days' MAE and bias contributions (`Σ|e| − MAE·n` and `Σe − bias·n`),
        /// NaN on a gap: the series the block length follows.
        func contributions(_ days: [(start: Int64, sums: SummarySums)]) -> [[Double]] {
            let mae = total.continuous.mae ?? 0, bias = total.continuous.bias ?? 0
            var absolute = [Double](repeating: .nan, count: span), signed = absolute
            for (day, position) in zip(days, positions) {
                let c = day.sums.continuous, n = Double(c.n)
                absolute[position] = c.sumAbsErr - mae * n
                signed[position] = c.sumErr - bias * n
            }
            return [absolute, signed]
        }
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

    /// The block length for the days' MAE and bias contributions (``DayCalendar/contributions(_:)``), the
    /// longer of the two.
    static func blockLength(_ contributions: [[Double]], days: Int, share: Double = 0.9) -> Double {
        contributions.map { blockLength($0, days: days, share: share) }.max() ?? 1
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

    /// Draws `count` stationary-bootstrap resamples of the calendar (geometric blocks of mean
    /// `blockLength` wrapping round it) and hands each one's summed sums to `body`.
    func resample(_ count: Int, blockLength: Double, seed: UInt64, _ body: (SummarySums) -> Void) {
        var none = NoDraws()
        resample(count, blockLength: blockLength, seed: seed, following: &none) { sums, _ in body(sums) }
    }

    /// `resample(_:blockLength:seed:_:)` telling `follower` each calendar step's drawn day (its row, or
    /// -1 for a gap) in draw order, and handing it to `body` with each resample's sums.
    func resample<Follower: DrawFollower>(
        _ count: Int, blockLength: Double, seed: UInt64, following follower: inout Follower,
        _ body: (SummarySums, inout Follower) -> Void
    ) {
        var random = SplitMix(state: seed)
        let jump = 1 / max(1, blockLength)
        let span = span, chunks = chunks
        var values = [Double?](repeating: nil, count: SummarySums.columns.count)
        var sum = [SIMD4<Double>](repeating: .zero, count: chunks)
        rows.withUnsafeBufferPointer { rows in
            slot.withUnsafeBufferPointer { slot in
                for _ in 0..<count {
                    follower.start()
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
                        follower.step(step, row: row)
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
                    body(sum.withUnsafeBufferPointer { sums($0, drawn: drawn, into: &values) }, &follower)
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

/// Follows a resampling loop's draws (``DayTable/resample(_:blockLength:seed:following:_:)``): what
/// the tests' bootstrap-t needs to compute each resample's own standard error in draw order.
protocol DrawFollower {
    /// A resample begins.
    mutating func start()
    /// Calendar step `step` of the resample drew `row` (-1: a gap).
    mutating func step(_ step: Int, row: Int)
}

/// Follows nothing: `query verify`'s resampling.
struct NoDraws: DrawFollower {
    @inline(__always) mutating func start() {}
    @inline(__always) mutating func step(_ step: Int, row: Int) {}
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
