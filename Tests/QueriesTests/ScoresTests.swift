import Foundation
import Testing

@testable import WxCore
@testable import WxQueries

/// |a − b| ≤ tolerance, with `nil` never close.
private func close(_ a: Double?, _ b: Double, _ tolerance: Double = 1e-12) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance
}

private func scores(_ forecasts: [Double], _ observed: [Double]) -> ContinuousScores {
    var scores = ContinuousScores()
    for (f, o) in zip(forecasts, observed) { scores.add(forecast: f, observed: o) }
    return scores
}

@Suite("Continuous scores")
struct ContinuousScoresTests {
    @Test("hand-worked: f = [1, 2, 3], o = [2, 2, 5]")
    func handWorked() throws {
        // errors f − o = [−1, 0, −2]
        let s = scores([1, 2, 3], [2, 2, 5])
        #expect(s.n == 3)
        #expect(close(s.bias, -1))  // (−1 + 0 − 2) / 3
        #expect(close(s.mae, 1))  // (1 + 0 + 2) / 3
        #expect(close(s.mse, 5.0 / 3))  // (1 + 0 + 4) / 3
        #expect(close(s.rmse, (5.0 / 3).squareRoot()))
        #expect(close(s.errorStdDev, 1))  // deviations from the mean error: [0, 1, −1]; √(2 / (3 − 1)), MET's ESTDEV
        #expect(scores([5], [3]).errorStdDev == nil)  // one pair has no spread
        #expect(close(s.meanForecast, 2))
        #expect(close(s.meanObserved, 3))
        #expect(close(s.multiplicativeBias, 2.0 / 3))
        // deviations f: [−1, 0, 1], o: [−1, −1, 2]; Sfo = 3, Sff = 2, Soo = 6; r = 3/√12 = √3/2
        #expect(close(s.correlation, 3.0.squareRoot() / 2))
    }

    @Test("an empty accumulator has no scores")
    func empty() {
        let s = ContinuousScores()
        #expect(s.n == 0)
        let all = [
            s.bias, s.mae, s.mse, s.rmse, s.errorStdDev, s.correlation, s.multiplicativeBias, s.meanForecast,
            s.meanObserved
        ]
        #expect(all.allSatisfy { $0 == nil })
    }

    @Test("undefined scores are nil: no variance, observed mean 0")
    func undefined() {
        #expect(scores([1013.25, 1013.25, 1013.25], [1010, 1012, 1015]).correlation == nil)
        // 0.1 is inexact, so the centred sum of squares is rounding noise rather than exactly 0.
        #expect(scores(Array(repeating: 0.1, count: 10), (1...10).map(Double.init)).correlation == nil)
        #expect(scores([1, 2], [-1, 1]).multiplicativeBias == nil)
        #expect(scores([5], [3]).correlation == nil)
    }

    @Test("a constant error has a standard deviation of 0, never NaN")
    func constantError() throws {
        let observed = (0..<100).map { 280 + Double($0) * 0.37 }
        let s = scores(observed.map { $0 + 0.1 }, observed)
        let sd = try #require(s.errorStdDev)
        #expect(sd >= 0 && sd < 1e-6)
        #expect(close(s.bias, 0.1, 1e-9))
    }

    @Test("missing values (NaN, infinity) are not pairs")
    func missing() {
        var s = scores([1, 2, 3], [2, 2, 5])
        s.add(forecast: .nan, observed: 1)
        s.add(forecast: 1, observed: .infinity)
        #expect(s == scores([1, 2, 3], [2, 2, 5]))
    }

