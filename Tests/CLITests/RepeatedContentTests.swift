import Foundation
import TestSupport
import Testing

@testable import WxCLI

/// When is a fetched response "the same forecast again"? Only when every hourly and daily value
/// matches: a response that differs in its daily values alone is a new run, and its days are kept.
@Suite("Repeated content: a response is repeated only when hourly and daily values all match")
struct RepeatedContentTests {
    static let fixture = "forecast-current-hourly-daily-iso8601-copenhagen.json"

    /// The daily `temperature_2m_max` values of every run for one date, from `export daily`.
    func dailyMaxima(_ box: Sandbox, date: String) async throws -> [String] {
        let result = await box.run("export", "daily", "--location", "Copenhagen", "--var", "temperature_2m_max")
        #expect(result.code == 0, "\(result.stderrText)")
        let lines = result.stdout.split(separator: "\r\n").map(String.init)
        let header = try #require(lines.first).split(separator: ",").map(String.init)
        let dateColumn = try #require(header.firstIndex(of: "date"))
        let maxColumn = try #require(header.firstIndex(of: "temperature_2m_max"))
        return lines.dropFirst().map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
            .filter { $0[dateColumn] == date }.map { $0[maxColumn] }
    }

    @Test(
        "the same hours with different daily values are a new run, and both runs' days are exported",
        arguments: StoreEngine.all)
    func dailyOnlyChange(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        box.now = afterFixtures  // the fixture's fetch times are not in the future
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run(
                "locations", "add", "Copenhagen", "--lat", "55.68", "--lon", "12.57", "--timezone", "Europe/Copenhagen"
            ).code == 0)
        let original = try String(contentsOfFile: box.fixture(Self.fixture), encoding: .utf8)
        // A later forecast that changed its mind about the first day's maximum only.
        let changed = original.replacingOccurrences(
            of: #""temperature_2m_max":[21.3,"#, with: #""temperature_2m_max":[25.3,"#)
        #expect(changed != original)
        let changedPath = box.folder.appendingPathComponent("changed.json").path
        try changed.write(toFile: changedPath, atomically: false, encoding: .utf8)

        let first = await box.run(
            "import", box.fixture(Self.fixture), "--location", "Copenhagen", "--fetched-at", "2026-07-26T21:00Z")
        #expect(first.code == 0, "\(first.stderrText)")
        let second = await box.run(
            "import", changedPath, "--location", "Copenhagen", "--fetched-at", "2026-07-26T22:00Z")
        #expect(second.code == 0, "\(second.stderrText)")
        #expect(second.stderrText.contains("1 new run(s)"), "\(second.stderrText)")
        #expect(try await dailyMaxima(box, date: "2026-07-26").sorted() == ["21.3", "25.3"])

        // The very same content again is repeated, and adds no days.
        let third = await box.run(
            "import", changedPath, "--location", "Copenhagen", "--fetched-at", "2026-07-26T23:00Z")
        #expect(third.stderrText.contains("0 new run(s)"), "\(third.stderrText)")
        #expect(try await dailyMaxima(box, date: "2026-07-26").count == 2)
    }
}

@Suite("Repeated content: the run's issue time is its earliest fetch")
struct RepeatedIssueTimeTests {
    /// `issued_at` and `first_fetch` of the only run, from `query runs --format json`.
    func run(_ box: Sandbox) async throws -> (issued: String?, firstFetch: String?) {
        let result = await box.run("query", "runs", "--location", "Copenhagen", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let runs = try #require(try parseJSON(result.stdout)["runs"]?.arrayValue)
        #expect(runs.count == 1)
        return (runs.first?["issued_at"]?.stringValue, runs.first?["first_fetch"]?.stringValue)
    }

    @Test(
        "a later fetch of the same content keeps the issue time; an earlier saved copy moves it back",
        arguments: StoreEngine.all)
    func earliestFetchWins(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        box.now = afterFixtures  // the fixture's fetch times are not in the future
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run(
                "locations", "add", "Copenhagen", "--lat", "55.68", "--lon", "12.57", "--timezone", "Europe/Copenhagen"
            ).code == 0)
        let file = box.fixture(RepeatedContentTests.fixture)
        for (fetchedAt, expected) in [
            ("2026-07-26T21:00Z", "2026-07-26T21:00:00Z"), ("2026-07-26T23:00Z", "2026-07-26T21:00:00Z"),
            ("2026-07-26T20:00Z", "2026-07-26T20:00:00Z")
        ] {
            let imported = await box.run("import", file, "--location", "Copenhagen", "--fetched-at", fetchedAt)
            #expect(imported.code == 0, "\(imported.stderrText)")
            let run = try await run(box)
            #expect(run.issued == expected, "after a fetch at \(fetchedAt)")
            #expect(run.firstFetch == expected, "after a fetch at \(fetchedAt)")
        }
    }
}
