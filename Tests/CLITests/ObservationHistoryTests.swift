import Foundation
import TestSupport
import Testing

@testable import WxCLI

/// Observations are history a user cannot fetch again: a partial CSV adds to them, an older
/// recording does not overwrite a newer one, and removing a location never drops them silently.
@Suite("Observations: merged, never overwritten by older data, never dropped without --purge")
struct ObservationHistoryTests {
    /// The cells of `export observations` by UTC time, for one column.
    func column(_ box: Sandbox, _ name: String, source: String) async throws -> [String: String] {
        let result = await box.run("export", "observations", "--location", "Here", "--source", source)
        #expect(result.code == 0, "\(result.stderrText)")
        let lines = result.stdout.split(separator: "\r\n").map {
            $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        }
        let header = try #require(lines.first)
        let time = try #require(header.firstIndex(of: "time")), value = try #require(header.firstIndex(of: name))
        return Dictionary(lines.dropFirst().map { ($0[time], $0[value]) }, uniquingKeysWith: { a, _ in a })
    }

    func write(_ box: Sandbox, _ name: String, _ text: String) throws -> String {
        let path = box.folder.appendingPathComponent(name).path
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    @Test(
        "a CSV of precipitation only keeps the temperatures already observed at those hours", arguments: StoreEngine.all
    )
    func partialColumnsMerge(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2", "--timezone", "UTC").code == 0)
        let temperatures = try write(
            box, "t.csv", "time,temperature_2m\n2026-11-01T00:00Z,4.5\n2026-11-01T01:00Z,4.1\n")
        let rain = try write(box, "p.csv", "time,precipitation\n2026-11-01T00:00Z,0.3\n2026-11-01T01:00Z,0\n")
        #expect(await box.run("observe", "import", temperatures, "--location", "Here").code == 0)
        #expect(await box.run("observe", "import", rain, "--location", "Here").code == 0)
        let t = try await column(box, "temperature_2m", source: "csv")
        let p = try await column(box, "precipitation", source: "csv")
        #expect(t["2026-11-01T00:00:00Z"] == "4.5" && t["2026-11-01T01:00:00Z"] == "4.1")
        #expect(p["2026-11-01T00:00:00Z"] == "0.3" && p["2026-11-01T01:00:00Z"] == "0")
    }

    @Test(
        "importing an older saved forecast does not overwrite the analysis hours of a newer one",
        arguments: StoreEngine.all)
    func olderRecordingLoses(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        box.now = afterFixtures  // the fixture's fetch times are not in the future
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run(
                "locations", "add", "Here", "--lat", "55.68", "--lon", "12.57", "--timezone", "Europe/Copenhagen"
            ).code == 0)
        let fixture = box.fixture(RepeatedContentTests.fixture)
        let older = try String(contentsOfFile: fixture, encoding: .utf8)
            .replacingOccurrences(of: #""temperature_2m":[18.7,"#, with: #""temperature_2m":[9.5,"#)
        let olderPath = try write(box, "older.json", older)
        #expect(await box.run("import", fixture, "--location", "Here", "--fetched-at", "2026-07-26T21:00Z").code == 0)
        #expect(await box.run("import", olderPath, "--location", "Here", "--fetched-at", "2026-07-26T20:00Z").code == 0)
        // The first label, 2026-07-26T00:00 at +02:00, is in the past of both fetches.
        let analysis = try await column(box, "temperature_2m", source: "analysis:best_match")
        #expect(analysis["2026-07-25T22:00:00Z"] == "18.7")
        // Hours after a fetch are forecasts, not observations of anything.
        #expect(analysis["2026-07-26T22:00:00Z"] == nil)
        #expect(analysis.count == 24)
    }

    @Test("a location with observations only is not removed without --purge", arguments: StoreEngine.all)
    func removeNeedsPurge(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2", "--timezone", "UTC").code == 0)
        let path = try write(box, "t.csv", "time,temperature_2m\n2026-11-01T00:00Z,4.5\n")
        #expect(await box.run("observe", "import", path, "--location", "Here").code == 0)
        let refused = await box.run("locations", "remove", "Here")
        #expect(refused.code == 1)
        #expect(refused.stderrText.contains("--purge"), "\(refused.stderrText)")
        #expect(try await box.count("observations") == 1)
        #expect(await box.run("locations", "remove", "Here", "--purge").code == 0)
        #expect(try await box.count("observations") == 0)
    }
}
