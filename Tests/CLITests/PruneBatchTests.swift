import Foundation
import Testing
@testable import WxCLI

/// Prune folds pairs into per-day, per-lead-bucket summaries. Runs 6 h apart share many of those
/// keys, so a later prune adds to summaries an earlier one wrote: the sums must add up, not be replaced.
@Suite("Prune in several steps keeps the scores")
struct PruneBatchTests {
    /// Every number of every row of `query verify --format json`.
    func verifyNumbers(_ box: Sandbox, _ extra: [String]) async throws -> [[String: Double]] {
        let result = await box.run(["query", "verify", "--location", "Testville", "--format", "json"] + extra)
        #expect(result.code == 0, "\(result.stderrText)")
        let rows = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue)
        return rows.map { row in
            var numbers: [String: Double] = [:]
            for (key, value) in zip(row.objectValue!.keys, row.objectValue!.values) {
                if let number = value.numberValue { numbers[key] = number }
            }
            return numbers
        }
    }

    @Test("two prune runs over neighbouring runs give the n, bias, MAE, RMSE, error SD and correlation of before",
          arguments: [[], ["--by", "day"], ["--units", "imperial"]])
    func twoPrunes(_ extra: [String]) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        _ = try GeneratedHistory.build(box)
        let before = try await verifyNumbers(box, extra)
        // First runs 0-3, then runs 4-7: runs 3 and 4 write the same (day, lead bucket) summaries.
        for (lastPruned, count) in [(3, 4), (7, 4)] {
            box.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(lastPruned + 1) + 86400 * 3))
            let pruned = await box.run("prune", "--keep-days", "3")
            #expect(pruned.code == 0, "\(pruned.stderrText)")
            #expect(pruned.stderrText.contains("Pruned \(count) runs"), "\(pruned.stderrText)")
        }
        let after = try await verifyNumbers(box, extra)
        #expect(before.count == after.count)
        for (b, a) in zip(before, after) {
            #expect(b["lead_from_h"] == a["lead_from_h"])
            #expect(b["n"] == a["n"], "n in bucket \(b["lead_from_h"] ?? -1)")
            for key in ["bias", "mae", "rmse", "error_sd", "correlation"] {
                let x = try #require(b[key]), y = try #require(a[key])
                #expect(abs(x - y) <= 1e-9 * max(1, abs(x)), "\(key) \(x) vs \(y) in bucket \(b["lead_from_h"]!)")
            }
        }
    }
}
