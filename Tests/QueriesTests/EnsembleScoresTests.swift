import Foundation
import TestSupport
import Testing
import WxCore

/// Ensembles and observations from a seeded Gaussian, so every run sees the same numbers.
struct GaussianRandom {
    var uniform: SeededRandom
    init(seed: UInt64) { uniform = SeededRandom(state: seed) }
    /// A standard normal by Box–Muller.
    mutating func next() -> Double {
        let u = max(uniform.next(), 1e-300)
        let v = uniform.next()
        return (-2 * log(u)).squareRoot() * cos(2 * Double.pi * v)
    }
}

@Suite("Ensemble scores")
struct EnsembleScoresTests {
    // The tie rule by hand: with `below` members under the observation and `tied` equal to it, the
    // bins below…below+tied share one case equally (Hamill 2001); a missing member leaves it out.
    static let rankCases: [([Double], Double, [Double])] = [
        ([1.0, 2, 3], 2.5, [0.0, 0, 1, 0]),
        ([1.0, 2, 3], 0.0, [1.0, 0, 0, 0]),
        ([1.0, 2, 3], 9.0, [0.0, 0, 0, 1]),
        ([1.0, 2, 2, 3], 2.0, [0.0, 1.0 / 3, 1.0 / 3, 1.0 / 3, 0]),
        ([5.0, 5, 5], 5.0, [0.25, 0.25, 0.25, 0.25]),
        ([4.0], 4.0, [0.5, 0.5]),
        ([1.0, .nan, 3], 2.0, [0.0, 0, 0, 0])
    ]

    @Test("rank of the observation, ties split equally", arguments: rankCases)
    func rankTies(members: [Double], observed: Double, histogram: [Double]) {
        var scores = EnsembleScores()
        scores.add(members: members, observed: observed)
        let counts = scores.rankCounts.isEmpty ? [Double](repeating: 0, count: members.count + 1) : scores.rankCounts
        #expect(counts == histogram)
        #expect(scores.rankLeftOut == (members.allSatisfy { $0.isFinite } ? 0 : 1))
    }

    // Hand-worked: members 1, 2, 4 and y = 3: mean|x − y| = 4/3, ΣΣ|xi − xj| = 2(1 + 3 + 2) = 12,
    // so ecdf = 4/3 − 12/18 = 2/3 and fair = 4/3 − 12/12 = 1/3; under = (2 + 1)/3, over = 1/3.
    @Test("CRPS of a worked example, both forms, and a missing member left out")
    func workedCRPS() throws {
        let ecdf = try #require(EnsembleScore.crps(members: [1, 2, .nan, 4], observed: 3, method: .ecdf))
        #expect(abs(ecdf.total - 2.0 / 3) < 1e-12)
        #expect(abs(ecdf.underforecast - 1) < 1e-12 && abs(ecdf.overforecast - 1.0 / 3) < 1e-12)
        let fair = try #require(EnsembleScore.crps(members: [4, 1, 2], observed: 3, method: .fair))
        #expect(abs(fair.total - 1.0 / 3) < 1e-12)
        // One member: the ecdf CRPS is its absolute error, the fair form is undefined.
        #expect(EnsembleScore.crps(members: [5, .nan], observed: 3, method: .ecdf)?.total == 2)
        #expect(EnsembleScore.crps(members: [5, .nan], observed: 3, method: .fair) == nil)
        #expect(EnsembleScore.crps(members: [.nan, .nan], observed: 3) == nil)
        // Missing members stay missing: a zero would have moved the score.
        var scores = EnsembleScores()
        scores.add(members: [1, 2, .nan, 4], observed: 3)
        let bias = try #require(scores.meanBias)
        #expect(scores.meanMembers == 3 && abs(bias - (7.0 / 3 - 3)) < 1e-12)
    }

