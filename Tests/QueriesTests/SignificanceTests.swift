import Foundation
import TestSupport
import Testing

@testable import WxQueries

let queriesPackageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

/// A Python with BoM's `scores` package: `WXDB_REFERENCE_PYTHON`, else the virtual environment
/// `.ci/run` creates in `.build/reference-venv`; nil when neither can import it.
let scoresPython: String? = {
    let environment = ProcessInfo.processInfo.environment
    let candidates = [
        environment["WXDB_REFERENCE_PYTHON"], queriesPackageRoot.path + "/.build/reference-venv/bin/python"
    ]
    for case let path? in candidates where FileManager.default.isExecutableFile(atPath: path) {
        if (try? runPython(path, ["-c", "import scores"])) != nil { return path }
    }
    return nil
}()

/// Runs `python arguments` and returns its standard output; throws on a non-zero exit.
@discardableResult
func runPython(_ python: String, _ arguments: [String]) throws -> Data {
    let (status, output) = try Subprocess.run(python, arguments)
    guard status == 0 else { throw CocoaError(.executableLoad) }
    return output
}

/// A small deterministic generator, so the reference comparison sees the same series every run.
struct SeededRandom {
    var state: UInt64
    mutating func next() -> Double {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return Double(state >> 11) / Double(1 << 53)
    }
    /// Roughly normal: the sum of four uniforms, centred.
    mutating func normal() -> Double { (next() + next() + next() + next() - 2) * 1.7 }
}

@Suite("Diebold-Mariano and Flip-Flop Index")
struct SignificanceTests {
    // The worked example of scores' own documentation (method HLN, Student's t), and one by hand:
    // d = 1, 2, 3, 4 with h = 2: d̄ = 2.5, γ0 = 5, γ1 = 1.25, V = 7.5 / 16, correction (1.5 / 4),
    // statistic = 2.5 / √(7.5/16) × √0.375 = √5.
    @Test(
        "statistics of worked examples",
        arguments: [
            ([1.0, 2, 3, 4], 2, 5.0.squareRoot()),
            ([2.0, 1, -3, -1, 0], 3, -1.0 / 3)
        ])
    func workedExamples(differences: [Double], horizon: Int, statistic: Double) throws {
        let test = DieboldMariano(differences: differences, horizon: horizon)
        #expect(abs(try #require(test.statistic) - statistic) < 1e-12)
    }

    @Test("the confidence interval and p-value of the documented example")
    func documentedInterval() throws {
        let test = DieboldMariano(differences: [1, 2, 3, 4], horizon: 2, confidence: 0.90)
        let interval = try #require(test.confidenceInterval)
        // scores prints ci_lower -0.1311, ci_upper 5.131, confidence_gt_0 0.9443.
        #expect(abs(interval.low - -0.1311) < 5e-5)
        #expect(abs(interval.high - 5.131) < 5e-4)
        #expect(abs(try #require(test.pValue) - 2 * (1 - 0.9443)) < 2e-4)
    }

    // d = 2, 0, 2, 0, 2, 0: γ0 = 6, γ1 = −5, so V̂ at h = 2 is negative; like R's forecast::dm.test
    // the test falls back to h = 1: 1 / √(6/36) × √(5/6) = √5.
    @Test("a variance estimate that is not positive falls back to horizon 1")
    func fallback() throws {
        let test = DieboldMariano(differences: [2, 0, 2, 0, 2, 0], horizon: 2)
        #expect(test.horizonUsed == 1)
        #expect(abs(try #require(test.statistic) - 5.0.squareRoot()) < 1e-12)
        #expect(DieboldMariano(differences: [1, 2, 3, 4], horizon: 2).horizonUsed == 2)
    }

    @Test(
        "no statistic when it cannot be computed",
        arguments: [
            ([1.0, 1, 1, 1, 1], 4),  // V̂ is zero
            ([0.0, 0, 0, 0], 1),  // no difference at all
            ([1.0, -1], 2)  // horizon not shorter than the series
        ])
    func undefined(differences: [Double], horizon: Int) {
        let test = DieboldMariano(differences: differences, horizon: horizon)
        #expect(test.statistic == nil && test.pValue == nil && test.confidenceInterval == nil)
    }

    @Test(
        "Student's t against tabulated quantiles",
        arguments: [
            (1.0, 12.706204736174698), (5.0, 2.5705818356363146), (30.0, 2.0422724563012373),
            (1000.0, 1.9623390808264078)
        ])
    func tQuantiles(degrees: Double, q975: Double) {
        #expect(abs(StudentT.quantile(0.975, degrees: degrees) - q975) < 1e-9)
        #expect(abs(StudentT.cdf(q975, degrees: degrees) - 0.975) < 1e-12)
    }

