import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay
import WxSQLite

@testable import WxCLI

/// Issue 25 §5: values no weather can have are refused at every door, counted and said; what a
/// database already holds cannot crash a chart or overflow the sums.
@Suite("values no weather can have")
struct PhysicalRangeTests {
    static let day = utcMidnight(2026, 7, 20)

    /// A location with 48 hours of station temperatures of 11 °C from `day`.
    func setUp(_ box: Sandbox, observed: Double = 11) async throws {
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let csv = try box.write("station.csv", stationCSV(from: Self.day, hours: 48) { _ in observed })
        #expect(await box.run("observe", "import", csv, "--location", "Here", "--source", "station").code == 0)
    }

    /// The pairs `query verify` counts over every lead bucket.
    func pairCount(_ box: Sandbox) async throws -> Int {
        let result = await box.run("query", "verify", "--location", "Here", "--source", "station", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let rows = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue)
        return rows.compactMap { $0["n"]?.numberValue }.map { Int($0) }.reduce(0, +)
    }

    @Test(
        "one impossible hourly temperature in a response is left empty and counted; verify, svg and report work",
        arguments: [1e19, 1e20, -1e20, 1e200, 1e308, 65.5, -95.5])
    func impossibleForecast(_ value: Double) async throws {
        let box = Sandbox()
        defer { box.remove() }
        try await setUp(box)
        let d = Self.day
        let run = TestResponse(start: d, hours: 48) { t in
            t == d + 5 * 3600 ? value : 10 + Double((t - d) / 3600 % 5)
        }
        let path = try box.write("run.json", run.json())
        let imported = await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d))
        #expect(imported.code == 0, "\(imported.stderrText)")
        #expect(imported.stderrText.contains("outside what weather can have"), "\(imported.stderrText)")
        #expect(imported.stderrText.contains("temperature_2m 1"), "\(imported.stderrText)")
        // 48 hours, one of them empty: 47 pairs.
        #expect(try await pairCount(box) == 47)
        let table = await box.run("query", "verify", "--location", "Here", "--source", "station")
        #expect(table.code == 0)
        #expect(!table.stdout.contains("ran  "), "\(table.stdout)")
        let svg = await box.run("query", "verify", "--location", "Here", "--source", "station", "--format", "svg")
        #expect(svg.code == 0 && svg.stdout.contains("<svg"))
        let report = await box.run("report", "--location", "Here", "--source", "station")
        #expect(report.code == 0, "\(report.stderrText)")
        // Observations rewritten over the same hours: the sums update without a NOT NULL failure.
        let csv = try box.write("station2.csv", stationCSV(from: d, hours: 48) { _ in 11.5 })
        let again = await box.run("observe", "import", csv, "--location", "Here", "--source", "station")
        #expect(again.code == 0, "\(again.stderrText)")
        #expect(await box.run("doctor", "--deep").code == 0)
    }

    @Test("ingest: an impossible value in the server's answer is left empty and the summary line says so")
    func impossibleFromServer() async throws {
        let replay = try ReplaySandbox()
        defer { try? FileManager.default.removeItem(at: replay.box.folder) }
        #expect(
            await replay.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code
                == 0)
        let start: Int64 = 1_785_000_000 / 3600 * 3600 - 24 * 3600
        let answer = TestResponse(start: start, hours: 72) { t in t == start + 30 * 3600 ? 1e19 : 15 }
        replay.server.registerForecast(latitude: 52.5, longitude: 13.4, body: Data(answer.json().utf8))
        let result = await replay.run("ingest")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(
            result.stderrText.contains("value(s) outside what weather can have were left empty (temperature_2m 1"),
            "\(result.stderrText)")
        // As export hourly prints the stored hours: nothing impossible, the 71 other hours 15 °C.
        let export = await replay.run("export", "hourly", "--location", "Here", "--var", "temperature_2m")
        #expect(export.code == 0, "\(export.stderrText)")
        let lines = export.stdout.split(separator: "\r\n")
        let column = try #require(lines.first?.split(separator: ",").firstIndex(of: "temperature_2m"))
        let values = lines.dropFirst().map {
            String($0.split(separator: ",", omittingEmptySubsequences: false)[column])
        }
        #expect(values.compactMap(Double.init).allSatisfy { $0 <= 100 })
        #expect(values.filter { $0 == "15" }.count == 71)
    }

    @Test("a station CSV's impossible values are left empty, counted and said; the rest is stored")
    func impossibleCSV() async throws {
        let box = Sandbox()
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let d = Self.day
        let text = """
            time,temperature_2m,relative_humidity_2m,precipitation
            \(CivilTime.isoUTC(d)),12,50,0
            \(CivilTime.isoUTC(d + 3600)),1e20,150,-5
            \(CivilTime.isoUTC(d + 7200)),13,60,0.4

            """
        let path = try box.write("station.csv", text)
        let result = await box.run("observe", "import", path, "--location", "Here", "--source", "station")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(
            result.stderrText.contains(
                "3 value(s) outside what weather can have were left empty (precipitation 1, relative_humidity_2m 1, temperature_2m 1)"
            ), "\(result.stderrText)")
        let stored = try storedObservations(box.db, source: "station")
        #expect(stored[d] == ["temperature_2m": 12, "relative_humidity_2m": 50, "precipitation": 0])
        #expect(stored[d + 3600] == nil || stored[d + 3600] == [:])
        #expect(stored[d + 7200] == ["temperature_2m": 13, "relative_humidity_2m": 60, "precipitation": 0.4])
    }

    @Test("weewx: a negative rain record leaves its hour's precipitation empty, counted as out of range")
    func weewxNegativeRain() async throws {
        let box = Sandbox()
        defer { box.remove() }
        let archive = box.folder.appendingPathComponent("weewx.sdb").path
        let start = Self.day
        // Two hours of 5-minute US-unit records: 0.01 in each, except one of −5 in in the second hour.
        let records = stride(from: Int64(5), through: 120, by: 5).map { minute in
            WeewxFixture.Record(
                minute: minute, usUnits: 1, values: ["outTemp": 50, "rain": minute == 90 ? -5 : 0.01])
        }
        try WeewxFixture.write(archive, start: start, records: records)
        #expect(
            await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0
        )
        let result = await box.run("observe", "import-weewx", archive, "--location", "Garden")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("out of range"), "\(result.stderrText)")
        let stored = try storedObservations(box.db, source: "weewx")
        // 12 × 0.01 in = 3.048 mm in the first hour; none (not −1524 mm or −124 mm) in the second.
        #expect(stored[start + 3600]?["precipitation"] == 3.05)
        #expect(stored[start + 7200]?["precipitation"] == nil)
        #expect(stored[start + 7200]?["temperature_2m"] == 10)
    }

    @Test("consistency leaves out a stored impossible forecast: two runs left are no Flip-Flop Index")
    func consistencyOfStoredValues() async throws {
        let box = Sandbox()
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let valid = Self.day + 48 * 3600
        // Three runs 6 h apart for one valid hour at leads 36, 30 and 24 h: 10, 20, 11.
        for (k, value) in [10.0, 20, 11].enumerated() {
            let issued = valid - Int64(36 - 6 * k) * 3600
            var run = TestResponse(start: valid, hours: 1) { _ in value }
            run.precipitation = { _ in Double(k) }
            let path = try box.write("run-\(k).json", run.json())
            #expect(
                await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(issued)).code == 0)
        }
        func ffi() async throws -> Double? {
            let result = await box.run("query", "consistency", "--location", "Here", "--format", "json")
            // Nothing to show (no hour with three runs) is exit 1 with a sentence saying so.
            if result.code == 1, result.stderrText.contains("nothing to show") { return nil }
            #expect(result.code == 0, "\(result.stderrText)")
            return try parseJSON(result.stdout)["rows"]?.arrayValue?.first?["flip_flop_index"]?.numberValue
        }
        // 10, 20, 11: (10 + 9 − 10) / 1 = 9.
        #expect(near(try await ffi(), 9, 1e-12))
        do {
            let db = try SQLiteBackdoor(box.db).db
            try db.run("UPDATE hourly_forecasts SET temperature_2m = 1e19 WHERE temperature_2m = 20")
        }
        // Two runs left give no index; nothing to show is exit 1 (issue 27), an error saying why.
        let left = await box.run("query", "consistency", "--location", "Here", "--format", "json")
        #expect(left.code == 1)
        #expect(left.stdout.isEmpty)
        #expect(left.stderrText.contains("from three or more runs"), "\(left.stderrText)")
    }

    @Test("Home Assistant: an impossible mean is left empty and counted as out of range")
    func homeAssistantImpossible() async throws {
        let box = Sandbox()
        defer { box.remove() }
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        let start = Self.day
        try HomeAssistantFixture.write(
            path, start: start,
            statistics: [
                .init(id: "sensor.t", unit: "°C", mean: true, rows: [0: 12, 1: 1e20, 2: 13]),
                .init(id: "sensor.h", unit: "%", mean: true, rows: [0: 50, 1: 60, 2: 250])
            ])
        #expect(
            await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0
        )
        let result = await box.run(
            "observe", "import-home-assistant", path, "--location", "Garden", "--sensor", "temperature_2m=sensor.t",
            "--sensor", "relative_humidity_2m=sensor.h")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("out of range"), "\(result.stderrText)")
        let stored = try storedObservations(box.db, source: "home-assistant")
        // The row starting H is the hour ending H + 1 h.
        #expect(stored[start + 3600] == ["temperature_2m": 12, "relative_humidity_2m": 50])
        #expect(stored[start + 7200] == ["relative_humidity_2m": 60])
        #expect(stored[start + 10800] == ["temperature_2m": 13])
    }

    @Test("an overflowed sum in verification_summaries is caught by doctor --deep and cleared by --repair")
    func overflowedSums() async throws {
        let box = Sandbox()
        defer { box.remove() }
        try await setUp(box)
        let d = Self.day
        let run = TestResponse(start: d, hours: 48) { t in 10 + Double((t - d) / 3600 % 5) }
        let path = try box.write("run.json", run.json())
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        #expect(await box.run("doctor", "--deep").code == 0)
        // What a 1e200 stored before values were range-checked left: a sum of squares at infinity.
        do {
            let db = try SQLiteBackdoor(box.db).db
            try db.execute(
                "UPDATE verification_summaries SET sum_ff = 1e999, sum_err_sq = 1e999 WHERE (source, variable, lead_from_h, valid_from) IN (SELECT source, variable, lead_from_h, valid_from FROM verification_summaries WHERE variable = 'temperature_2m' LIMIT 1)"
            )
        }
        let deep = await box.run("doctor", "--deep")
        #expect(deep.code == 1, "\(deep.stdout)")
        #expect(deep.stderrText.contains("doctor --deep --repair"))
        #expect(await box.run("doctor", "--deep", "--repair").code == 0)
        #expect(await box.run("doctor", "--deep").code == 0)
        let verify = await box.run("query", "verify", "--location", "Here", "--source", "station", "--format", "json")
        let rows = try #require(try parseJSON(verify.stdout)["rows"]?.arrayValue)
        #expect(rows.allSatisfy { $0["rmse"]?.numberValue?.isFinite == true })
    }

    @Test("charts stay drawable when the database already holds an impossible forecast", arguments: [1e19, 1e308])
    func chartsOfStoredValues(_ value: Double) async throws {
        let box = Sandbox()
        defer { box.remove() }
        try await setUp(box)
        let d = Self.day
        let run = TestResponse(start: d, hours: 48) { t in 10 + Double((t - d) / 3600 % 5) }
        let path = try box.write("run.json", run.json())
        #expect(await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(d)).code == 0)
        // Written past the doors, as an older wxdb (or another program) could have stored it.
        do {
            let db = try SQLiteBackdoor(box.db).db
            try db.run(
                "UPDATE hourly_forecasts SET temperature_2m = ? WHERE valid_time = ?",
                [.real(value), .integer(d + 5 * 3600)])
        }
        let at = CivilTime.isoUTC(d + 5 * 3600)
        let forecast = await box.run(
            "query", "forecast", "--location", "Here", "--at", at, "--source", "station", "--format", "svg")
        #expect(forecast.code == 0 && forecast.stdout.contains("<svg"), "\(forecast.stderrText)")
        let report = await box.run("report", "--location", "Here", "--source", "station", "--at", at)
        #expect(report.code == 0, "\(report.stderrText)")
        // The rows changed behind wxdb's back: doctor sees it, and the repaired sums leave the value out.
        #expect(await box.run("doctor", "--deep").code == 1)
        #expect(await box.run("doctor", "--deep", "--repair").code == 0)
        #expect(try await pairCount(box) == 47)
        let verify = await box.run("query", "verify", "--location", "Here", "--source", "station", "--format", "json")
        let rows = try #require(try parseJSON(verify.stdout)["rows"]?.arrayValue)
        #expect(rows.allSatisfy { $0["rmse"]?.numberValue.map { $0 < 10 } == true })
    }
}

