import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI

/// Issue 10 point 3: content already stored is recognised whatever path stored it.
@Suite("re-imported content is never stored twice")
struct ReimportTests {
    static let day0 = utcMidnight(2026, 7, 20)
    // Two model runs with different values at every hour (one decimal, so no float noise).
    static let runA: @Sendable (Int64) -> Double = { 10 + Double(($0 / 3600) % 13) / 10 }
    static let runB: @Sendable (Int64) -> Double = { 12 + Double(($0 / 3600) % 7) / 10 }

    /// A sandbox with one location and hourly station temperatures over the test's days.
    func setUp(_ engine: StoreEngine) async throws -> Sandbox {
        let box = try Sandbox(engine: engine)
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let csv = try box.write(
            "station.csv", stationCSV(from: Self.day0 - 86400, hours: 24 * 8) { 11 + Double(($0 / 3600) % 5) / 10 })
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        return box
    }

    func importFile(_ box: Sandbox, _ name: String, _ response: TestResponse, at time: Int64) async throws -> RunResult
    {
        let path = try box.write(name, response.json())
        return await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(time))
    }

    func verify(_ box: Sandbox, _ extra: String...) async -> String {
        let result = await box.run(
            ["query", "verify", "--location", "Here", "--source", "station", "--format", "json"] + extra)
        #expect(result.code == 0, "\(result.stderrText)")
        return result.stdout
    }

    func runCount(_ box: Sandbox) async throws -> Int64 {
        try await box.count("forecast_runs")
    }

    @Test(
        "an old response re-imported after its run took a moved window and a newer run arrived is repeated",
        arguments: StoreEngine.all)
    func movedWindowThenNewerRun(_ engine: StoreEngine) async throws {
        let box = try await setUp(engine)
        defer { box.remove() }
        let d = Self.day0
        let orig = TestResponse(start: d, hours: 72, temperature: Self.runA)
        #expect(try await importFile(box, "orig.json", orig, at: d + 18 * 3600).stderrText.contains("1 new run(s)"))
        let moved = TestResponse(start: d + 86400, hours: 72, temperature: Self.runA)
        #expect(
            try await importFile(box, "moved.json", moved, at: d + 86400 + 1800).stderrText.contains("0 new run(s)"))
        let newer = TestResponse(start: d + 86400, hours: 72, temperature: Self.runB)
        #expect(
            try await importFile(box, "newer.json", newer, at: d + 86400 + 6 * 3600).stderrText.contains("1 new run(s)")
        )
        let before = await verify(box)
        let again = try await importFile(box, "orig-again.json", orig, at: d + 86400 + 8 * 3600)
        #expect(again.code == 0)
        #expect(again.stderrText.contains("0 new run(s)"), "\(again.stderrText)")
        #expect(try await runCount(box) == 2)
        #expect(await verify(box) == before)
    }

    @Test(
        "after prune, a response of a pruned run (even one it took as a moved window) is still recognised",
        arguments: StoreEngine.all)
    func afterPrune(_ engine: StoreEngine) async throws {
        let box = try await setUp(engine)
        defer { box.remove() }
        let d = Self.day0
        let orig = TestResponse(start: d, hours: 72, temperature: Self.runA)
        let moved = TestResponse(start: d + 86400, hours: 72, temperature: Self.runA)
        #expect(try await importFile(box, "orig.json", orig, at: d + 18 * 3600).code == 0)
        #expect(try await importFile(box, "moved.json", moved, at: d + 86400 + 1800).code == 0)
        let newer = TestResponse(start: d + 86400, hours: 72, temperature: Self.runB)
        #expect(try await importFile(box, "newer.json", newer, at: d + 86400 + 6 * 3600).code == 0)
        #expect(await box.run("prune", "--keep-days", "0").code == 0)  // run A goes, B (the latest) stays
        let before = await verify(box)
        for (name, response) in [("orig-again.json", orig), ("moved-again.json", moved)] {
            let again = try await importFile(box, name, response, at: d + 2 * 86400)
            #expect(again.stderrText.contains("0 new run(s)"), "\(name): \(again.stderrText)")
        }
        #expect(try await runCount(box) == 2)
        #expect(await verify(box) == before)
    }

    @Test(
        "the same model run under another UTC offset (DST, a new time zone) is one run",
        arguments: StoreEngine.all, [3600, -3600, 7200])
    func anotherOffset(_ engine: StoreEngine, _ offset: Int) async throws {
        let box = try await setUp(engine)
        defer { box.remove() }
        let d = Self.day0
        let utc = TestResponse(offset: 0, start: d, hours: 96, temperature: Self.runA)
        #expect(try await importFile(box, "utc.json", utc, at: d + 3600).code == 0)
        // Scores over the first window's hours (a window under a western offset reaches further).
        let window = ["--to", CivilTime.isoUTC(d + 95 * 3600)]
        let before = await verify(box, window[0], window[1])
        // Open-Meteo's window starts at local midnight under the new offset.
        let shifted = TestResponse(offset: offset, start: d - Int64(offset), hours: 96, temperature: Self.runA)
        let result = try await importFile(box, "shifted.json", shifted, at: d + 2 * 3600)
        #expect(result.stderrText.contains("0 new run(s)"), "\(result.stderrText)")
        #expect(try await runCount(box) == 1)
        #expect(await verify(box, window[0], window[1]) == before)
        // And the other way round: the run now holds both windows' hours, so both are contained.
        #expect(try await importFile(box, "utc-again.json", utc, at: d + 3 * 3600).stderrText.contains("0 new run(s)"))
        #expect(try await runCount(box) == 1)
    }

    @Test(
        "re-importing a whole archive with its original fetch times stores nothing and changes no score",
        arguments: StoreEngine.all)
    func archiveReimport(_ engine: StoreEngine) async throws {
        let box = try await setUp(engine)
        defer { box.remove() }
        let d = Self.day0
        // Three model runs, each seen at its first fetch and again after the window moved at midnight.
        var archive: [(String, TestResponse, Int64)] = []
        for k in 0..<3 {
            let values: @Sendable (Int64) -> Double = { t in 9 + Double(k) + Double((t / 3600 + Int64(k) * 5) % 11) / 10
            }
            let start = d + Int64(k) * 86400
            archive.append(("run\(k)-a.json", TestResponse(start: start, hours: 96, temperature: values), start + 3600))
            archive.append(
                (
                    "run\(k)-b.json", TestResponse(start: start + 86400, hours: 96, temperature: values),
                    start + 86400 + 1800
                ))
        }
        archive.sort { $0.2 < $1.2 }
        for (name, response, time) in archive { #expect(try await importFile(box, name, response, at: time).code == 0) }
        #expect(try await runCount(box) == 3)
        let before = await verify(box)
        let runsBefore = await box.run("query", "runs", "--location", "Here", "--format", "csv").stdout
        for (name, response, time) in archive {
            let result = try await importFile(box, name, response, at: time)
            #expect(result.stderrText.contains("0 new run(s)"), "\(name): \(result.stderrText)")
        }
        #expect(try await runCount(box) == 3)
        #expect(await verify(box) == before)
        // The runs themselves are unchanged apart from the repeats counted.
        let runsAfter = await box.run("query", "runs", "--location", "Here", "--format", "csv").stdout
        #expect(runsAfter.split(separator: "\r\n").count == runsBefore.split(separator: "\r\n").count)
    }
}
