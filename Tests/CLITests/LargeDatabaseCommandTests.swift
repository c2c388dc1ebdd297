import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite

@testable import WxCLI

/// Issue 15 part B: `stats` and `doctor` on a file too large to read row by row.
@Suite("stats and doctor without reading every row")
struct LargeDatabaseCommandTests {
    static let day0 = utcMidnight(2026, 7, 20)
    static let runA: @Sendable (Int64) -> Double = { 10 + Double(($0 / 3600) % 13) / 10 }
    static let runB: @Sendable (Int64) -> Double = { 12 + Double(($0 / 3600) % 7) / 10 }

    func importFile(_ box: Sandbox, _ name: String, _ response: TestResponse, at time: Int64) async throws {
        let path = try box.write(name, response.json())
        let result = await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(time))
        #expect(result.code == 0, "\(result.stderrText)")
    }

    /// Every table's row count from `stats --format json`, beside `count(*)`.
    func statsAgree(_ box: Sandbox, _ step: String) async throws {
        let result = await box.run("stats", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let json = try parseJSON(result.stdout)
        // What stats counts from the runs' own counts is checked against the rows themselves.
        let counted = try SQLiteBackdoor(box.db).rowCounts()
        for table in SQLiteBackdoor.tables {
            #expect(json["tables"]?[table]?.numberValue.map { Int64($0) } == counted[table], "\(table) after \(step)")
        }
        let fromRuns = json["counted_from_runs"]?.arrayValue?.compactMap(\.stringValue)
        #expect(fromRuns == ["hourly_forecasts", "daily_forecasts"])
    }

    @Test("stats' hourly and daily counts, summed from the runs, equal the rows after stores, a moved window and prune")
    func countsFromRuns() async throws {
        let box = Sandbox()
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let csv = try box.write(
            "station.csv", stationCSV(from: Self.day0 - 86400, hours: 24 * 8) { 11 + Double(($0 / 3600) % 5) / 10 })
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        let d = Self.day0
        let steps: [(String, TestResponse?, Int64)] = [
            ("a first run", TestResponse(start: d, hours: 72, temperature: Self.runA), d + 18 * 3600),
            // The same model run after the window moved at midnight: the run takes the new hours.
            ("a moved window", TestResponse(start: d + 86400, hours: 72, temperature: Self.runA), d + 86400 + 1800),
            ("a newer run", TestResponse(start: d + 86400, hours: 72, temperature: Self.runB), d + 86400 + 6 * 3600),
            (
                "the same content again", TestResponse(start: d + 86400, hours: 72, temperature: Self.runB),
                d + 86400 + 7 * 3600
            ),
            ("prune", nil, 0)
        ]
        for (index, (step, response, time)) in steps.enumerated() {
            if let response {
                try await importFile(box, "r\(index).json", response, at: time)
            } else {
                #expect(await box.run("prune", "--keep-days", "0").code == 0)
            }
            try await statsAgree(box, step)
        }
    }

    @Test("the stats table marks the counts summed from the runs")
    func statsTableSaysSo() async throws {
        let box = Sandbox()
        defer { box.remove() }
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        let result = await box.run("stats")
        #expect(result.code == 0)
        #expect(result.stdout.contains("hourly_forecasts *"))
        #expect(result.stdout.contains("* summed from the runs' own hour and day counts"))
    }

    @Test("a batched ingest logs each location with a request for it alone, without the key")
    func fetchLogNamesOneLocation() async throws {
        let replay = try ReplaySandbox()
        defer { replay.box.remove() }
        try await replay.addThreeRecordedLocations()
        let result = await replay.run("--api-key", "s3cret-key", "ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(replay.forecastRequests.count == 1)
        // The request text is kept in the fetch log only; no command prints it.
        let rows = try SQLiteBackdoor(replay.box.db).db.rows(
            "SELECT l.name, f.request FROM fetch_log f JOIN locations l ON l.id = f.location_id WHERE f.outcome = 'stored'"
        ) { ($0.string(0), $0.string(1)) }
        let own = [
            "Copenhagen": "latitude=55.6761&longitude=12.5683&", "Toronto": "latitude=43.7&longitude=-79.4&",
            "Adelaide": "latitude=-34.93&longitude=138.6&"
        ]
        #expect(rows.count == 3)
        for (name, request) in rows {
            #expect(request.contains(own[name]!), "\(name): \(request)")
            #expect(request.contains("forecast_days=16") && request.contains("hourly=temperature_2m,"))
            #expect(!request.contains("s3cret"))
        }
    }

    @Test("doctor and doctor --quick say ok on a sound database", arguments: [[], ["--quick"]])
    func doctorSound(_ extra: [String]) async throws {
        let box = Sandbox()
        defer { box.remove() }
        _ = try GeneratedHistory.build(box)
        let result = await box.run(["doctor"] + extra)
        #expect(result.code == 0, "\(result.stdout)\(result.stderrText)")
        let label = extra.isEmpty ? "integrity         " : "integrity (quick) "
        #expect(result.stdout.contains(label + "ok"), "\(result.stdout)")
        #expect(result.stdout.contains("foreign keys") && result.stdout.contains("(current)"))
        #expect(result.stdout.contains("not checked: --quick") == !extra.isEmpty)
    }

    @Test("doctor --quick still finds a damaged page and changes nothing", arguments: [[], ["--quick"]])
    func doctorDamaged(_ extra: [String]) async throws {
        let box = Sandbox()
        defer { box.remove() }
        _ = try GeneratedHistory.build(box)
        try SQLiteBackdoor.damagePage(of: box.db)
        let damaged = try Data(contentsOf: URL(fileURLWithPath: box.db))
        let result = await box.run(["doctor"] + extra)
        #expect(result.code == 1)
        #expect(result.stderrText.contains("problems"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.db)) == damaged)
    }
}
