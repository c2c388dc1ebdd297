// Standard verification scores (as MET, verif and the WMO/JWGFVR guidance define them), kept as partial sums.
//
// Like MET's SL1L2 lines, each accumulator stores sums rather than scores, so per-lead or per-day
// groups can be merged later (and stored) without revisiting the pairs. Pure Swift: no store, no SQL.

/// Continuous scores of forecast f against observed o, from mergeable partial sums.
///
/// ```swift
/// var scores = ContinuousScores()
/// scores.add(forecast: 18.3, observed: 17.1)
/// scores.bias  // 1.2
/// ```
///
/// A pair where either value is NaN or infinite is a missing value, not a pair: ``add(forecast:observed:)``
/// ignores it. Every derived score is `nil` when `n == 0` or when it is undefined for the data.
public struct ContinuousScores: Sendable, Equatable {
    /// Number of pairs.
    public var n: Int
    /// Σf, Σo.
    public var sumF: Double
    public var sumO: Double
    /// Σf², Σo², Σf·o.
    public var sumFF: Double
    public var sumOO: Double
    public var sumFO: Double
    /// Σ|f−o|.
    public var sumAbsErr: Double
    /// Σ(f−o) and Σ(f−o)², accumulated directly: deriving them from Σf² + Σo² − 2Σfo would cancel
    /// catastrophically (temperatures of ~290 K with errors of ~1 K lose most of their digits).
    public var sumErr: Double
    public var sumErrSq: Double

    /// An empty accumulator.
    public init() {
        self.init(n: 0, sumF: 0, sumO: 0, sumFF: 0, sumOO: 0, sumFO: 0, sumAbsErr: 0, sumErr: 0, sumErrSq: 0)
    }

    /// An accumulator from stored sums (for example a row of a summary table).
    public init(
        n: Int, sumF: Double, sumO: Double, sumFF: Double, sumOO: Double, sumFO: Double,
        sumAbsErr: Double, sumErr: Double, sumErrSq: Double
    ) {
        self.n = n
        self.sumF = sumF
        self.sumO = sumO
        self.sumFF = sumFF
        self.sumOO = sumOO
        self.sumFO = sumFO
        self.sumAbsErr = sumAbsErr
        self.sumErr = sumErr
        self.sumErrSq = sumErrSq
    }

    /// Adds one forecast–observation pair; ignored if either value is NaN or infinite.
    public mutating func add(forecast f: Double, observed o: Double) {
        guard f.isFinite, o.isFinite else { return }
        let error = f - o
        n += 1
        sumF += f
        sumO += o
        sumFF += f * f
        sumOO += o * o
        sumFO += f * o
        sumAbsErr += abs(error)
        sumErr += error
        sumErrSq += error * error
    }

    /// Adds another accumulator's pairs to this one.
    public mutating func merge(_ other: ContinuousScores) {
        n += other.n
        sumF += other.sumF
        sumO += other.sumO
        sumFF += other.sumFF
        sumOO += other.sumOO
        sumFO += other.sumFO
        sumAbsErr += other.sumAbsErr
        sumErr += other.sumErr
        sumErrSq += other.sumErrSq
    }

    /// The two accumulators combined.
    public func merged(with other: ContinuousScores) -> ContinuousScores {
        var copy = self
        copy.merge(other)
        return copy
    }

    private var count: Double? { n > 0 ? Double(n) : nil }

    /// Mean error (ME), mean(f − o): positive when forecasts run high.
    /// The same sums after changing both series' unit by `x' = scale·x + offset` (°C to °F, ...).
    public func affine(scale a: Double, offset b: Double) -> ContinuousScores {
        let n = Double(self.n)
        return ContinuousScores(
            n: self.n, sumF: a * sumF + n * b, sumO: a * sumO + n * b,
            sumFF: a * a * sumFF + 2 * a * b * sumF + n * b * b,
            sumOO: a * a * sumOO + 2 * a * b * sumO + n * b * b,
            sumFO: a * a * sumFO + a * b * (sumF + sumO) + n * b * b,
            sumAbsErr: abs(a) * sumAbsErr, sumErr: a * sumErr, sumErrSq: a * a * sumErrSq)
    }

    public var bias: Double? { count.map { sumErr / $0 } }