    @Test("sums merge: two halves give the scores of the whole")
    func merging() throws {
        var random = GaussianRandom(seed: 7)
        var whole = EnsembleScores()
        var halves = [EnsembleScores(), EnsembleScores()]
        var wholeEvent = EnsembleEventScores(threshold: 0.5)
        var eventHalves = [EnsembleEventScores(threshold: 0.5), EnsembleEventScores(threshold: 0.5)]
        for i in 0..<200 {
            let members = (0..<10).map { _ in random.next() }
            let y = random.next()
            whole.add(members: members, observed: y)
            halves[i % 2].add(members: members, observed: y)
            wholeEvent.add(members: members, observed: y)
            eventHalves[i % 2].add(members: members, observed: y)
        }
        var merged = halves[0]
        merged.merge(halves[1])
        var mergedEvent = eventHalves[0]
        mergedEvent.merge(eventHalves[1])
        #expect(merged.n == 200 && mergedEvent.n == 200)
        let crps = (try #require(merged.crps), try #require(whole.crps))
        let ratio = (try #require(merged.spreadSkillRatio), try #require(whole.spreadSkillRatio))
        #expect(abs(crps.0 - crps.1) < 1e-12 && abs(ratio.0 - ratio.1) < 1e-12)
        #expect(merged.rankCounts.reduce(0, +) == 200)
        #expect(mergedEvent.binCases == wholeEvent.binCases && mergedEvent.binEvents == wholeEvent.binEvents)
    }

    /// y = s + e and members s + eᵢ with e, eᵢ drawn alike (calibrated), or members squeezed by `dispersion`.
    static func synthetic(dispersion: Double, members m: Int, cases: Int, seed: UInt64) -> EnsembleScores {
        var random = GaussianRandom(seed: seed)
        var scores = EnsembleScores()
        for _ in 0..<cases {
            let signal = 15 + 5 * random.next()
            let y = signal + 2 * random.next()
            let members = (0..<m).map { _ in signal + dispersion * 2 * random.next() }
            scores.add(members: members, observed: y)
        }
        return scores
    }

    @Test("a calibrated ensemble: flat rank histogram (χ² not rejected at 1%), spread-skill within 0.05 of 1")
    func calibrated() throws {
        let scores = Self.synthetic(dispersion: 1, members: 20, cases: 6000, seed: 2026)
        let flatness = try #require(scores.rankFlatness)
        #expect(flatness.degrees == 20)
        #expect(flatness.pValue > 0.01, "χ² = \(flatness.chiSquare)")
        #expect(abs(try #require(scores.spreadSkillRatio) - 1) < 0.05)
        // The fair CRPS is below the ecdf one by the spread term's finite-ensemble correction.
        let fair = try #require(scores.fairCRPS)
        #expect(fair < (try #require(scores.crps)))
    }

    @Test("an under-dispersive ensemble: a U-shaped rank histogram and spread-skill below 0.8")
    func underDispersive() throws {
        let scores = Self.synthetic(dispersion: 0.4, members: 20, cases: 6000, seed: 2026)
        let flatness = try #require(scores.rankFlatness)
        #expect(flatness.pValue < 0.01)
        let counts = scores.rankCounts
        let middle = counts[5..<16].reduce(0, +) / 11
        #expect(counts[0] > 3 * middle && counts[20] > 3 * middle)
        #expect(try #require(scores.spreadSkillRatio) < 0.8)
        let wide = Self.synthetic(dispersion: 2, members: 20, cases: 6000, seed: 2026)
        #expect(try #require(wide.spreadSkillRatio) > 1.2)
        #expect(wide.rankCounts[10] > 2 * wide.rankCounts[0])
    }

    @Test(
        "agrees with BoM scores: crps_for_ensemble (ecdf, fair, parts), brier_score_for_ensemble, rank_histogram to 1e-9",
        .enabled(
            if: scoresPython != nil, "BoM's scores package is not installed (.ci/run puts it in .build/reference-venv)")
    )
    func agreesWithScores() throws {
        var random = GaussianRandom(seed: 31)
        let thresholds = [0.1, 1.0, 2.5]
        var groups: [[String: Any]] = []
        var ours: [(cases: [([Double], Double)], scores: EnsembleScores, events: [EnsembleEventScores])] = []
        for m in [1, 20, 51] {
            var cases: [([Double], Double)] = []
            for c in 0..<150 {
                // Values on a 0.5 grid, clipped at 0 like precipitation: ties among members and with y.
                let centre = 1 + 2 * random.next()
                var members = (0..<m).map { _ in max(0, ((centre + 1.5 * random.next()) * 2).rounded() / 2) }
                var y = max(0, ((centre + 1.5 * random.next()) * 2).rounded() / 2)
                if c % 9 == 4 { members[c % m] = .nan }  // one member missing
                if c % 37 == 5 { members = members.map { _ in .nan } }  // every member missing
                if c % 41 == 6 { y = .nan }
                cases.append((members, y))
            }
            var scores = EnsembleScores()
            var events = thresholds.map { EnsembleEventScores(threshold: $0) }
            for (members, y) in cases {
                scores.add(members: members, observed: y)
                for i in events.indices { events[i].add(members: members, observed: y) }
            }
            ours.append((cases, scores, events))
            groups.append([
                "fcst": cases.map { $0.0.map { $0.isFinite ? $0 as Any : NSNull() } },
                "obs": cases.map { $0.1.isFinite ? $0.1 as Any : NSNull() }
            ])
        }
        let chiCases = [(3.2, 4.0), (30.0, 20.0), (80.0, 50.0), (0.5, 1.0), (12.0, 10.0)]
        let folder = Scratch.folder("ensemble-scores")
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("cases.json")
        try JSONSerialization.data(withJSONObject: [
            "groups": groups, "thresholds": thresholds, "chi": chiCases.map { [$0.0, $0.1] }
        ]).write(to: input)
        let script = """
            import json, sys, math, numpy as np, xarray as xr
            from scipy.stats import chi2
            from scores.probability import crps_for_ensemble, brier_score_for_ensemble, rank_histogram
            data = json.load(open(sys.argv[1]))
            def clean(a):
                return [None if (isinstance(v, float) and math.isnan(v)) else float(v) for v in np.asarray(a).ravel()]
            out = {"groups": [], "chi": [float(chi2.sf(x, k)) for x, k in data["chi"]]}
            for g in data["groups"]:
                fcst = xr.DataArray(np.array([[np.nan if v is None else v for v in row] for row in g["fcst"]], dtype=float), dims=["case", "member"])
                obs = xr.DataArray(np.array([np.nan if v is None else v for v in g["obs"]], dtype=float), dims=["case"])
                parts = crps_for_ensemble(fcst, obs, "member", method="ecdf", preserve_dims="all", include_components=True)
                fair = crps_for_ensemble(fcst, obs, "member", method="fair", preserve_dims="all")
                brier = brier_score_for_ensemble(fcst, obs, "member", data["thresholds"], preserve_dims="all")
                rank = rank_histogram(fcst, obs, "member")
                out["groups"].append({
                    "ecdf": clean(parts.sel(component="total")),
                    "under": clean(parts.sel(component="underforecast_penalty")),
                    "over": clean(parts.sel(component="overforecast_penalty")),
                    "spread": clean(parts.sel(component="spread")),
                    "fair": clean(fair),
                    "brier": [clean(brier.sel(threshold=t)) for t in data["thresholds"]],
                    "rank": clean(rank)})
            print(json.dumps(out))
            """
        let scriptPath = folder.appendingPathComponent("reference.py").path
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let output = try runPython(try #require(scoresPython), [scriptPath, input.path])
        let reference = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        let referenceGroups = try #require(reference["groups"] as? [[String: Any]])
        func values(_ any: Any?) -> [Double?] { (any as? [Any] ?? []).map { $0 as? Double } }
        func close(_ a: Double?, _ b: Double?) -> Bool {
            switch (a, b) {
            case (nil, nil): true
            case (let a?, let b?): abs(a - b) <= 1e-9
            default: false
            }
        }
        func nanMean(_ x: [Double?]) -> Double? {
            let present = x.compactMap { $0 }
            return present.isEmpty ? nil : present.reduce(0, +) / Double(present.count)
        }
        for (group, reference) in zip(ours, referenceGroups) {
            let m = group.cases[0].0.count
            let ecdf = values(reference["ecdf"])
            let fair = values(reference["fair"])
            let under = values(reference["under"])
            let over = values(reference["over"])
            let spread = values(reference["spread"])
            for (i, (members, y)) in group.cases.enumerated() {
                let parts = EnsembleScore.crps(members: members, observed: y, method: .ecdf)
                #expect(close(parts?.total, ecdf[i]), "M = \(m), case \(i): ecdf")
                #expect(close(parts?.underforecast, under[i]) && close(parts?.overforecast, over[i]))
                #expect(close(parts?.spread, spread[i]), "M = \(m), case \(i): spread")
                #expect(
                    close(EnsembleScore.crps(members: members, observed: y, method: .fair)?.total, fair[i]),
                    "M = \(m), case \(i): fair")
            }
            // The stored sums give the mean over the cases scores can score.
            #expect(close(group.scores.crps, nanMean(ecdf)), "M = \(m): mean ecdf CRPS")
            #expect(close(group.scores.fairCRPS, nanMean(fair)), "M = \(m): mean fair CRPS")
            let brier = try #require(reference["brier"] as? [Any])
            for (t, events) in group.events.enumerated() {
                let perCase = values(brier[t])
                for (i, (members, y)) in group.cases.enumerated() {
                    let ourBrier = EnsembleScore.fairBrier(members: members, observed: y, threshold: thresholds[t])
                    #expect(close(ourBrier, perCase[i]), "M = \(m), case \(i), threshold \(thresholds[t])")
                }
                #expect(close(events.fairBrier, nanMean(perCase)), "M = \(m): mean Brier at \(thresholds[t])")
            }
            let rank = values(reference["rank"])
            let total = group.scores.rankCounts.reduce(0, +)
            #expect(group.scores.rankCounts.count == m + 1 && rank.count == m + 1)
            for (bin, weight) in group.scores.rankCounts.enumerated() {
                #expect(close(weight / total, rank[bin]), "M = \(m): rank bin \(bin)")
            }
        }
        let chi = values(reference["chi"])
        for (i, (x, k)) in chiCases.enumerated() {
            #expect(abs(ChiSquare.survival(x, degrees: k) - (chi[i] ?? -1)) < 1e-9, "χ²(\(k)) at \(x)")
        }
    }
}