    @Test("merging partial accumulators equals adding every pair to one", arguments: [1, 2, 7, 50])
    func merge(chunks: Int) {
        // Multiples of 0.5 keep every sum exact, so the comparison can be exact too.
        var generator = SystemRandomNumberGenerator()
        let pairs = (0..<500).map { _ in
            (
                Double(Int.random(in: -60...80, using: &generator)) / 2,
                Double(Int.random(in: -60...80, using: &generator)) / 2
            )
        }
        var whole = ContinuousScores()
        var parts = Array(repeating: ContinuousScores(), count: chunks)
        for (i, (f, o)) in pairs.enumerated() {
            whole.add(forecast: f, observed: o)
            parts[i % chunks].add(forecast: f, observed: o)
        }
        var merged = ContinuousScores()
        for part in parts { merged.merge(part) }
        #expect(merged == whole)
        #expect(parts.dropFirst().reduce(parts[0]) { $0.merged(with: $1) } == whole)
    }

    @Test("stored sums rebuild the same accumulator")
    func fromStoredSums() {
        let s = scores([1, 2, 3], [2, 2, 5])
        let rebuilt = ContinuousScores(
            n: s.n, sumF: s.sumF, sumO: s.sumO, sumFF: s.sumFF, sumOO: s.sumOO, sumFO: s.sumFO,
            sumAbsErr: s.sumAbsErr, sumErr: s.sumErr, sumErrSq: s.sumErrSq)
        #expect(rebuilt == s)
        #expect(rebuilt.rmse == s.rmse)
    }

    @Test("correlation stays accurate for large values with small variance")
    func correlationAccuracy() throws {
        var generator = SystemRandomNumberGenerator()
        let f = (0..<1000).map { _ in 10_000 + Double.random(in: 0..<1, using: &generator) }
        let o = f.map { $0 + Double.random(in: -0.5..<0.5, using: &generator) }
        // Two-pass reference.
        let meanF = f.reduce(0, +) / 1000
        let meanO = o.reduce(0, +) / 1000
        let sfo = zip(f, o).map { ($0 - meanF) * ($1 - meanO) }.reduce(0, +)
        let sff = f.map { ($0 - meanF) * ($0 - meanF) }.reduce(0, +)
        let soo = o.map { ($0 - meanO) * ($0 - meanO) }.reduce(0, +)
        let reference = sfo / (sff * soo).squareRoot()
        #expect(close(scores(f, o).correlation, reference, 1e-4))
        // The error sums are kept directly, so bias does not suffer from the 10 000 offset.
        let errors = zip(f, o).map { $0 - $1 }
        #expect(close(scores(f, o).bias, errors.reduce(0, +) / 1000, 1e-12))
    }
}

@Suite("Categorical and probabilistic scores")
struct CategoricalScoresTests {
    @Test("hand-made contingency table")
    func contingency() {
        // a = 30 hits, b = 10 false alarms, c = 20 misses, d = 140 correct negatives; n = 200.
        let t = Contingency(a: 30, b: 10, c: 20, d: 140)
        #expect(t.n == 200)
        #expect(close(t.pod, 0.6))  // 30 / 50
        #expect(close(t.far, 0.25))  // 10 / 40
        #expect(close(t.pofd, 1.0 / 15))  // 10 / 150
        #expect(close(t.csi, 0.5))  // 30 / 60
        #expect(close(t.frequencyBias, 0.8))  // 40 / 50
        // chance hits aᵣ = 40 · 50 / 200 = 10; ETS = (30 − 10) / (60 − 10) = 0.4
        #expect(close(t.ets, 0.4))
        // HSS = 2(30·140 − 10·20) / (50·160 + 40·150) = 8000 / 14000 = 4/7
        #expect(close(t.hss, 4.0 / 7))
    }

    @Test("add() counts value >= threshold as the event; merge adds counts")
    func addAndMerge() {
        var t = Contingency()
        let pairs: [(Double, Double)] = [(0.1, 0.1), (0.5, 0), (0, 0.2), (0, 0), (0.09, 0.05), (.nan, 1)]
        for (f, o) in pairs { t.add(forecast: f, observed: o, threshold: 0.1) }
        #expect(t == Contingency(a: 1, b: 1, c: 1, d: 2))
        var doubled = t
        doubled.merge(t)
        #expect(doubled == Contingency(a: 2, b: 2, c: 2, d: 4))
    }