    @Test(
        "Flip-Flop Index of worked examples",
        arguments: [
            ([50.0, 20, 40, 80], false, 15.0),  // scores' documented example
            ([1.0, -1, 1, -1, 1, -1, 1, -1], false, 2.0),  // alternating ±1 around the truth
            ([0.0, 0.5, 1, 1.5, 2, 3], false, 0.0),  // a monotone drift
            ([350.0, 10, 350, 10], true, 20.0),  // 20° each way across north, within a 20° sector
            ([0.0, 90, 180, 270], true, 45.0)  // every quarter: travelled 270, sector capped at 180
        ])
    func flipFlop(values: [Double], angular: Bool, expected: Double) throws {
        #expect(abs(try #require(FlipFlop.index(values, angular: angular)) - expected) < 1e-12)
        #expect(FlipFlop.index(Array(values.prefix(2)), angular: angular) == nil)
    }

    @Test(
        "agrees with BoM scores: diebold_mariano (HLN, t) to 1e-6 and flip_flop_index to 1e-9",
        .enabled(
            if: scoresPython != nil, "BoM's scores package is not installed (.ci/run puts it in .build/reference-venv)")
    )
    func agreesWithScores() throws {
        var random = SeededRandom(state: 42)
        var dmCases: [[String: Any]] = []
        for (n, h) in [(50, 1), (200, 6), (400, 24), (720, 48), (30, 5), (1000, 120)] {
            // Autocorrelated differences with a small offset, as two models' hourly losses give.
            var d: [Double] = []
            var carry = 0.0
            for _ in 0..<n {
                carry = 0.8 * carry + random.normal()
                d.append(0.1 + carry)
            }
            dmCases.append(["d": d, "h": h])
        }
        // Strongly alternating, so V̂ is negative at the horizon and the fallback to 1 is compared.
        dmCases.append(["d": (0..<60).map { i in (i % 2 == 0 ? 1.0 : -0.6) + 0.05 * random.normal() }, "h": 4])
        // What was computed, with the horizon actually used, is what the reference computes too.
        let ours = dmCases.map { DieboldMariano(differences: $0["d"] as! [Double], horizon: $0["h"] as! Int) }
        #expect(ours.last?.horizonUsed == 1)
        for (i, test) in ours.enumerated() { dmCases[i]["h"] = test.horizonUsed ?? test.horizon }
        var ffiCases: [[String: Any]] = []
        for i in 0..<40 {
            let angular = i % 4 == 3
            let count = 3 + i % 9
            let x = (0..<count).map { _ in angular ? random.next() * 360 : random.normal() * 3 }
            ffiCases.append(["x": x, "angular": angular])
        }
        let folder = Scratch.folder("scores")
        defer { try? FileManager.default.removeItem(at: folder) }
        let input = folder.appendingPathComponent("cases.json")
        try JSONSerialization.data(withJSONObject: ["dm": dmCases, "ffi": ffiCases]).write(to: input)
        let script = """
            import json, sys, numpy as np, xarray as xr
            from scores.stats.statistical_tests import diebold_mariano
            from scores.continuous import flip_flop_index
            cases = json.load(open(sys.argv[1]))
            out = {"dm": [], "ffi": []}
            for c in cases["dm"]:
                da = xr.DataArray([c["d"]], dims=["s", "t"], coords={"s": [0], "h": ("s", [c["h"]])})
                r = diebold_mariano(da, "s", "h", method="HLN", statistic_distribution="t", confidence_level=0.95)
                out["dm"].append({k: float(r[k].values[0]) for k in ["mean", "dm_test_stat", "confidence_gt_0", "ci_lower", "ci_upper"]})
            for c in cases["ffi"]:
                da = xr.DataArray(c["x"], dims=["run"], coords={"run": list(range(len(c["x"])))})
                out["ffi"].append(float(flip_flop_index(da, "run", is_angular=c["angular"])))
            print(json.dumps(out))
            """
        let scriptPath = folder.appendingPathComponent("reference.py").path
        try script.write(toFile: scriptPath, atomically: true, encoding: .utf8)
        let output = try runPython(try #require(scoresPython), [scriptPath, input.path])
        let reference = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any])
        let dm = try #require(reference["dm"] as? [[String: Double]])
        let ffi = try #require(reference["ffi"] as? [Double])
        #expect(dm.count == dmCases.count && ffi.count == ffiCases.count)

        for (test, expected) in zip(ours, dm) {
            let statistic = try #require(test.statistic)
            let interval = try #require(test.confidenceInterval)
            let gt0 = StudentT.cdf(statistic, degrees: Double(test.n - 1))
            #expect(abs(test.meanDifference - expected["mean"]!) < 1e-9)
            #expect(abs(statistic - expected["dm_test_stat"]!) < 1e-6, "n \(test.n) h \(test.horizon)")
            #expect(abs(gt0 - expected["confidence_gt_0"]!) < 1e-6)
            #expect(abs(try #require(test.pValue) - 2 * min(gt0, 1 - gt0)) < 1e-12)
            #expect(abs(interval.low - expected["ci_lower"]!) < 1e-6)
            #expect(abs(interval.high - expected["ci_upper"]!) < 1e-6)
        }
        for (c, expected) in zip(ffiCases, ffi) {
            let ours = try #require(FlipFlop.index(c["x"] as! [Double], angular: c["angular"] as! Bool))
            #expect(abs(ours - expected) < 1e-9, "\(c)")
        }
    }
}
