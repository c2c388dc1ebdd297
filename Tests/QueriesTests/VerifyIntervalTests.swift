import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxQueries

/// Days of hourly pairs with known true scores: error = μ + σ(√a·z_day + √(1−a)·w_hour), z an
/// AR(1) process over days with coefficient φ, w independent; observations a daily cycle of
/// amplitude 4 plus noise of SD 2 (variance 12), forecasts observation + error.
struct KnownDays {
    var days: Int
    var phi = 0.0
    var shared = 0.0
    let mu = 0.5, sigma = 1.5

    /// The true bias, MAE, RMSE, error SD and correlation.
    var truth: [IntervalScore: Double] {
        let z = mu / sigma
        let normalTail = 0.5 * erfc(z / 2.0.squareRoot())
        let mae = sigma * (2 / Double.pi).squareRoot() * exp(-z * z / 2) + mu * (1 - 2 * normalTail)
        return [
            .bias: mu, .mae: mae, .rmse: (mu * mu + sigma * sigma).squareRoot(), .errorSD: sigma,
            .correlation: (12 / (12 + sigma * sigma)).squareRoot()
        ]
    }

    /// The analytical standard errors of bias and MAE for independent hours.
    func standardErrors(n: Int) -> [IntervalScore: Double] {
        let mae = truth[.mae]!
        return [
            .bias: sigma / Double(n).squareRoot(),
            .mae: (mu * mu + sigma * sigma - mae * mae).squareRoot() / Double(n).squareRoot()
        ]
    }

    func draw(_ random: inout NormalSource) -> [(start: Int64, sums: SummarySums)] {
        var z = random.normal()
        var out: [(start: Int64, sums: SummarySums)] = []
        for day in 0..<days {
            if day > 0 { z = phi * z + (1 - phi * phi).squareRoot() * random.normal() }
            var sums = SummarySums()
            for hour in 0..<24 {
                let observed = 10 + 4 * sin(2 * Double.pi * Double(hour) / 24) + 2 * random.normal()
                let error = mu + sigma * (shared.squareRoot() * z + (1 - shared).squareRoot() * random.normal())
                sums.continuous.add(forecast: observed + error, observed: observed)
            }
            out.append((start: Int64(day) * 86_400, sums: sums))
        }
        return out
    }
}

/// How often the intervals cover the truth, and how wide they are against the analytical SE.
struct Coverage {
    var covered: [IntervalScore: Int] = [:]
    /// Misses with the truth above the interval (the rest are below it).
    var above: [IntervalScore: Int] = [:]
    var widthRatio: [IntervalScore: Double] = [:]
    var repetitions = 0
    var blockLength = 0.0
    /// Means over the repetitions of the error variance s² and of s² + V̂ − s²/n, V̂ the squared SE of the
    /// unwidened bias interval: the check that V̂ restores what Σ(e − ē)² misses when errors persist.
    var variance = 0.0, correctedVariance = 0.0

    static let scores: [IntervalScore] = [.bias, .mae, .rmse, .errorSD, .correlation]

    static func run(
        _ days: KnownDays, repetitions: Int, resamples: Int, seed: UInt64, adjusted: Bool = true,
        method: IntervalVariants.Method = .init()
    ) -> Coverage {
        var random = NormalSource(state: seed)
        var result = Coverage(repetitions: repetitions)
        let truth = days.truth
        let errors = days.standardErrors(n: days.days * 24)
        for repetition in 0..<repetitions {
            let sample = days.draw(&random)
            guard
                let intervals = IntervalVariants.intervals(
                    days: sample, confidence: 0.95, resamples: resamples, adjusted: adjusted,
                    seed: UInt64(repetition) &+ seed, method: method)
            else { continue }
            result.blockLength += intervals.blockLength / Double(repetitions)
            var total = SummarySums()
            for day in sample { total.merge(day.sums) }
            if let sd = total.continuous.errorStdDev, let b = intervals.scores[.bias] {
                let widen = DayBootstrap.widening(
                    days: intervals.days, blockLength: intervals.blockLength, confidence: 0.95)
                let se = (b.high - b.low) / (2 * 1.959_964 * widen)
                result.variance += sd * sd / Double(repetitions)
                result.correctedVariance +=
                    (sd * sd + se * se - sd * sd / Double(total.continuous.n)) / Double(repetitions)
            }
            for score in scores {
                guard let interval = intervals.scores[score] else { continue }
                if interval.low <= truth[score]! && truth[score]! <= interval.high {
                    result.covered[score, default: 0] += 1
                } else if truth[score]! > interval.high {
                    result.above[score, default: 0] += 1
                }
                if let se = errors[score] {
                    result.widthRatio[score, default: 0] +=
                        (interval.high - interval.low) / (2 * 1.959_964 * se) / Double(repetitions)
                }
            }
        }
        return result
    }

