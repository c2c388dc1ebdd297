import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI

/// Times typed without an offset are read in the location's zone with the offset in force then,
/// including next to a DST change (where a one-step conversion takes the wrong side's offset).
@Suite("Local times on the command line across DST changes")
struct LocalTimeTests {
    struct Case: Sendable, CustomStringConvertible {
        var zone: String
        var from: String
        var to: String
        /// First and last hour exported (UTC) and how many.
        var first: String
        var last: String
        var hours: Int
        var description: String { "\(zone) \(from)...\(to)" }
    }

    static let cases: [Case] = [
        // 01:30 is still CET (+1): the clocks go forward at 02:00 local.
        Case(
            zone: "Europe/Berlin", from: "2026-03-29T01:30", to: "2026-03-29T03:00", first: "2026-03-29T01:00:00Z",
            last: "2026-03-29T01:00:00Z", hours: 1),
        // 04:00 on the day the clocks went forward at 02:00 is EDT (−4).
        Case(
            zone: "America/New_York", from: "2026-03-08T04:00", to: "2026-03-08T06:00", first: "2026-03-08T08:00:00Z",
            last: "2026-03-08T10:00:00Z", hours: 3),
        // Chile's summer time ends at midnight: 2026-04-05 starts at 00:00 −04, i.e. 04:00Z, and has 24 hours.
        Case(
            zone: "America/Santiago", from: "2026-04-05", to: "2026-04-05", first: "2026-04-05T04:00:00Z",
            last: "2026-04-06T03:00:00Z", hours: 24),
        // Berlin's autumn day has 25 hours.
        Case(
            zone: "Europe/Berlin", from: "2026-10-25", to: "2026-10-25", first: "2026-10-24T22:00:00Z",
            last: "2026-10-25T22:00:00Z", hours: 25)
    ]

    @Test(
        "export observations --from/--to select the hours a person in that zone means",
        arguments: StoreEngine.all, cases)
    func range(_ engine: StoreEngine, _ c: Case) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2", "--timezone", c.zone).code == 0)
        // Hourly observations (in UTC) from two days before to two days after the range's date.
        let date = try #require(CivilTime.parse(String(c.from.prefix(10))))
        let start = date.wallSeconds - 2 * 86400
        var csv = "time,temperature_2m\n"
        for hour in 0..<(5 * 24) { csv += CivilTime.isoUTC(start + Int64(hour) * 3600) + ",\(hour)\n" }
        let path = box.folder.appendingPathComponent("obs.csv").path
        try csv.write(toFile: path, atomically: false, encoding: .utf8)
        let imported = await box.run("observe", "import", path, "--location", "Here")
        #expect(imported.code == 0, "\(imported.stderrText)")

        let result = await box.run("export", "observations", "--location", "Here", "--from", c.from, "--to", c.to)
        #expect(result.code == 0, "\(result.stderrText)")
        let lines = result.stdout.split(separator: "\r\n").map(String.init)
        let header = try #require(lines.first).split(separator: ",").map(String.init)
        let timeColumn = try #require(header.firstIndex(of: "time"))
        let times = lines.dropFirst().map {
            String($0.split(separator: ",", omittingEmptySubsequences: false)[timeColumn])
        }
        #expect(times.first == c.first)
        #expect(times.last == c.last)
        #expect(times.count == c.hours)
    }
}