@Suite("physical ranges")
struct PhysicalRangeTableTests {
    @Test(
        "each variable's range holds the world records and refuses what no weather has",
        arguments: [
            ("temperature_2m", 56.7, true), ("temperature_2m", -89.2, true), ("temperature_2m", 1e19, false),
            ("temperature_2m", -273.2, false), ("relative_humidity_2m", 100, true),
            ("relative_humidity_2m", 100.5, false), ("precipitation", 305, true), ("precipitation", -0.1, false),
            ("pressure_msl", 870, true), ("pressure_msl", 1084.8, true), ("pressure_msl", 0, false),
            ("wind_gusts_10m", 408, true), ("wind_speed_10m", -1, false), ("wind_direction_10m", 360, true),
            ("wind_direction_10m", 361, false), ("weather_code", 95, true), ("weather_code", 2.5, false),
            ("weather_code", 100, false), ("cloud_cover", .nan, false), ("dew_point_2m", 35, true)
        ] as [(String, Double, Bool)])
    func ranges(_ name: String, _ value: Double, _ possible: Bool) throws {
        let variable = try #require(Variables.hourlyVariable(named: name))
        #expect(PhysicalRange.contains(value, variable) == possible)
    }

    @Test("daily sums and maxima have their own ranges")
    func daily() throws {
        let sum = try #require(Variables.daily.first { $0.name == "precipitation_sum" })
        #expect(PhysicalRange.contains(1825, sum))
        #expect(!PhysicalRange.contains(1e6, sum))
        let maximum = try #require(Variables.daily.first { $0.name == "temperature_2m_max" })
        #expect(!PhysicalRange.contains(70, maximum))
        let sunrise = try #require(Variables.daily.first { $0.name == "sunrise" })
        #expect(PhysicalRange.range(of: sunrise) == nil)
    }
}