    /// Mean absolute error, mean|f − o|.
    public var mae: Double? { count.map { sumAbsErr / $0 } }

    /// Mean squared error, mean(f − o)².
    public var mse: Double? { count.map { sumErrSq / $0 } }

    /// Root mean squared error, √MSE.
    public var rmse: Double? { mse.map { $0.squareRoot() } }

    /// Sample standard deviation of the error, divisor n − 1 as MET's ESTDEV: √(Σ(e − ē)² / (n − 1)),
    /// clamped at 0 where rounding would make it negative; nil below 2 pairs.
    /// RMSE² = bias² + errorStdDev² · (n − 1) / n.
    public var errorStdDev: Double? {
        guard n >= 2, let bias else { return nil }
        // Σe² − Σe·bias with a single rounding (fused multiply-add): the centred sum of squares.
        let centred = sumErrSq.addingProduct(-sumErr, bias)
        return max(0, centred / Double(n - 1)).squareRoot()
    }

    /// Pearson correlation of f and o; `nil` when either has no variance.
    ///
    /// Uses centred sums Sff = Σf² − Σf·mean(f) (and likewise Soo, Sfo) rather than n·Σf² − (Σf)²,
    /// which squares the magnitude before cancelling. A variance below the rounding noise that the
    /// sums can carry (n·ε·Σf²) counts as zero, so a constant series gives `nil` instead of noise.
    public var correlation: Double? {
        guard let count, n >= 2 else { return nil }
        let meanF = sumF / count
        let meanO = sumO / count
        let sff = sumFF.addingProduct(-sumF, meanF)
        let soo = sumOO.addingProduct(-sumO, meanO)
        let sfo = sumFO.addingProduct(-sumF, meanO)
        let noise = count * Double.ulpOfOne
        guard sff > noise * sumFF, soo > noise * sumOO else { return nil }
        // √Sff·√Soo rather than √(Sff·Soo): the product can overflow or underflow on its own.
        let r = sfo / (sff.squareRoot() * soo.squareRoot())
        return min(1, max(-1, r))
    }

    /// Multiplicative bias mean(f) / mean(o); `nil` when mean(o) is 0.
    public var multiplicativeBias: Double? {
        guard n > 0, sumO != 0 else { return nil }
        return sumF / sumO
    }

    /// Mean forecast value.
    public var meanForecast: Double? { count.map { sumF / $0 } }

    /// Mean observed value.
    public var meanObserved: Double? { count.map { sumO / $0 } }
}

/// A 2×2 contingency table for a yes/no event such as "precipitation ≥ 0.1 mm".
///
/// `a` hits (forecast yes, observed yes), `b` false alarms (yes, no), `c` misses (no, yes),
/// `d` correct negatives (no, no). Scores follow MET appendix C; each is `nil` when its
/// denominator is 0.
public struct Contingency: Sendable, Equatable {
    public var a: Int
    public var b: Int
    public var c: Int
    public var d: Int

    /// A table from counts (all zero by default).
    public init(a: Int = 0, b: Int = 0, c: Int = 0, d: Int = 0) {
        self.a = a
        self.b = b
        self.c = c
        self.d = d
    }

    /// Total number of pairs, a + b + c + d.
    public var n: Int { a + b + c + d }

    /// Counts one pair; the event happens when a value is `>= threshold`.
    /// A pair with a NaN or infinite value is ignored.
    public mutating func add(forecast f: Double, observed o: Double, threshold: Double) {
        guard f.isFinite, o.isFinite else { return }
        switch (f >= threshold, o >= threshold) {
        case (true, true): a += 1
        case (true, false): b += 1
        case (false, true): c += 1
        case (false, false): d += 1
        }
    }

    /// Adds another table's counts to this one.
    public mutating func merge(_ other: Contingency) {
        a += other.a
        b += other.b
        c += other.c
        d += other.d
    }

    // Doubles from here on: products of counts such as (a+b)(a+c) may exceed Int for huge tables.
    private var fa: Double { Double(a) }
    private var fb: Double { Double(b) }
    private var fc: Double { Double(c) }
    private var fd: Double { Double(d) }

    private static func ratio(_ numerator: Double, _ denominator: Double) -> Double? {
        denominator == 0 ? nil : numerator / denominator
    }