    @Test("each score is nil when its denominator is 0")
    func zeroDenominators() {
        let none = Contingency()
        let all = [none.pod, none.far, none.pofd, none.csi, none.frequencyBias, none.ets, none.hss]
        #expect(all.allSatisfy { $0 == nil })
        let onlyNegatives = Contingency(d: 10)  // the event neither forecast nor observed
        #expect(onlyNegatives.pod == nil)
        #expect(onlyNegatives.far == nil)
        #expect(onlyNegatives.pofd == 0)
        #expect(onlyNegatives.csi == nil)
        #expect(onlyNegatives.ets == nil)
        #expect(onlyNegatives.hss == nil)
    }

    @Test("Brier score of four probability forecasts")
    func brier() {
        // p = [1, 0, 0.7, 0.2], o = [1, 0, 0, 1]: squared errors 0, 0, 0.49, 0.64 → BS = 1.13 / 4 = 0.2825
        var brier = BrierScore()
        for (percent, occurred) in [(100.0, true), (0, false), (70, false), (20, true)] {
            brier.add(probabilityPercent: percent, occurred: occurred)
        }
        #expect(brier.n == 4)
        #expect(close(brier.score, 0.2825))
        #expect(close(brier.baseRate, 0.5))
        #expect(close(brier.skillScore, 1 - 0.2825 / 0.25))  // reference ō(1 − ō) = 0.25
        var twice = brier
        twice.merge(brier)
        #expect(twice.n == 8)
        #expect(close(twice.score, 0.2825))
        #expect(BrierScore().score == nil)
    }

    @Test(
        "MSE skill score",
        arguments: [
            (1.0, 4.0, 0.75 as Double?), (4, 4, 0), (8, 4, -1), (0, 4, 1), (1, 0, nil)
        ])
    func skill(forecast: Double, reference: Double, expected: Double?) {
        #expect(SkillScore.mse(forecastMSE: forecast, referenceMSE: reference) == expected)
    }
}

@Suite("Lead buckets")
struct LeadBucketTests {
    @Test(
        "leads fall in half-open buckets",
        arguments: [
            (0.0, LeadBucket(from: 0, to: 6) as LeadBucket?),
            (5.5, LeadBucket(from: 0, to: 6)),
            (5.99, LeadBucket(from: 0, to: 6)),
            (6, LeadBucket(from: 6, to: 12)),
            (11.5, LeadBucket(from: 6, to: 12)),
            (12, LeadBucket(from: 12, to: 24)),
            (23, LeadBucket(from: 12, to: 24)),
            (24, LeadBucket(from: 24, to: 48)),
            (47.9, LeadBucket(from: 24, to: 48)),
            (48, LeadBucket(from: 48, to: 72)),
            (383, LeadBucket(from: 360, to: 384)),
            (383.5, LeadBucket(from: 360, to: 384)),
            (384, nil),
            (1000, nil),
            (-1, nil),
            (-0.5, nil),
            (.nan, nil)
        ])
    func bucket(lead: Double, expected: LeadBucket?) {
        #expect(LeadBuckets.bucket(forLeadHours: lead) == expected)
    }

    @Test("edges are 0, 6, 12, 24 and then every 24 hours to 384")
    func edges() {
        #expect(
            LeadBuckets.edges == [0, 6, 12, 24, 48, 72, 96, 120, 144, 168, 192, 216, 240, 264, 288, 312, 336, 360, 384])
        #expect(LeadBuckets.all.count == 18)
        #expect(LeadBuckets.all == LeadBuckets.all.sorted())
        #expect(LeadBuckets.all.first == LeadBucket(from: 0, to: 6))
        #expect(zip(LeadBuckets.all, LeadBuckets.all.dropFirst()).allSatisfy { $0.to == $1.from })
        #expect(LeadBucket(from: 24, to: 48).description == "[24, 48)")
    }
}
