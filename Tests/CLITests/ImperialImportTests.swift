import Foundation
import TestSupport
import Testing

@testable import WxCLI

/// A response saved with imperial units is stored in Open-Meteo's metric units, so scores never
/// mix °F with °C or inches with millimetres.
@Suite("Imported imperial responses are stored metric")
struct ImperialImportTests {
    @Test(
        "°F, inch and mph become °C, mm and km/h",
        arguments: StoreEngine.all,
        [
            // (export, time or date, column, metric value)
            ("daily", "2026-03-07", "temperature_2m_max", 17.61),  // 63.7 °F
            ("daily", "2026-03-07", "precipitation_sum", 38.61),  // 1.52 inch
            ("daily", "2026-03-07", "wind_speed_10m_max", 30.9),  // 19.2 mph
            ("hourly", "2026-03-04T05:00:00Z", "temperature_2m", 0)  // 32.0 °F at 00:00 −05:00
        ])
    func metric(_ engine: StoreEngine, _ c: (String, String, String, Double)) async throws {
        let (kind, key, name, expected) = c
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run(
                "locations", "add", "Toronto", "--lat", "43.7", "--lon", "-79.4", "--timezone", "America/Toronto"
            ).code == 0)
        let imported = await box.run(
            "import", box.fixture("forecast-current-hourly-daily-imperial-toronto-dst-crossing.json"),
            "--location", "Toronto", "--fetched-at", "2026-03-04T04:00Z")
        #expect(imported.code == 0, "\(imported.stderrText)")
        let result = await box.run("export", kind, "--location", "Toronto")
        #expect(result.code == 0, "\(result.stderrText)")
        let lines = result.stdout.split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let header = try #require(lines.first)
        let keyColumn = try #require(header.firstIndex(of: kind == "daily" ? "date" : "valid_time"))
        let column = try #require(header.firstIndex(of: name))
        let row = try #require(lines.first { $0[keyColumn] == key })
        #expect(near(Double(row[column]), expected, 1e-9), "\(name) \(row[column])")
    }
}
