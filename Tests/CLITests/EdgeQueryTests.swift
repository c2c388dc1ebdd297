import Foundation
import Testing
import WxCore
import WxSQLite
@testable import WxCLI

/// Issue 10 point 2: persistence at offsets that are not whole hours.
@Suite("persistence at half- and quarter-hour offsets")
struct PersistenceOffsetTests {
    @Test("the latest observation in the hour before issue is carried forward", arguments: [20700, -12600, 34200])
    func persistence(_ offset: Int) async throws {
        let box = Sandbox()
        defer { box.remove() }
        #expect(await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let issued = utcMidnight(2026, 7, 20) + 12 * 3600
        // The location's whole local hours: the last one at or before the issue time.
        let a = issued - Int64(((Int(issued) + offset) % 3600 + 3600) % 3600)
        #expect(a < issued && a > issued - 3600)
        let observed: [Double] = [10.0, 11.0, 12.5, 9.0, 10.5]  // at a, a+1h, ..., a+4h
        let forecast: [Double] = [10.2, 11.5, 12.0, 9.5, 11.5]
        var csv = "time,temperature_2m\n"
        // An older observation (more than an hour before issue) that must not be the reference.
        csv += "\(CivilTime.isoUTC(a - 3600)),30\n"
        for (k, value) in observed.enumerated() { csv += "\(CivilTime.isoUTC(a + Int64(k) * 3600)),\(value)\n" }
        let csvPath = try box.write("station.csv", csv)
        #expect(await box.run("observe", "import", csvPath, "--location", "Here", "--source", "station").code == 0)
        let response = TestResponse(offset: offset, start: a, hours: 5, temperature: { forecast[Int(($0 - a) / 3600)] })
        let path = try box.write("run.json", response.json())
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(issued)).code == 0)

        let result = await box.run("query", "verify", "--location", "Here", "--source", "station", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        // By hand: errors 0.5, -0.5, 0.5, 1.0 (MSE 0.4375); persistence (10.0) errors -1, -2.5, 1, -0.5 (MSE 2.125).
        #expect(row["n"]?.numberValue == 4)
        #expect(row["persistence_n"]?.numberValue == 4)
        let rmse = try #require(row["persistence_rmse"]?.numberValue)
        #expect(abs(rmse - 2.125.squareRoot()) < 1e-12)
        let skill = try #require(row["persistence_skill"]?.numberValue)
        #expect(abs(skill - (1 - 0.4375 / 2.125)) < 1e-12)
    }
}
