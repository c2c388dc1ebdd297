import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI

/// Pruned runs survive as whole local days, so a --from/--to that cuts a day cannot use it: that
/// day is left out (and the note says how many), at either end of the range.
@Suite("Verify over pruned runs with a range that cuts a day")
struct PrunedRangeTests {
    @Test(
        "a --to inside a pruned day leaves that day out: nothing after --to is scored",
        arguments: StoreEngine.all, ["from", "to"])
    func cutDayLeftOut(_ engine: StoreEngine, _ cutEnd: String) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        _ = try GeneratedHistory.build(box)  // Testville is in Europe/Berlin
        box.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(9) + 86400 * 3))
        #expect(await box.run("prune", "--keep-days", "1").code == 0)

        let start = GeneratedHistory.issued(2) + 86400
        let fromDate = ZoneTime.date(of: start, timezone: "Europe/Berlin")
        let toDate = ZoneTime.date(of: start + 3 * 86400, timezone: "Europe/Berlin")
        // One end cut at local noon, the other a whole date.
        let from = cutEnd == "from" ? fromDate + "T12:00" : fromDate
        let to = cutEnd == "to" ? toDate + "T12:00" : toDate
        let result = await box.run(
            "query", "verify", "--location", "Testville", "--format", "json", "--from", from, "--to", to)
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("1 day(s) of pruned runs"), "\(result.stderrText)")
        let rows = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue)
        #expect(!rows.isEmpty)
        let lower = ZoneTime.instant(ofWall: try #require(CivilTime.parse(from)).wallSeconds, timezone: "Europe/Berlin")
        let upper = ZoneTime.instant(
            ofWall: try #require(CivilTime.parse(to)).wallSeconds + (cutEnd == "to" ? 0 : 86400 - 3600),
            timezone: "Europe/Berlin")
        for row in rows {
            let first = try #require(row["first_valid_time"]?.stringValue.flatMap(CivilTime.parse))
            let last = try #require(row["last_valid_time"]?.stringValue.flatMap(CivilTime.parse))
            #expect(first.wallSeconds >= lower, "\(row)")
            #expect(last.wallSeconds <= upper, "\(row)")
        }
    }
}
