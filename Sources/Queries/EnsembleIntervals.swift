import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The ensemble scores `query verify --model <ensemble>` gives intervals for, by their JSON names.
public enum EnsembleIntervalScore: String, CaseIterable, Sendable {
    case crps
    case crpsFair = "crps_fair"
    case meanBias = "mean_bias"
    case meanMAE = "mean_mae"
    case meanRMSE = "mean_rmse"
    case spread
    case spreadSkill = "spread_skill"

    /// The score of summed day sums (``EnsembleDayVector``).
    func value(_ v: [Double]) -> Double? {
        let n = v[0], nSpread = v[2]
        switch self {
        case .crps: return n > 0 ? v[1] / n : nil
        case .crpsFair: return nSpread > 0 ? v[3] / nSpread : nil
        case .meanBias: return n > 0 ? v[4] / n : nil
        case .meanMAE: return n > 0 ? v[5] / n : nil
        case .meanRMSE: return n > 0 ? (v[6] / n).squareRoot() : nil
        case .spread: return nSpread > 0 ? (v[7] / nSpread).squareRoot() : nil
        case .spreadSkill: return nSpread > 0 && v[9] > 0 ? (v[8] / v[9]).squareRoot() : nil
        }
    }

    /// Where the score can lie (an interval end is clamped to it).
    var possible: ClosedRange<Double> { self == .meanBias ? -Double.infinity...Double.infinity : 0...Double.infinity }
}

/// One day's ensemble sums as the bootstrap adds them: n, Σ CRPS, n (M ≥ 2), Σ fair CRPS, Σ e, Σ |e|,
/// Σ e², Σ s², Σ (M+1)/M·s², Σ e² over the M ≥ 2 cases (e the ensemble mean's error).
enum EnsembleDayVector {
    static func of(_ s: EnsembleScores) -> [Double] {
        [
            Double(s.n), s.sumUnder + s.sumOver - s.sumSpreadTerm, Double(s.nSpread), s.sumFairCRPS, s.sumMeanErr,
            s.sumMeanAbsErr, s.sumMeanErrSq, s.sumVariance, s.sumCorrectedVariance, s.sumSpreadCasesErrSq
        ]
    }
}

/// The ensemble scores' intervals of one lead bucket (or of all of them).
public struct EnsembleScoreIntervals: Sendable, Equatable {
    public var confidence: Double
    public var days: Int
    public var blockLength: Double
    public var scores: [EnsembleIntervalScore: ScoreInterval]
}

/// The day-block bootstrap of ``DayBootstrap`` over an ensemble's kept day sums: the same stationary
/// blocks over the calendar of valid days, block length from the days' autocorrelation (of their
/// CRPS and mean-error contributions), BCa percentiles from a delete-a-block jackknife, each end
/// widened by t/z for the number of blocks. Each resample adds day sums; no member is read.
public enum EnsembleDayBootstrap {
    /// The intervals of the days' scores; nil below ``DayBootstrap/minimumDays`` valid days.
    public static func intervals(
        days input: [(start: Int64, scores: EnsembleScores)], confidence: Double,
        resamples: Int = DayBootstrap.defaultResamples, blockLength fixed: Double? = nil, seed: UInt64
    ) -> EnsembleScoreIntervals? {
        let days = input.filter { $0.scores.n > 0 }.sorted { $0.start < $1.start }
        guard days.count >= DayBootstrap.minimumDays, confidence > 0, confidence < 1 else { return nil }
        let first = days[0].start
        let positions = days.map { Int((Double($0.start - first) / 86_400).rounded()) }
        let span = positions.last! + 1
        let vectors = days.map { EnsembleDayVector.of($0.scores) }
        let width = vectors[0].count
        var slot = [Int](repeating: -1, count: span)
        for (index, position) in positions.enumerated() { slot[position] = index }
        var total = [Double](repeating: 0, count: width)
        for v in vectors { for k in 0..<width { total[k] += v[k] } }
        let length: Double
        if let fixed {
            length = fixed
        } else {
            let crps = total[0] > 0 ? total[1] / total[0] : 0, bias = total[0] > 0 ? total[4] / total[0] : 0
            var a = [Double](repeating: .nan, count: span), b = a
            for (v, position) in zip(vectors, positions) {
                a[position] = v[1] - crps * v[0]
                b[position] = v[4] - bias * v[0]
            }
            length = max(
                DayBootstrap.blockLength(a, days: days.count), DayBootstrap.blockLength(b, days: days.count))
        }
        let scores = EnsembleIntervalScore.allCases.filter { $0.value(total) != nil }
        var samples = [[Double]](repeating: [], count: scores.count)
        var random = SplitMix(state: seed)
        let jump = 1 / max(1, length)
        var sum = [Double](repeating: 0, count: width)
        for _ in 0..<resamples {
            for k in 0..<width { sum[k] = 0 }
            var position = random.below(span)
            for step in 0..<span {
                if step > 0 {
                    if jump >= 1 || random.uniform() < jump {
                        position = random.below(span)
                    } else {
                        position = position + 1 == span ? 0 : position + 1
                    }
                }
                let row = slot[position]
                guard row >= 0 else { continue }
                for k in 0..<width { sum[k] += vectors[row][k] }
            }
            for (index, score) in scores.enumerated() {
                if let value = score.value(sum), value.isFinite { samples[index].append(value) }
            }
        }
        // Delete-a-block jackknife for BCa's acceleration.
        var jackknife = [[Double]](repeating: [], count: scores.count)
        let block = max(1, Int(length.rounded()))
        var start = 0
        while start < span {
            var rest = total
            var held = 0
            for position in start..<min(span, start + block) where slot[position] >= 0 {
                held += 1
                for k in 0..<width { rest[k] -= vectors[slot[position]][k] }
            }
            start += block
            guard held > 0, held < days.count else { continue }
            for (index, score) in scores.enumerated() {
                if let value = score.value(rest), value.isFinite { jackknife[index].append(value) }
            }
        }
        let tail = (1 - confidence) / 2
        let widen = DayBootstrap.widening(days: days.count, blockLength: length, confidence: confidence)
        let z = DayBootstrap.normalQuantile(tail)
        var out: [EnsembleIntervalScore: ScoreInterval] = [:]
        for (index, score) in scores.enumerated() {
            let sorted = samples[index].sorted()
            guard sorted.count >= resamples * 9 / 10, let estimate = score.value(total) else { continue }
            let levels =
                DayBootstrap.bcaLevels(sorted, estimate: estimate, jackknife: jackknife[index], z: z) ?? (
                    tail, 1 - tail
                )
            guard let low = Quantiles.quantile(sorted, levels.low), let high = Quantiles.quantile(sorted, levels.high)
            else { continue }
            out[score] = ScoreInterval(
                low: max(score.possible.lowerBound, min(estimate, estimate - (estimate - low) * widen)),
                high: min(score.possible.upperBound, max(estimate, estimate + (high - estimate) * widen)))
        }
        return EnsembleScoreIntervals(confidence: confidence, days: days.count, blockLength: length, scores: out)
    }
}
