import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI

/// `query trend --lead L --tolerance T` shows, for each valid hour, the run whose lead is closest to
/// L: with runs 6 h apart and a tolerance of 6 h two or three runs qualify, and the wrong one would
/// show another lead's error under the "72 h" heading.
@Suite("query trend picks the run closest to --lead")
struct TrendLeadTests {
    @Test(
        "with several runs inside the tolerance, each hour's lead is the closest to --lead (the earlier run on a tie)",
        arguments: StoreEngine.all, [24.0, 72.0])
    func closestRun(_ engine: StoreEngine, _ lead: Double) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        _ = try GeneratedHistory.build(box)
        let result = await box.run(
            "query", "trend", "--location", "Testville", "--var", "temperature_2m",
            "--lead", JSON.numberText(lead), "--tolerance", "6", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let rows = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue)
        #expect(rows.count > 24)
        for row in rows {
            let valid = try #require(row["valid_time"]?.stringValue.flatMap(CivilTime.parse)).wallSeconds
            let leads = (0..<GeneratedHistory.runCount).map { Double(valid - GeneratedHistory.issued($0)) / 3600 }
                .filter { abs($0 - lead) <= 6 }
            // The closest; on a tie the earlier run, which has the longer lead.
            let best = try #require(
                leads.min { a, b in abs(a - lead) != abs(b - lead) ? abs(a - lead) < abs(b - lead) : a > b })
            #expect(row["lead_hours"]?.numberValue == best, "\(row)")
        }
    }
}
