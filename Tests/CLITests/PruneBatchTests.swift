import Foundation
import TestSupport
import Testing

@testable import WxCLI

/// Prune folds pairs into per-day, per-lead-bucket summaries. Runs 6 h apart share many of those
/// keys, so a later prune adds to summaries an earlier one wrote: the sums must add up, not be replaced.
@Suite("Prune in several steps keeps the scores")
struct PruneBatchTests {
    @Test(
        "two prune runs over neighbouring runs give the n, bias, MAE, RMSE, error SD and correlation of before",
        arguments: StoreEngine.all, [[], ["--by", "day"], ["--units", "imperial"]])
    func twoPrunes(_ engine: StoreEngine, _ extra: [String]) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        _ = try GeneratedHistory.build(box)
        let before = try await box.verifyNumbers(extra)
        // First runs 0-3, then runs 4-7: runs 3 and 4 write the same (day, lead bucket) summaries.
        for (lastPruned, count) in [(3, 4), (7, 4)] {
            box.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(lastPruned + 1) + 86400 * 3))
            let pruned = await box.run("prune", "--keep-days", "3")
            #expect(pruned.code == 0, "\(pruned.stderrText)")
            #expect(pruned.stderrText.contains("Pruned \(count) runs"), "\(pruned.stderrText)")
        }
        try expectSameScores(before, try await box.verifyNumbers(extra))
    }

    @Test(
        "two prune runs over runs an hour apart keep the contingency table and the Brier score",
        arguments: StoreEngine.all, ["precipitation", "precipitation_probability"])
    func twoPrunesPrecipitation(_ engine: StoreEngine, _ variable: String) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let history = try HistoryBuilder(db: box.db, name: "Rainy")
        let t = QueryPrecipitationTests.T
        // Two runs an hour apart over the same hours: their [0,6) pairs share (day, bucket) summaries.
        for (k, amounts) in [[0, 0.5, 0.2, 0, 0.05, 1.0], [0.3, 0.1, 0, 0.4, 0, 0.2]].enumerated() {
            let issued = t + Int64(k) * 3600
            let times = (0..<6).map { issued + Int64($0) * 3600 }
            try history.storeRun(
                issuedAt: issued, fetchedAt: issued + 600, times: times,
                columns: [
                    "precipitation": amounts, "precipitation_probability": amounts.map { min(100, $0 * 150) }
                ], recordAnalysis: false)
        }
        // The latest run keeps its rows whatever its age; this one (hours no observation covers, so no
        // pairs) is it, and the two above are what the two prunes remove.
        let latest = (0..<6).map { t + 3 * 86400 + Int64($0) * 3600 }
        try history.storeRun(
            issuedAt: t + 2 * 3600, fetchedAt: t + 2 * 3600 + 600, times: latest,
            columns: ["precipitation": latest.map { _ in 0 }], recordAnalysis: false)
        for (hour, observed) in [0, 0.3, 0, 0.2, 0, 0.1, 0.5].enumerated() {
            try history.observe(source: "station", time: t + Int64(hour) * 3600, ["precipitation": observed])
        }
        let args = ["query", "verify", "--location", "Rainy", "--var", variable, "--format", "json"]
        let before = try #require(try parseJSON(await box.run(args).stdout)["rows"]?.arrayValue?.first)
        for (offset, count) in [(1800, 1), (5400, 1)] {
            box.now = Date(timeIntervalSince1970: TimeInterval(t + 86400 + Int64(offset)))
            let pruned = await box.run("prune", "--keep-days", "1")
            #expect(pruned.stderrText.contains("Pruned \(count) run"), "\(pruned.stderrText)")
        }
        let after = try #require(try parseJSON(await box.run(args).stdout)["rows"]?.arrayValue?.first)
        for key in ["n", "a", "b", "c", "d", "brier", "base_rate", "bias"] {
            #expect(
                before[key]?.numberValue.map { ($0 * 1e9).rounded() }
                    == after[key]?.numberValue.map { ($0 * 1e9).rounded() },
                "\(key): \(String(describing: before[key])) then \(String(describing: after[key]))")
        }
    }
}
