import Foundation
import TestSupport
import Testing

@Suite("table headers name the unit once")
struct TableHeaderTests {
    /// The header line of a table: the line above its `---` rule.
    private func header(_ text: String) -> String? {
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        guard let rule = lines.firstIndex(where: { $0.hasPrefix("---") }), rule > 0 else { return nil }
        return String(lines[rule - 1])
    }

    @Test(
        "verify: °C once, at the end of the header line, not in every header; the CSV header as it was",
        arguments: StoreEngine.all)
    func onceInTheHeader(_ engine: StoreEngine) async throws {
        let sandbox = try Sandbox(engine: engine)
        _ = try GeneratedHistory.build(sandbox)
        let verify = await sandbox.run("query", "verify", "--location", "Testville", "--wide")
        #expect(verify.code == 0, "\(verify.stderrText)")
        let line = try #require(header(verify.stdout))
        #expect(line.hasSuffix("(°C)"), "\(line)")
        #expect(line.split(separator: "°C", omittingEmptySubsequences: false).count == 2, "\(line)")
        for name in ["bias", "MAE", "RMSE", "error SD", "mean fcst", "mean obs"] {
            #expect(line.contains(name), "\(name) in \(line)")
        }
        // The CSV header is the contract scripts read: unchanged.
        let csv = await sandbox.run("query", "verify", "--location", "Testville", "--format", "csv")
        #expect(
            csv.stdout.split(separator: "\n").first?.hasPrefix(
                "location,variable,unit,source,lead_from_h,lead_to_h,n,bias,") == true)

    }
}