    func rate(_ score: IntervalScore) -> Double { Double(covered[score] ?? 0) / Double(repetitions) }
}

@Suite("query verify: intervals by a block bootstrap over valid days")
struct VerifyIntervalTests {
    @Test("the same days and seed give the same intervals; fewer than 10 days give none")
    func seededAndMinimum() throws {
        var random = NormalSource(state: 3)
        let days = KnownDays(days: 30).draw(&random)
        let a = try #require(DayBootstrap.intervals(days: days, confidence: 0.95, seed: 9))
        let b = try #require(DayBootstrap.intervals(days: days.reversed(), confidence: 0.95, seed: 9))
        #expect(a == b)
        #expect(a.days == 30 && a.resamples == DayBootstrap.defaultResamples)
        var total = SummarySums()
        for day in days { total.merge(day.sums) }
        for score in Coverage.scores {
            let interval = try #require(a.scores[score])
            let value = try #require(score.value(total))
            #expect(interval.low < value && value < interval.high, "\(score)")
        }
        #expect(DayBootstrap.intervals(days: Array(days.prefix(9)), confidence: 0.95, seed: 9) == nil)
        #expect(DayBootstrap.intervals(days: Array(days.prefix(10)), confidence: 0.95, seed: 9) != nil)
    }

    @Test("the Monte Carlo's variants with verify's method give verify's intervals to the bit")
    func variantsDefaultIsVerify() throws {
        var random = NormalSource(state: 12)
        for known in [KnownDays(days: 30), KnownDays(days: 60, phi: 0.6, shared: 0.5)] {
            let days = known.draw(&random)
            let verify = try #require(DayBootstrap.intervals(days: days, confidence: 0.9, resamples: 300, seed: 3))
            let variant = try #require(
                IntervalVariants.intervals(days: days, confidence: 0.9, resamples: 300, seed: 3))
            #expect(verify == variant)
            #expect(verify.scores.count == 5)
        }
    }

    @Test(
        "the compact resampling loop gives exactly the intervals of the plain one (gaps, a shared day, a score some days lack)"
    )
    func compactMatchesPlain() throws {
        let precipitation = try #require(Variables.hourlyVariable(named: "precipitation"))
        var random = NormalSource(state: 8)
        var days: [(start: Int64, sums: SummarySums)] = []
        for day in 0..<40 where day % 7 != 3 {
            var sums = SummarySums()
            for hour in 0..<24 {
                let observed = max(0, random.normal())
                let forecast = max(0, observed + 0.5 * random.normal())
                if day % 3 == 0 {
                    sums.add(
                        forecast: forecast, observed: observed, reference: hour % 2 == 0 ? observed : nil,
                        variable: precipitation, threshold: 0.2)
                } else {
                    sums.continuous.add(forecast: forecast, observed: observed)
                }
            }
            days.append((start: Int64(day) * 86_400, sums: sums))
        }
        // A 23-hour day's start rounds onto the day before's position: the two add up.
        days.append((start: 9 * 86_400 + 3_600, sums: days[8].sums))
        for length in [1.0, 3.5] {
            let ours = try #require(
                DayBootstrap.intervals(
                    days: days, confidence: 0.9, resamples: 300, blockLength: length, adjusted: false, widened: false,
                    spread: false, seed: 5))
            let plain = plainPercentiles(days, resamples: 300, blockLength: length, confidence: 0.9, seed: 5)
            #expect(ours.scores.count >= 8)
            #expect(ours.scores == plain, "block length \(length)")
        }
    }

    /// The resampling loop as first written (every column of every day, with a present flag each),
    /// kept as the reference the compact loop must match to the bit.
    func plainPercentiles(
        _ input: [(start: Int64, sums: SummarySums)], resamples: Int, blockLength length: Double, confidence: Double,
        seed: UInt64
    ) -> [IntervalScore: ScoreInterval] {
        let days = input.sorted { $0.start < $1.start }
        let positions = days.map { Int((Double($0.start - days[0].start) / 86_400).rounded()) }
        let span = positions.last! + 1, width = SummarySums.columns.count
        var rows = [Double](repeating: 0, count: span * width)
        var present = [Bool](repeating: false, count: span * width), occupied = [Bool](repeating: false, count: span)
        var total = SummarySums()
        for (day, position) in zip(days, positions) {
            total.merge(day.sums)
            occupied[position] = true
            for (column, value) in day.sums.values.enumerated() {
                guard let value else { continue }
                rows[position * width + column] += value
                present[position * width + column] = true
            }
        }
        var random = SplitMix(state: seed)
        let scores = IntervalScore.allCases.filter { $0.value(total) != nil }
        var samples = [[Double]](repeating: [], count: scores.count)
        let jump = 1 / max(1, length)
        for _ in 0..<resamples {
            var sum = [Double](repeating: 0, count: width), has = [Bool](repeating: false, count: width)
            var position = random.below(span)
            for step in 0..<span {
                if step > 0 {
                    position = jump >= 1 || random.uniform() < jump ? random.below(span) : (position + 1) % span
                }
                guard occupied[position] else { continue }
                for c in 0..<width where present[position * width + c] {
                    sum[c] += rows[position * width + c]
                    has[c] = true
                }
            }
            let resample = SummarySums(values: (0..<width).map { has[$0] ? sum[$0] : nil })
            for (index, score) in scores.enumerated() {
                if let value = score.value(resample), value.isFinite { samples[index].append(value) }
            }
        }
        var out: [IntervalScore: ScoreInterval] = [:]
        let tail = (1 - confidence) / 2
        for (index, score) in scores.enumerated() {
            let sorted = samples[index].sorted()
            guard sorted.count >= resamples * 9 / 10, let estimate = score.value(total),
                let low = Quantiles.quantile(sorted, tail), let high = Quantiles.quantile(sorted, 1 - tail)
            else { continue }
            let possible = score.possible
            out[score] = ScoreInterval(
                low: max(possible.lowerBound, min(estimate, low)), high: min(possible.upperBound, max(estimate, high)))
        }
        return out
    }

    @Test("the block length follows the days: about 1 for independent days, longer when errors persist")
    func blockLength() {
        var random = NormalSource(state: 5)
        let independent = KnownDays(days: 120).draw(&random)
        let persistent = KnownDays(days: 120, phi: 0.8, shared: 0.7).draw(&random)
        let a = DayBootstrap.intervals(days: independent, confidence: 0.95, resamples: 10, seed: 1)!.blockLength
        let b = DayBootstrap.intervals(days: persistent, confidence: 0.95, resamples: 10, seed: 1)!.blockLength
        #expect(a < 2, "independent \(a)")
        #expect(b > 3, "persistent \(b)")
    }

    @Test("the Politis–White block length the Monte Carlo compares: 1 for independent days, longer for AR(1) days")
    func politisWhite() {
        var random = NormalSource(state: 12)
        let independent = (0..<120).map { _ in random.normal() }
        var x = 0.0
        let persistent = (0..<120).map { _ -> Double in
            x = 0.7 * x + random.normal()
            return x
        }
        #expect(IntervalVariants.politisWhite(independent) < 1.5)
        let length = IntervalVariants.politisWhite(persistent)
        // AR(1) at 0.7: (2ρ / (1 − ρ²))^{2/3} n^{1/3} ≈ 9.7.
        #expect(length > 4 && length < 15, "\(length)")
        // A gap (NaN) is skipped, not taken for a value.
        var gapped = persistent
        gapped[40] = .nan
        #expect(IntervalVariants.politisWhite(gapped).isFinite)
    }

    @Test("95% intervals cover the true scores (cheap sample: 60 repetitions)")
    func coverageQuick() {
        let coverage = Coverage.run(KnownDays(days: 40), repetitions: 60, resamples: 200, seed: 21)
        for score in Coverage.scores { #expect(coverage.rate(score) >= 0.85, "\(score) \(coverage.rate(score))") }
        let ratio = coverage.widthRatio[.mae] ?? 0
        #expect(ratio > 0.85 && ratio < 1.15, "MAE width / analytical \(ratio)")
    }

    @Test("days sharing their weather: BCa covers the skewed second-moment scores more often than plain percentiles")
    func bcaCoversSkewedScores() {
        let days = KnownDays(days: 120, phi: 0.6, shared: 0.5)
        let bca = Coverage.run(days, repetitions: 120, resamples: 400, seed: 41)
        let plain = Coverage.run(days, repetitions: 120, resamples: 400, seed: 41, adjusted: false)
        let second: [IntervalScore] = [.rmse, .errorSD, .correlation]
        let gained = second.map { (bca.covered[$0] ?? 0) - (plain.covered[$0] ?? 0) }
        #expect(gained.reduce(0, +) >= 6, "BCa − percentile, covered of 120: \(gained)")
        for score in Coverage.scores { #expect(bca.rate(score) >= 0.88, "\(score) \(bca.rate(score))") }
    }

    @Test(
        "persistent errors: the spread scores' far ends reach further (error SD up, correlation down), nothing else moves",
        arguments: [(phi: 0.0, shared: 0.0), (phi: 0.6, shared: 0.5)])
    func spreadCorrectionMovesSpreadEnds(phi: Double, shared: Double) throws {
        var random = NormalSource(state: 31)
        let days = KnownDays(days: 60, phi: phi, shared: shared).draw(&random)
        let ours = try #require(DayBootstrap.intervals(days: days, confidence: 0.95, resamples: 500, seed: 2))
        let before = try #require(
            DayBootstrap.intervals(days: days, confidence: 0.95, resamples: 500, spread: false, seed: 2))
        for score in IntervalScore.allCases where ![.rmse, .errorSD, .correlation].contains(score) {
            #expect(ours.scores[score] == before.scores[score], "\(score)")
        }
        let sd = try #require(ours.scores[.errorSD]), sdBefore = try #require(before.scores[.errorSD])
        let rmse = try #require(ours.scores[.rmse]), rmseBefore = try #require(before.scores[.rmse])
        let r = try #require(ours.scores[.correlation]), rBefore = try #require(before.scores[.correlation])
        #expect(rmse.low == rmseBefore.low && rmse.high >= rmseBefore.high)
        #expect(sd.high >= sdBefore.high && r.low <= rBefore.low)
        let width = sdBefore.high - sdBefore.low
        if shared == 0 {
            // Independent days: D is about 0 and K about 30 blocks, so the ends hardly move.
            #expect(sd.high - sdBefore.high < 0.03 * width && abs(sd.low - sdBefore.low) < 0.01 * width)
        } else {
            // About 3.5 blocks of 17 days: the upper end goes out by about a tenth of the width, the lower one up.
            #expect(sd.high - sdBefore.high > 0.05 * width, "\(sd) vs \(sdBefore)")
            #expect(sd.low > sdBefore.low)
            #expect(r.high < rBefore.high, "the correlation's ends move down with the record's calm")
        }
    }

    @Test(
        "calm records of persistent errors: error SD's and RMSE's intervals stop short of the truth less often, the correlation's overshoot it less often"
    )
    func spreadCorrectionCoversCalmRecords() {
        let days = KnownDays(days: 60, phi: 0.6, shared: 0.5)
        let ours = Coverage.run(days, repetitions: 150, resamples: 400, seed: 47)
        let before = Coverage.run(days, repetitions: 150, resamples: 400, seed: 47, method: .init(spread: []))
        for score in [IntervalScore.bias, .mae] { #expect(ours.covered[score] == before.covered[score]) }
        let fewer = [IntervalScore.errorSD, .rmse].map { (before.above[$0] ?? 0) - (ours.above[$0] ?? 0) }
        #expect(fewer[0] >= 3, "error SD misses above the interval, before − after: \(fewer)")
        #expect(fewer[1] >= 1, "RMSE misses above the interval, before − after: \(fewer)")
        let below = [IntervalScore.correlation].map { score in
            (before.repetitions - (before.covered[score] ?? 0) - (before.above[score] ?? 0))
                - (ours.repetitions - (ours.covered[score] ?? 0) - (ours.above[score] ?? 0))
        }
        #expect(below[0] >= 2, "correlation misses below the interval, before − after: \(below)")
    }

    @Test(
        "the t/z widening verify and the ensemble intervals share: t(ν)/z for ν = days / 2L, at least 2",
        arguments: [
            (60, 1.0, 2.042_272 / 1.959_964), (60, 17.0, 4.302_653 / 1.959_964), (40, 4.0, 2.570_582 / 1.959_964)
        ])
    func widening(days: Int, blockLength: Double, expected: Double) {
        let widen = DayBootstrap.widening(days: days, blockLength: blockLength, confidence: 0.95)
        #expect(abs(widen - expected) < 1e-5, "\(widen)")
    }

    /// Days of pairs scoring every interval score between them: a temperature with a persistence
    /// reference (bias … correlation, persistence skill), precipitation (POD, FAR, CSI, ETS against
    /// 0.2 mm) and a precipitation probability (Brier).
    static func everyScoreDays(seed: UInt64) -> [[(start: Int64, sums: SummarySums)]] {
        var random = NormalSource(state: seed)
        let temperature = Variables.hourlyVariable(named: "temperature_2m")!
        let precipitation = Variables.hourlyVariable(named: "precipitation")!
        let probability = Variables.hourlyVariable(named: "precipitation_probability")!
        var sets = [[(start: Int64, sums: SummarySums)]](repeating: [], count: 3)
        for day in 0..<40 {
            var sums = [SummarySums](repeating: SummarySums(), count: 3)
            var previous = 10.0
            for hour in 0..<24 {
                let observed = 10 + 4 * sin(2 * Double.pi * Double(hour) / 24) + 2 * random.normal()
                sums[0].add(
                    forecast: observed + 0.4 + 1.5 * random.normal(), observed: observed, reference: previous,
                    variable: temperature, threshold: 0)
                previous = observed
                let rain = max(0, random.normal() - 0.3)
                let forecastRain = max(0, rain + 0.4 * random.normal())
                sums[1].add(
                    forecast: forecastRain, observed: rain, reference: nil, variable: precipitation, threshold: 0.2)
                let chance = (100 * min(1, max(0, rain + 0.3 * random.normal()))).rounded()
                sums[2].add(
                    forecast: chance, observed: rain, reference: nil, variable: probability, threshold: 0.2)
            }
            for index in 0..<3 { sets[index].append((start: Int64(day) * 86_400, sums: sums[index])) }
        }
        return sets
    }

    @Test(
        "agrees with scipy.stats.bootstrap (percentile and BCa) and with numpy's bootstrap-t (the alternative the Monte Carlo measures), independent days, within Monte Carlo error, for every score with an interval",
        .enabled(
            if: scipyPython != nil, "scipy is not installed (.ci/run's .build/reference-venv, or WXDB_REFERENCE_PYTHON)"
        ))
    func agreesWithScipy() throws {
        let folder = Scratch.folder("scipy-bootstrap")
        defer { try? FileManager.default.removeItem(at: folder) }
        // numpy's own scores of summed days, from the named sums: nothing of wxdb's scoring is reused.
        let script = """
            import json, sys, numpy as np
            from scipy.stats import bootstrap
            names, days = json.load(open(sys.argv[1]))
            d = np.array(days)
            col = {name: i for i, name in enumerate(names)}
            def g(s, name):
                return s[..., col[name]]
            def ratio(x, y):
                return x / y
            def contingency(s):
                return g(s, "hits"), g(s, "false_alarms"), g(s, "misses"), g(s, "correct_negatives")
            def ets(s):
                a, b, c, dd = contingency(s)
                chance = (a + b) * (a + c) / (a + b + c + dd)
                return (a - chance) / (a + b + c - chance)
            def correlation(s):
                n = g(s, "n")
                sff = g(s, "sum_ff") - g(s, "sum_f") ** 2 / n
                soo = g(s, "sum_oo") - g(s, "sum_o") ** 2 / n
                sfo = g(s, "sum_fo") - g(s, "sum_f") * g(s, "sum_o") / n
                return sfo / np.sqrt(sff * soo)
            scores = {
                "bias": lambda s: g(s, "sum_err") / g(s, "n"),
                "mae": lambda s: g(s, "sum_abs_err") / g(s, "n"),
                "rmse": lambda s: np.sqrt(g(s, "sum_err_sq") / g(s, "n")),
                "error_sd": lambda s: np.sqrt(
                    (g(s, "sum_err_sq") - g(s, "sum_err") ** 2 / g(s, "n")) / (g(s, "n") - 1)),
                "correlation": correlation,
                "persistence_skill": lambda s: 1 - g(s, "forecast_sum_err_sq_ref") / g(s, "persistence_sum_err_sq"),
                "pod": lambda s: ratio(g(s, "hits"), g(s, "hits") + g(s, "misses")),
                "far": lambda s: ratio(g(s, "false_alarms"), g(s, "hits") + g(s, "false_alarms")),
                "csi": lambda s: ratio(g(s, "hits"), g(s, "hits") + g(s, "false_alarms") + g(s, "misses")),
                "ets": ets,
                "brier": lambda s: g(s, "brier_sum") / g(s, "brier_n"),
            }
            # the studentized bootstrap the Monte Carlo compares (not in scipy), written again in numpy from its
            # definition: each day's influence = score of all days − score without it; SE² = Σ(u − ū)²
            # (batches of one day); per resample t* = (g(θ*) − g(θ̂)) / (SE*·g'(θ*)) on the stabilising
            # scale g (log for MAE/RMSE/error SD, Fisher's z for correlation), SE* the same sum over the
            # resample's days; interval g⁻¹(g(θ̂) − t*₀.₉₇₅·SE·g'(θ̂)) … g⁻¹(g(θ̂) − t*₀.₀₂₅·SE·g'(θ̂)).
            possible = {"mae": (0, np.inf), "rmse": (0, np.inf), "error_sd": (0, np.inf), "correlation": (-1, 1),
                        "persistence_skill": (-np.inf, 1), "pod": (0, 1), "far": (0, 1), "csi": (0, 1),
                        "brier": (0, 1), "ets": (-1 / 3, 1)}
            def student(f, name, rng, resamples=20000):
                total = d.sum(axis=0)
                est = f(total)
                with np.errstate(all="ignore"):
                    loo = f(total[None, :] - d)
                u = np.where(np.isfinite(loo), est - loo, 0.0)
                se = np.sqrt(((u - u.mean()) ** 2).sum())
                idx = rng.integers(0, len(d), size=(resamples, len(d)))
                with np.errstate(all="ignore"):
                    theta = f(d[idx].sum(axis=1))
                uu = u[idx]
                se_star = np.sqrt(((uu - uu.mean(axis=1, keepdims=True)) ** 2).sum(axis=1))
                if name in ("mae", "rmse", "error_sd"):
                    fw, bk, slope = np.log, np.exp, lambda x: 1 / x
                elif name == "correlation":
                    fw, bk, slope = np.arctanh, np.tanh, lambda x: 1 / (1 - x * x)
                else:
                    fw, bk, slope = (lambda x: x), (lambda x: x), (lambda x: 1.0 + 0 * x)
                with np.errstate(all="ignore"):
                    t = (fw(theta) - fw(est)) / (se_star * slope(theta))
                t = t[np.isfinite(theta) & (se_star > 0) & np.isfinite(t)]
                t_low, t_high = np.quantile(t, 0.025), np.quantile(t, 0.975)
                y, se_y = fw(est), se * slope(est)
                low, high = bk(y - t_high * se_y), bk(y - t_low * se_y)
                lb, ub = possible.get(name, (-np.inf, np.inf))
                return [float(max(lb, min(est, low))), float(min(ub, max(est, high)))]
            # verify's spread correction, written again from its definition: D = SE² · K/(K − 1) − s²/n, SE the
            # bias interval's half-width over z, K the number of blocks (days, blocks of one day); error SD's ends
            # √(end² + D), RMSE's upper end √(high² + D), the correlation's ends moved on Fisher's z by
            # atanh(Sfo / √((Sff + n·D)·Soo)) − atanh(r); the far ends first √(K/(K − 1)) further from the estimate.
            def correct(bca):
                total = d.sum(axis=0)
                n = g(total, "n")
                k = len(d)
                c = k / (k - 1)
                se = (bca["bias"][1] - bca["bias"][0]) / (2 * 1.959963984540054)
                sd = scores["error_sd"](total)
                dd = se * se * c - sd * sd / n
                far = np.sqrt(c)
                out = {}
                for name, (low, high) in bca.items():
                    est = scores[name](total)
                    if name == "error_sd":
                        low, high = np.sqrt(max(0, low ** 2 + dd)), np.sqrt(max(0, (est + (high - est) * far) ** 2 + dd))
                    elif name == "rmse":
                        high = np.sqrt(max(0, (est + (high - est) * far) ** 2 + dd))
                    elif name == "correlation":
                        low = est - (est - low) * far
                        sff = g(total, "sum_ff") - g(total, "sum_f") ** 2 / n
                        soo = g(total, "sum_oo") - g(total, "sum_o") ** 2 / n
                        sfo = g(total, "sum_fo") - g(total, "sum_f") * g(total, "sum_o") / n
                        delta = np.arctanh(sfo / np.sqrt((sff + n * dd) * soo)) - np.arctanh(est)
                        low, high = np.tanh(np.arctanh(low) + delta), np.tanh(np.arctanh(high) + delta)
                    lb, ub = possible.get(name, (-np.inf, np.inf))
                    out[name + "_corrected"] = [float(max(lb, min(est, low))), float(min(ub, max(est, high)))]
                return out
            out = {}
            bca = {}
            for name in sys.argv[2].split(","):
                out[name + "_student"] = student(scores[name], name, np.random.default_rng(2))
                f = scores[name]
                stat = lambda i, axis=-1: f(d[i.astype(int)].sum(axis=-2))
                for method in ["percentile", "BCa"]:
                    r = bootstrap((np.arange(len(d)),), stat, vectorized=True, batch=2000, n_resamples=20000,
                                  confidence_level=0.95, method=method, random_state=np.random.default_rng(1))
                    out[name + ("" if method == "percentile" else "_bca")] = [
                        float(r.confidence_interval.low), float(r.confidence_interval.high)]
                bca[name] = out[name + "_bca"]
            out.update(correct(bca))
            print(json.dumps(out))
            """
        let path = folder.appendingPathComponent("reference.py").path
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        var checked = Set<IntervalScore>(), moves = Set<String>()
        // Plus days whose errors share the day's weather: resampled one day at a time, the bias interval's SE² is
        // the day-to-day variance of the mean error, well over s²/n, so the correction moves the ends.
        var random = NormalSource(state: 23)
        let persistent = KnownDays(days: 40, phi: 0, shared: 0.9).draw(&random)
        for (index, days) in (Self.everyScoreDays(seed: 17) + [persistent]).enumerated() {
            let ours = try #require(
                DayBootstrap.intervals(
                    days: days, confidence: 0.95, resamples: 20_000, blockLength: 1, adjusted: false, widened: false,
                    spread: false, seed: 4))
            // The bootstrap-t the Monte Carlo compares, against numpy's own bootstrap-t (scipy has none).
            let student = try #require(
                IntervalVariants.intervals(
                    days: days, confidence: 0.95, resamples: 20_000, blockLength: 1, seed: 4,
                    method: .init(studentized: true, stabilised: true, spread: [])))
            // Blocks of one day: the block jackknife is scipy's delete-one jackknife.
            let bca = try #require(
                DayBootstrap.intervals(
                    days: days, confidence: 0.95, resamples: 20_000, blockLength: 1, widened: false, spread: false,
                    seed: 4))
            // Verify's spread-score correction on top (the same resamples), against numpy's own correction of
            // scipy's BCa ends.
            let corrected = try #require(
                DayBootstrap.intervals(
                    days: days, confidence: 0.95, resamples: 20_000, blockLength: 1, widened: false, seed: 4))
            let present = SummarySums.columns.indices.filter { column in days.contains { $0.sums.values[column] != nil }
            }
            let rows = days.map { day in present.map { day.sums.values[$0] ?? 0 } }
            let input = folder.appendingPathComponent("days\(index).json")
            try JSONSerialization.data(withJSONObject: [present.map { SummarySums.columns[$0].name }, rows])
                .write(to: input)
            let scores = IntervalScore.allCases.filter { ours.scores[$0] != nil }
            let output = try runPython(
                try #require(scipyPython), [path, input.path, scores.map(\.rawValue).joined(separator: ",")])
            let reference = try #require(try JSONSerialization.jsonObject(with: output) as? [String: [Double]])
            for score in scores {
                let theirs = try #require(reference[score.rawValue])
                let interval = try #require(ours.scores[score])
                let width = theirs[1] - theirs[0]
                // Two independent 20 000-resample estimates: each end within 4% of the width.
                #expect(abs(interval.low - theirs[0]) < 0.04 * width, "\(score) low \(interval.low) vs \(theirs[0])")
                #expect(abs(interval.high - theirs[1]) < 0.04 * width, "\(score) high \(interval.high) vs \(theirs[1])")
                let theirsBCa = try #require(reference[score.rawValue + "_bca"])
                let adjusted = try #require(bca.scores[score])
                #expect(
                    abs(adjusted.low - theirsBCa[0]) < 0.04 * width,
                    "\(score) BCa low \(adjusted.low) vs \(theirsBCa[0])")
                #expect(
                    abs(adjusted.high - theirsBCa[1]) < 0.04 * width,
                    "\(score) BCa high \(adjusted.high) vs \(theirsBCa[1])")
                let theirsT = try #require(reference[score.rawValue + "_student"])
                let t = try #require(student.scores[score])
                let widthT = theirsT[1] - theirsT[0]
                #expect(abs(t.low - theirsT[0]) < 0.04 * widthT, "\(score) bootstrap-t low \(t.low) vs \(theirsT[0])")
                #expect(
                    abs(t.high - theirsT[1]) < 0.04 * widthT, "\(score) bootstrap-t high \(t.high) vs \(theirsT[1])")
                // The correction's move of each end, ours against numpy's: the same resamples on each side, so
                // the move is compared to 15% of itself (the bias intervals behind it differ by Monte Carlo error)
                // plus 0.5% of the width (independent days: a move of about nothing).
                let theirsCorrected = try #require(reference[score.rawValue + "_corrected"])
                let moved = try #require(corrected.scores[score])
                for (ourMove, theirMove, end) in [
                    (moved.low - adjusted.low, theirsCorrected[0] - theirsBCa[0], "low"),
                    (moved.high - adjusted.high, theirsCorrected[1] - theirsBCa[1], "high")
                ] {
                    #expect(
                        abs(ourMove - theirMove) <= 0.15 * abs(theirMove) + 0.005 * width,
                        "\(score) corrected \(end): moved \(ourMove) vs numpy \(theirMove)")
                    if abs(theirMove) > 0.01 * width { moves.insert(score.rawValue + " " + end) }
                }
                checked.insert(score)
            }
        }
        // The persistent set's correction is large enough to check: both ends of error SD and the correlation,
        // RMSE's upper end.
        #expect(
            moves.isSuperset(of: ["error_sd low", "error_sd high", "rmse high", "correlation low", "correlation high"]),
            "moved: \(moves.sorted())")
        // Every score verify gives an interval for is checked against the independent resampling.
        #expect(
            checked == Set(IntervalScore.allCases), "unchecked: \(Set(IntervalScore.allCases).subtracting(checked))")
    }

    @Test(
        "Monte Carlo coverage table (WXDB_MONTE_CARLO_VERIFY=FILE writes it)",
        .enabled(
            if: ProcessInfo.processInfo.environment["WXDB_MONTE_CARLO_VERIFY"] != nil,
            "slow: set WXDB_MONTE_CARLO_VERIFY=FILE"))
    func monteCarlo() throws {
        let environment = ProcessInfo.processInfo.environment
        let path = environment["WXDB_MONTE_CARLO_VERIFY"]!
        let repetitions = Int(environment["WXDB_MONTE_CARLO_REPS"] ?? "") ?? 1000
        // Alternatives to compare with the method verify uses (comma-separated): plain (percentiles,
        // no BCa), pw (Politis–White block length), keep95 (95% of the AR(1) long-run variance), and
        // -blocks after either for t(days / L − 1) instead of t(days / 2L) (these with BCa unless
        // they say student); bca (BCa widened by t/z, verify's method before the bootstrap-t), student
        // (bootstrap-t on the scores' own scale), and -log after either for the stabilising scales.
        let variants = (environment["WXDB_MONTE_CARLO_VARIANTS"] ?? "default").split(separator: ",").map(String.init)
        func percent(_ x: Double) -> String { String(format: "%.1f", 100 * x) }
        var text = "Repetitions per row: \(repetitions) (seeded), 1000 resamples each.\n"
        for variant in variants {
            var method = IntervalVariants.Method()
            if variant != "default" {
                method.studentized = variant.contains("student")
                method.stabilised = variant.contains("log")
            }
            if variant.hasPrefix("pw") { method.rule = .politisWhite }
            if variant.hasPrefix("keep95") { method.rule = .keep(share: 0.95) }
            if variant.hasSuffix("-blocks") { method.pairsOfBlocks = false }
            if variant == "batch" { method.growth = .batch }
            if variant == "nu1" { method.growth = .unclamped }
            // Every variant but default leaves out verify's spread-score treatments (round h32v; `none`: verify's
            // method before them) except those its +-joined tokens name: sd, corr, rmseup, far, vk (K / (K − 1) on V̂).
            if variant != "default" {
                var parts = DayBootstrap.SpreadCorrection.Parts()
                for token in variant.split(separator: "+") {
                    switch token {
                    case "sd": parts.insert(.errorSD)
                    case "corr": parts.insert(.correlation)
                    case "rmseup": parts.insert(.rmseUpper)
                    case "far": parts.insert(.farEnd)
                    case "vk": parts.insert(.blocks)
                    default: break
                    }
                }
                method.spread = parts
            }
            var lines = [
                "", "Method: \(variant)", "",
                "| days | days' errors | mean block length | coverage: bias | MAE | RMSE | error SD | correlation | width / analytical SE: bias | MAE | misses with the truth above the interval: RMSE / error SD / correlation | mean s² / s² + V̂ − s²/n (σ² = 2.25) |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"
            ]
            // WXDB_MONTE_CARLO_SEED=N: a fresh seed set (rows from N instead of 100).
            var seed = UInt64(environment["WXDB_MONTE_CARLO_SEED"] ?? "") ?? 100
            // WXDB_MONTE_CARLO_CELLS=60/0.6,120/0: only these rows (days / φ); each row keeps its seed.
            let cells = environment["WXDB_MONTE_CARLO_CELLS"].map { $0.split(separator: ",").map(String.init) }
            for (days, phi, shared, label) in [
                (60, 0.0, 0.0, "independent hours"), (120, 0.0, 0.0, "independent hours"),
                (60, 0.3, 0.5, "AR(1) φ = 0.3, half shared by the day"),
                (60, 0.6, 0.5, "AR(1) φ = 0.6, half shared by the day"),
                (120, 0.6, 0.5, "AR(1) φ = 0.6, half shared by the day")
            ] {
                if let cells, !cells.contains("\(days)/\(phi == 0 ? "0" : String(phi))") {
                    seed += 1
                    continue
                }
                let coverage = Coverage.run(
                    KnownDays(days: days, phi: phi, shared: shared), repetitions: repetitions, resamples: 1000,
                    seed: seed, adjusted: variant != "plain", method: method)
                seed += 1
                let ratios =
                    shared == 0
                    ? [IntervalScore.bias, .mae].map { String(format: "%.3f", coverage.widthRatio[$0] ?? 0) }
                    : ["–", "–"]
                lines.append(
                    "| \(days) | \(label) | \(String(format: "%.1f", coverage.blockLength)) | "
                        + Coverage.scores.map { percent(coverage.rate($0)) + " %" }.joined(separator: " | ")
                        + " | \(ratios.joined(separator: " | ")) | "
                        + [IntervalScore.rmse, .errorSD, .correlation].map { score in
                            "\(coverage.above[score] ?? 0) of \(coverage.repetitions - (coverage.covered[score] ?? 0))"
                        }.joined(separator: " / ")
                        + String(format: " | %.4f / %.4f |", coverage.variance, coverage.correctedVariance))
            }
            text += lines.joined(separator: "\n") + "\n"
        }
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }
}

/// A Python with scipy: `WXDB_REFERENCE_PYTHON`, else `.build/reference-venv`; nil when neither has it.
let scipyPython: String? = {
    let environment = ProcessInfo.processInfo.environment
    let candidates = [
        environment["WXDB_REFERENCE_PYTHON"], queriesPackageRoot.path + "/.build/reference-venv/bin/python"
    ]
    for case let path? in candidates where FileManager.default.isExecutableFile(atPath: path) {
        if (try? runPython(path, ["-c", "import scipy.stats"])) != nil { return path }
    }
    return nil
}()
