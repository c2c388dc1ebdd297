import Foundation
import TestSupport
import Testing
import WxCore
import WxQueries
import WxSQLite

@testable import WxCLI

/// Issue 25 §6: behaviours the suite did not pin down (each found by a one-line mistake that no
/// test caught).
@Suite("answers the suite did not pin down (issue 25)")
struct SurvivorTests {
    static let day = utcMidnight(2026, 7, 20)
    static let hour: Int64 = 3600

    func newLocation(_ box: Sandbox) async {
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
    }

    @Test(
        "rewriting the observation in the hour before a run's issue time moves that run's persistence reference",
        arguments: StoreEngine.all)
    func persistenceAfterRewrittenSpan(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        await newLocation(box)
        let d = Self.day
        // Observations 00:00-10:00: 10 °C up to 05:00, 11 °C from 06:00.
        let first = try box.write("first.csv", stationCSV(from: d, hours: 11) { t in t < d + 6 * Self.hour ? 10 : 11 })
        #expect(await box.run("observe", "import", first, "--location", "Here", "--source", "station").code == 0)
        // A run issued at 05:30, forecasting 06:00-10:00 at 12 °C: its reference is the 05:00 observation.
        let run = TestResponse(start: d + 6 * Self.hour, hours: 5) { _ in 12 }
        let path = try box.write("run.json", run.json())
        let issued = CivilTime.isoUTC(d + 5 * Self.hour + 1800)
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", issued).code == 0)
        func persistenceRMSE() async throws -> Double? {
            let result = await box.run(
                "query", "verify", "--location", "Here", "--source", "station", "--format", "json")
            #expect(result.code == 0, "\(result.stderrText)")
            let rows = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue)
            #expect(rows.count == 1)
            return rows.first?["persistence_rmse"]?.numberValue
        }
        // Persistence 10 against 11: errors −1, RMSE 1.
        #expect(near(try await persistenceRMSE(), 1, 1e-12))
        // Only 05:00 rewritten, to 14 °C: persistence errors +3, RMSE 3.
        let second = try box.write("second.csv", "time,temperature_2m\n\(CivilTime.isoUTC(d + 5 * Self.hour)),14\n")
        #expect(await box.run("observe", "import", second, "--location", "Here", "--source", "station").code == 0)
        #expect(near(try await persistenceRMSE(), 3, 1e-12))
        #expect(await box.run("doctor", "--deep").code == 0)
    }

    @Test("Home Assistant precipitation with --from keeps the first hour's sum (the increase from the hour before)")
    func homeAssistantPrecipitationFrom() async throws {
        let box = Sandbox()
        defer { box.remove() }
        await newLocation(box)
        let d = Self.day
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        // Running totals at the rows starting 00:00 ... 05:00; the row starting H is the hour ending H + 1 h.
        let sums: [Double] = [0, 1, 3, 6, 10, 15]
        try HomeAssistantFixture.write(
            path, start: d,
            statistics: [
                .init(
                    id: "sensor.rain", unit: "mm", mean: false,
                    rows: Dictionary(uniqueKeysWithValues: sums.enumerated().map { (Int64($0.offset), $0.element) }))
            ])
        let result = await box.run(
            "observe", "import-home-assistant", path, "--location", "Here", "--sensor", "precipitation=sensor.rain",
            "--from", CivilTime.isoUTC(d + 3 * Self.hour))
        #expect(result.code == 0, "\(result.stderrText)")
        let stored = try storedObservations(box.db, source: "home-assistant")
        // The hour ending 03:00 is the row starting 02:00 (3) less the one before it (1): 2 mm.
        #expect(stored[d + 3 * Self.hour]?["precipitation"] == 2)
        #expect(stored[d + 4 * Self.hour]?["precipitation"] == 3)
        #expect(stored[d + 5 * Self.hour]?["precipitation"] == 4)
        #expect(stored[d + 6 * Self.hour]?["precipitation"] == 5)
        #expect(stored[d + 2 * Self.hour] == nil)
    }

    /// The values of `attribute` on the elements of `text` that match `element` (a prefix such as `<circle`).
    func attributes(_ attribute: String, in text: Substring) -> [String] {
        var values: [String] = []
        var rest = text[...]
        while let range = rest.range(of: " \(attribute)=\"") {
            let after = rest[range.upperBound...]
            guard let end = after.firstIndex(of: "\"") else { break }
            values.append(String(after[..<end]))
            rest = after[end...]
        }
        return values
    }

    @Test(
        "report: the dashed line of the errors chart is the bias (on zero for errors of ±1), not the MAE",
        arguments: StoreEngine.all)
    func reportBiasLine(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        await newLocation(box)
        let d = Self.day
        let csv = try box.write("station.csv", stationCSV(from: d, hours: 48) { _ in 10 })
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        // Errors +1, −1, +1, ... by hour: every lead bucket has bias 0 and MAE 1.
        let run = TestResponse(start: d, hours: 48) { t in (t - d) / 3600 % 2 == 0 ? 11 : 9 }
        let path = try box.write("run.json", run.json())
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        let report = await box.run("report", "--location", "Here", "--source", "station", "--var", "temperature_2m")
        #expect(report.code == 0, "\(report.stderrText)")
        let page = report.stdout
        let section = try #require(page.range(of: "<section id=\"errors-by-lead\"").map { page[$0.lowerBound...] })
        let bias = try #require(section.range(of: "data-series=\"best_match bias\">").map { section[$0.upperBound...] })
        let group = bias[..<(bias.range(of: "</g>")?.lowerBound ?? bias.endIndex)]
        #expect(group.hasPrefix("<path class=\"line c0 d1\""), "\(group.prefix(80))")
        // The zero line (class ref) and the bias points share their y.
        let reference = try #require(section.range(of: "<path class=\"ref\" d=\"M").map { section[$0.upperBound...] })
        let zeroY = reference.split(separator: "H").first.flatMap { $0.split(separator: " ").last }.map(String.init)
        let ys = attributes("cy", in: group)
        #expect(ys.count == 4)
        #expect(ys.allSatisfy { $0 == zeroY }, "\(ys) against \(String(describing: zeroY))")
        #expect(group.contains("lead 0–6 h, 0 °C"))
    }

    @Test(
        "report: with fetches every 3 h, a 9 h gap misses the 6 hours after the usual interval",
        arguments: StoreEngine.all)
    func coverageCadence(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        await newLocation(box)
        let d = Self.day
        let csv = try box.write("station.csv", stationCSV(from: d, hours: 72) { _ in 10 })
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        for (k, at) in [0, 3, 6, 9, 18, 21].enumerated() {
            let issued = d + Int64(at) * Self.hour
            let run = TestResponse(start: issued, hours: 24) { _ in 10 + Double(k) }
            let path = try box.write("run-\(k).json", run.json())
            #expect(
                await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(issued)).code == 0)
        }
        let report = await box.run("report", "--location", "Here", "--source", "station")
        #expect(report.code == 0, "\(report.stderrText)")
        #expect(report.stdout.contains("usual interval 3 h"))
        // Expected fetches at 12:00 and 15:00 did not come: 12:00 to 17:00 are missed, not 10:00 to 17:00.
        #expect(report.stdout.contains("data-state=\"missed\" data-hours=\"6\""), "\(report.stdout.suffix(2500))")
    }

    @Test(
        "Flip-Flop Index of directions, by hand: the short way round and the smallest sector",
        arguments: [
            // 20° steps across north, sector 20°: (60 − 20) / 2 (not 340° steps).
            ([350, 10, 350, 10], 20.0),
            // Steps 110, 100 and 150 (300 → 90 the short way); the widest gap is 150°, so the sector is
            // 210°, capped at 180°: (360 − 180) / 2.
            ([90, 200, 300, 90], 90.0),
            // Three directions 120° apart: steps 120 + 120, sector 240° capped at 180°: 60 / 1.
            ([0, 120, 240], 60.0),
            // One way round, no reversal: 10 + 10 − 20 = 0.
            ([355, 5, 15], 0.0)
        ] as [([Double], Double)])
    func angularFlipFlop(_ directions: [Double], _ expected: Double) throws {
        let index = try #require(FlipFlop.index(directions, angular: true))
        #expect(abs(index - expected) < 1e-12)
    }

    @Test(
        "consistency of wind direction through the command: runs alternating 350° and 10° flip-flop by 20°",
        arguments: StoreEngine.all)
    func angularConsistency(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        await newLocation(box)
        let valid = Self.day
        for (k, lead) in [42, 36, 30, 24].enumerated() {
            let issued = valid - Int64(lead) * Self.hour
            let json = """
                {"latitude":52.5,"longitude":13.4,"elevation":40,"utc_offset_seconds":0,"timezone":"GMT",
                 "hourly_units":{"time":"unixtime","wind_direction_10m":"°"},
                 "hourly":{"time":[\(valid)],"wind_direction_10m":[\(k % 2 == 0 ? 350 : 10)],"cloud_cover":[\(k)]}}
                """
            let path = try box.write("run-\(k).json", json)
            #expect(
                await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(issued)).code == 0)
        }
        let result = await box.run(
            "query", "consistency", "--location", "Here", "--var", "wind_direction_10m", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect(row["n"]?.numberValue == 1)
        #expect(near(row["flip_flop_index"]?.numberValue, 20, 1e-12))
    }

    @Test(
        "trend --every day: a day's observed and forecast values are the means of its hours", arguments: StoreEngine.all
    )
    func trendDailyMeans(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        await newLocation(box)
        let d = Self.day
        // Observed 0, 1, ..., 23 °C over the day (mean 11.5); forecast 20 + hour / 2 (mean 25.75).
        let csv = try box.write("station.csv", stationCSV(from: d, hours: 24) { t in Double((t - d) / 3600) })
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
        let run = TestResponse(start: d, hours: 24) { t in 20 + Double((t - d) / 3600) / 2 }
        let path = try box.write("run.json", run.json())
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        let result = await box.run(
            "query", "trend", "--location", "Here", "--source", "station", "--lead", "12", "--tolerance", "12",
            "--every", "day", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect(row["hours"]?.numberValue == 24)
        #expect(near(row["observed"]?.numberValue, 11.5, 1e-9))
        #expect(near(row["forecast"]?.numberValue, 25.75, 1e-9))
        #expect(near(row["error"]?.numberValue, 14.25, 1e-9))
    }

    @Test("report: a 45 % probability forecast is in the reliability diagram's 40-50 % bin", arguments: StoreEngine.all)
    func reliabilityBins(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        await newLocation(box)
        let d = Self.day
        var csv = "time,precipitation\n"
        for k in 0..<24 { csv += "\(CivilTime.isoUTC(d + Int64(k) * 3600)),\(k % 2 == 0 ? 1 : 0)\n" }
        let station = try box.write("station.csv", csv)
        #expect(await box.run("observe", "import", station, "--location", "Here", "--source", "station").code == 0)
        let hours = (0..<24).map { d + Int64($0) * 3600 }
        let json = """
            {"latitude":52.5,"longitude":13.4,"elevation":40,"utc_offset_seconds":0,"timezone":"GMT",
             "hourly_units":{"time":"unixtime","precipitation_probability":"%","precipitation":"mm"},
             "hourly":{"time":[\(hours.map(String.init).joined(separator: ","))],
                       "precipitation_probability":[\(hours.map { _ in "45" }.joined(separator: ","))],
                       "precipitation":[\(hours.map { _ in "0.5" }.joined(separator: ","))]}}
            """
        let path = try box.write("run.json", json)
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        let report = await box.run("report", "--location", "Here", "--source", "station")
        #expect(report.code == 0, "\(report.stderrText)")
        // 24 forecasts of 45 %, half of them followed by rain.
        #expect(report.stdout.contains("forecast 40–50 % (mean 45 %), observed 50 %"), "\(report.stdout.suffix(3000))")
    }
}