    /// Probability of detection (hit rate), a / (a + c).
    public var pod: Double? { Self.ratio(fa, fa + fc) }

    /// False alarm ratio, b / (a + b).
    public var far: Double? { Self.ratio(fb, fa + fb) }

    /// Probability of false detection (false alarm rate), b / (b + d).
    public var pofd: Double? { Self.ratio(fb, fb + fd) }

    /// Critical success index (threat score), a / (a + b + c).
    public var csi: Double? { Self.ratio(fa, fa + fb + fc) }

    /// Frequency bias, (a + b) / (a + c): above 1 when the event is forecast more often than it occurs.
    public var frequencyBias: Double? { Self.ratio(fa + fb, fa + fc) }

    /// Equitable threat score (Gilbert skill score), (a − aᵣ) / (a + b + c − aᵣ) with aᵣ = (a+b)(a+c)/n,
    /// the hits expected by chance.
    public var ets: Double? {
        guard n > 0 else { return nil }
        let chanceHits = (fa + fb) * (fa + fc) / Double(n)
        return Self.ratio(fa - chanceHits, fa + fb + fc - chanceHits)
    }

    /// Heidke skill score, 2(ad − bc) / ((a+c)(c+d) + (a+b)(b+d)).
    public var hss: Double? {
        Self.ratio(2 * (fa * fd - fb * fc), (fa + fc) * (fc + fd) + (fa + fb) * (fb + fd))
    }
}

/// The Brier score of probability forecasts of a yes/no event, mean (p − o)² with o ∈ {0, 1}.
public struct BrierScore: Sendable, Equatable {
    /// Number of forecasts.
    public var n: Int
    /// Σ(p − o)².
    public var sumSquaredError: Double
    /// How many times the event occurred (for the sample climatology).
    public var occurrences: Int

    /// An accumulator from stored sums (all zero by default).
    public init(n: Int = 0, sumSquaredError: Double = 0, occurrences: Int = 0) {
        self.n = n
        self.sumSquaredError = sumSquaredError
        self.occurrences = occurrences
    }

    /// Adds one forecast: a probability in percent (Open-Meteo's `precipitation_probability`, 0...100)
    /// and whether the event occurred. A NaN or infinite probability is ignored.
    public mutating func add(probabilityPercent: Double, occurred: Bool) {
        guard probabilityPercent.isFinite else { return }
        let p = probabilityPercent / 100
        let error = p - (occurred ? 1 : 0)
        n += 1
        sumSquaredError += error * error
        if occurred { occurrences += 1 }
    }

    /// Adds another accumulator's forecasts to this one.
    public mutating func merge(_ other: BrierScore) {
        n += other.n
        sumSquaredError += other.sumSquaredError
        occurrences += other.occurrences
    }

    /// The Brier score, 0 (perfect) ... 1; `nil` when `n == 0`.
    public var score: Double? { n > 0 ? sumSquaredError / Double(n) : nil }

    /// How often the event occurred, ō.
    public var baseRate: Double? { n > 0 ? Double(occurrences) / Double(n) : nil }

    /// Brier skill score against the sample climatology, 1 − BS / (ō(1 − ō));
    /// `nil` when the event always or never occurred.
    public var skillScore: Double? {
        guard let score, let baseRate else { return nil }
        return SkillScore.mse(forecastMSE: score, referenceMSE: baseRate * (1 - baseRate))
    }
}

/// Skill scores relative to a reference forecast (persistence, climatology, another model).
public struct SkillScore {
    /// MSE skill score (MET's MSESS), 1 − MSE_forecast / MSE_reference: 1 is perfect, 0 no better
    /// than the reference, negative worse. `nil` when the reference MSE is 0 (or either is not finite).
    public static func mse(forecastMSE: Double, referenceMSE: Double) -> Double? {
        guard forecastMSE.isFinite, referenceMSE.isFinite, referenceMSE != 0 else { return nil }
        return 1 - forecastMSE / referenceMSE
    }

    /// The MAE form, 1 − MAE_forecast / MAE_reference; `nil` when the reference MAE is 0.
    public static func mae(forecastMAE: Double, referenceMAE: Double) -> Double? {
        mse(forecastMSE: forecastMAE, referenceMSE: referenceMAE)
    }
}
