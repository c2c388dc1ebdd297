import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite
import WxStore
import WxStoreSQLite

@testable import WxCLI

/// A response of several models' hourly temperatures, written for these tests: labels (iso8601,
/// or unix stamps as Open-Meteo prints them: label − actual offset) on whole local hours from a
/// local midnight, as Open-Meteo sends them at any offset.
struct MultiModelResponse {
    var latitude = 52.5
    var longitude = 13.4
    var offset = 0
    var timezone = "GMT"
    /// The first label's local wall time (seconds as if UTC).
    var firstLabel: Int64
    var hours: Int
    var iso = true
    /// Temperature of each model at the hour index.
    var models: [(name: String, value: (Int) -> Double)]

    func json() -> String {
        let labels = (0..<hours).map { firstLabel + Int64($0) * 3600 }
        let times = labels.map { label in
            iso ? "\"" + CivilTime.isoUTC(label).prefix(16) + "\"" : String(label - Int64(offset))
        }
        func list(_ xs: [Double]) -> String { "[" + xs.map { JSON.numberText($0) }.joined(separator: ",") + "]" }
        let suffixed = models.count > 1
        var units = "\"time\":\"\(iso ? "iso8601" : "unixtime")\""
        var columns = ""
        for model in models {
            let key = suffixed ? "temperature_2m_\(model.name)" : "temperature_2m"
            units += ",\"\(key)\":\"°C\""
            columns += ",\"\(key)\":" + list((0..<hours).map(model.value))
        }
        return """
            {"latitude":\(latitude),"longitude":\(longitude),"elevation":40,"utc_offset_seconds":\(offset),
             "timezone":"\(timezone)","hourly_units":{\(units)},
             "hourly":{"time":[\(times.joined(separator: ","))]\(columns)}}
            """
    }
}

/// The rows of a JSON report, and the sum of their `n`.
func reportRows(_ result: RunResult) throws -> (rows: [JSON], n: Double, object: JSON) {
    let object = try parseJSON(result.stdout)
    let rows = object["rows"]?.arrayValue ?? []
    return (rows, rows.compactMap { $0["n"]?.numberValue }.reduce(0, +), object)
}

/// Issue 25 §1: a model scored against itself.
@Suite("analysis is kept per model and never scores its own model")
struct OwnAnalysisTests {
    static let day = utcMidnight(2026, 7, 20)

    /// Two models ingested twice (the second fetch 30 h later keeps 30 past hours of each as its
    /// analysis); gfs runs 1.5 °C warmer than ecmwf everywhere.
    func setUp() async throws -> Sandbox {
        let box = Sandbox()
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let response = MultiModelResponse(
            firstLabel: Self.day, hours: 48,
            models: [
                ("ecmwf_ifs025", { 10 + sin(Double($0) / 3) }), ("gfs_seamless", { 11.5 + sin(Double($0) / 3) })
            ])
        let path = try box.write("run.json", response.json())
        for fetched in [Self.day + 3600, Self.day + 30 * 3600] {
            let stored = await box.run(
                "import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(fetched))
            #expect(stored.code == 0, "\(stored.stderrText)")
        }
        return box
    }

    @Test("verify --by model: no model has MAE 0 against its own past hours; the output says the truth is model output")
    func noSelfScore() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let store = try SQLiteStore.openReadOnly(path: box.db)
        let here = try store.requireLocation(named: "Here")
        let sources = try store.observationSources(locationID: here.id).sorted()
        #expect(sources == ["analysis:ecmwf_ifs025", "analysis:gfs_seamless"])

        let result = await box.run("query", "verify", "--location", "Here", "--by", "model", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let (rows, _, object) = try reportRows(result)
        // Before: source "analysis" (ecmwf's hours), ecmwf with bias 0, MAE 0, correlation 1.
        #expect(!rows.isEmpty)
        for row in rows {
            #expect(row["mae"]?.numberValue.map { abs($0 - 1.5) < 1e-9 } == true, "\(row)")
        }
        let source = try #require(object["source"]?.stringValue)
        let scored = Set(rows.compactMap { $0["model"]?.stringValue })
        #expect(SourceNames.analysisModel(source).map { !scored.contains($0) } == true)
        #expect(object["source_is_model_output"]?.boolValue == true)
        #expect(
            object["notes"]?.arrayValue?.first?.stringValue?.contains("model output") == true, "\(result.stdout)")

        // Compare has no truth but the two models' own analyses: it says so, it does not score either against itself.
        let compare = await box.run("query", "compare", "--location", "Here", "--models", "ecmwf_ifs025,gfs_seamless")
        #expect(compare.code == 1)
        #expect(compare.stderrText.contains("not scored against its own output"), "\(compare.stderrText)")

        let table = await box.run("query", "verify", "--location", "Here", "--by", "model")
        #expect(table.stdout.contains("MODEL OUTPUT, not measurements"), "\(table.stdout)")
    }

    @Test(
        "--model picks another model's analysis; asking for a model's own analysis finds no pairs",
        arguments: [
            ("ecmwf_ifs025", "analysis:gfs_seamless", -1.5), ("gfs_seamless", "analysis:ecmwf_ifs025", 1.5)
        ])
    func otherModelsAnalysis(_ model: String, _ expectedSource: String, _ bias: Double) async throws {
        let box = try await setUp()
        defer { box.remove() }
        let result = await box.run("query", "verify", "--location", "Here", "--model", model, "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let (rows, n, object) = try reportRows(result)
        #expect(object["source"]?.stringValue == expectedSource)
        #expect(n == 30)
        #expect(rows.allSatisfy { $0["bias"]?.numberValue.map { abs($0 - bias) < 1e-9 } == true })
        let own = await box.run(
            "query", "verify", "--location", "Here", "--model", model, "--source", "analysis:" + model)
        #expect(own.code == 1, "\(own.stdout)")
    }

    @Test("a station source ranks before every analysis, whatever their sizes")
    func stationFirst() async throws {
        let box = try await setUp()
        defer { box.remove() }
        let csv = stationCSV(from: Self.day + 10 * 3600, hours: 3) { _ in 12 }
        let path = try box.write("station.csv", csv)
        #expect(await box.run("observe", "import", path, "--location", "Here", "--source", "metar").code == 0)
        let result = await box.run("query", "verify", "--location", "Here", "--format", "json")
        let (_, n, object) = try reportRows(result)
        #expect(object["source"]?.stringValue == "metar")
        #expect(object["source_is_model_output"]?.boolValue == false)
        #expect(n == 6)
        #expect(await box.run("observe", "import", path, "--location", "Here", "--source", "analysis:x").code == 64)
    }
}

/// Issue 25 §2: Open-Meteo reads whole UTC hours at offsets that are not whole hours.
@Suite("instants at offsets that are not whole hours")
struct WholeHourInstantTests {
    static let day = utcMidnight(2026, 7, 20)

    @Test(
        "forecast hours pair with station hours on whole UTC hours",
        arguments: [
            (20700, "Asia/Kathmandu", true), (20700, "Asia/Kathmandu", false), (19800, "Asia/Kolkata", true),
            (34200, "Australia/Darwin", false), (-12600, "America/St_Johns", true),
            (-12600, "America/St_Johns", false), (3600, "Europe/London", true)
        ])
    func pairsWithStations(_ offset: Int, _ zone: String, _ iso: Bool) async throws {
        let box = Sandbox()
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "27.7", "--lon", "85.3", "--timezone", zone).code == 0)
        // Labels from local midnight; Open-Meteo read them at label − (offset truncated to whole hours).
        let read = Int64((offset / 3600) * 3600)
        let response = MultiModelResponse(
            latitude: 27.7, longitude: 85.3, offset: offset, timezone: zone, firstLabel: Self.day, hours: 24, iso: iso,
            models: [("best_match", { 20 + Double($0) })])
        let path = try box.write("run.json", response.json())
        let firstHour = Self.day - read
        #expect(
            await box.run("import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(firstHour - 600)).code
                == 0)
        // A station reporting on whole UTC hours, 0.5 °C above the forecast read at each.
        let csv = stationCSV(from: firstHour, hours: 24) { 20.5 + Double(($0 - firstHour) / 3600) }
        #expect(
            await box.run("observe", "import", try box.write("s.csv", csv), "--location", "Here", "--source", "metar")
                .code == 0)
        let result = await box.run("query", "verify", "--location", "Here", "--source", "metar", "--format", "json")
        // Before: no pair at all (every forecast hour 15–45 minutes off the station's).
        #expect(result.code == 0, "\(result.stderrText)")
        let (rows, n, _) = try reportRows(result)
        #expect(n == 24)
        #expect(rows.allSatisfy { $0["mae"]?.numberValue.map { abs($0 - 0.5) < 1e-9 } == true })
    }

    @Test("Home Assistant statistics on whole UTC hours pair with a +05:45 location's forecasts")
    func homeAssistantAtKathmandu() async throws {
        let box = Sandbox()
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "27.7", "--lon", "85.3", "--timezone", "Asia/Kathmandu")
                .code == 0)
        let firstHour = Self.day - 5 * 3600
        let response = MultiModelResponse(
            latitude: 27.7, longitude: 85.3, offset: 20700, timezone: "Asia/Kathmandu", firstLabel: Self.day, hours: 24,
            models: [("best_match", { 20 + Double($0) })])
        let run = try box.write("run.json", response.json())
        #expect(
            await box.run("import", run, "--location", "Here", "--fetched-at", CivilTime.isoUTC(firstHour - 600)).code
                == 0)
        // Hourly means of the hours starting at 19:00Z...: each valid at the hour's end, 0.5 °C above the forecast there.
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        var rows: [Int64: Double?] = [:]
        for hour in 0..<12 { rows[Int64(hour)] = 20.5 + Double(hour + 1) }
        try HomeAssistantFixture.write(
            path, start: firstHour, statistics: [.init(id: "sensor.outdoor", unit: "°C", mean: true, rows: rows)])
        let imported = await box.run(
            "observe", "import-home-assistant", path, "--location", "Here", "--sensor", "temperature_2m=sensor.outdoor")
        #expect(imported.code == 0, "\(imported.stderrText)")
        let result = await box.run(
            "query", "verify", "--location", "Here", "--source", "home-assistant", "--format", "json")
        // Before: exit 1, no pair (the forecast hours sat at 18:15Z, 19:15Z, ...).
        #expect(result.code == 0, "\(result.stderrText)")
        let (rows_, n, _) = try reportRows(result)
        #expect(n == 12)
        #expect(rows_.allSatisfy { $0["mae"]?.numberValue.map { abs($0 - 0.5) < 1e-9 } == true })
    }

    @Test("`current` is a true instant, labelled with the actual offset")
    func currentInstant() throws {
        let body = """
            {"latitude":27.7,"longitude":85.3,"utc_offset_seconds":20700,"timezone":"Asia/Kathmandu",
             "current_units":{"time":"iso8601","interval":"seconds","temperature_2m":"°C"},
             "current":{"time":"2026-07-20T10:45","interval":900,"temperature_2m":25.0},
             "hourly_units":{"time":"iso8601","temperature_2m":"°C"},
             "hourly":{"time":["2026-07-20T10:00"],"temperature_2m":[24.0]}}
            """
        let response = try ForecastDecoder.decodeSingle(Array(body.utf8), defaultModel: "m")
        #expect(response.current?.time == Self.day + 5 * 3600)
        #expect(response.models[0].hourlyTimes == [Self.day + 5 * 3600])
    }
}

/// Issue 25 §1 and §2 on a database written before: migration 0012.
@Suite("migration 0012: analysis per model, whole-hour instants")
struct Migration0012Tests {
    static let day = utcMidnight(2026, 7, 20)

    /// Turns the sandbox's database into what wxdb before migration 0012 wrote: every analysis
    /// under `analysis` from the first model of each fetch, and at `shifted` (Kathmandu) the forecast
    /// and analysis hours at label − 05:45 instead of the whole UTC hour read.
    func rewind(_ path: String, shifted: String, firstModel: String) throws {
        let db = try SQLiteBackdoor(path).db
        let kathmandu = try #require(
            try db.scalarInt("SELECT id FROM locations WHERE name = ?", [.text(shifted)]))
        try db.execute("DELETE FROM observations WHERE source GLOB 'analysis:*' AND source != 'analysis:\(firstModel)'")
        try db.execute("UPDATE observations SET source = 'analysis' WHERE source = 'analysis:\(firstModel)'")
        try db.execute(
            "UPDATE observations SET time = time - 2700 WHERE source = 'analysis' AND location_id = \(kathmandu)")
        let runs = "SELECT id FROM forecast_runs WHERE location_id = \(kathmandu)"
        try db.execute("UPDATE hourly_forecasts SET valid_time = valid_time - 2700 WHERE run_id IN (\(runs))")
        try db.execute(
            "UPDATE forecast_runs SET first_valid_time = first_valid_time - 2700, last_valid_time = last_valid_time - 2700 WHERE location_id = \(kathmandu)"
        )
        // The sums as the old wxdb kept them: rebuilt from these rows when next opened.
        try db.execute("DELETE FROM verification_summaries")
        try db.execute("INSERT INTO verification_sums_pending (id) VALUES (1)")
        let old = try #require(Schema.migrations.first { $0.name.hasPrefix("0009") }).sql
        let view = old[old.range(of: "CREATE VIEW forecast_observation_pairs AS")!.lowerBound...]
        try db.execute("DROP VIEW forecast_observation_pairs")
        try db.execute(String(view[..<view.range(of: ";")!.upperBound]))
        try db.execute("DROP TABLE migration_0012_pending")
        try db.execute("DELETE FROM schema_migrations WHERE name GLOB '0012*'")
        // 0014 and 0015 (ensembles) came later too.
        try db.execute("DROP TABLE ensemble_summaries")
        try db.execute("DROP TABLE ensemble_sums_pending")
        try db.execute("DELETE FROM schema_migrations WHERE name GLOB '0015*'")
        try db.execute("DROP TABLE ensemble_values")
        try db.execute("DROP TABLE ensemble_runs")
        try db.execute("DELETE FROM schema_migrations WHERE name GLOB '0014*'")
        // 0013 came after 0012: undone as well (its columns, its list, its record).
        for column in ["direction_n", "sum_sin_f", "sum_cos_f", "sum_sin_o", "sum_cos_o"] {
            try db.execute("ALTER TABLE verification_summaries DROP COLUMN " + column)
        }
        try db.execute("DROP TABLE migration_0013_pending")
        try db.execute("DELETE FROM schema_migrations WHERE name GLOB '0013*'")
    }

    @Test("existing analysis rows take their model's name, Kathmandu's hours move to whole UTC hours, sums agree")
    func migrates() async throws {
        let box = Sandbox()
        defer { box.remove() }
        let models: [(name: String, value: (Int) -> Double)] = [
            ("ecmwf_ifs025", { 20 + Double($0 % 5) }), ("gfs_seamless", { 21 + Double($0 % 5) })
        ]
        for (name, zone, offset, lat, lon) in [
            ("Kathmandu", "Asia/Kathmandu", 20700, 27.7, 85.3), ("Berlin", "UTC", 0, 52.5, 13.4)
        ] {
            #expect(
                await box.run(
                    "locations", "add", name, "--lat", String(lat), "--lon", String(lon), "--timezone", zone
                ).code == 0)
            let response = MultiModelResponse(
                latitude: lat, longitude: lon, offset: offset, timezone: zone, firstLabel: Self.day, hours: 48,
                models: models)
            let path = try box.write("\(name).json", response.json())
            let first = Self.day - Int64((offset / 3600) * 3600)
            for fetched in [first + 600, first + 30 * 3600] {
                #expect(
                    await box.run("import", path, "--location", name, "--fetched-at", CivilTime.isoUTC(fetched)).code
                        == 0)
            }
            let csv = stationCSV(from: first, hours: 48) { 20.25 + Double((($0 - first) / 3600) % 5) }
            #expect(
                await box.run(
                    "observe", "import", try box.write("\(name).csv", csv), "--location", name, "--source", "metar"
                ).code == 0)
        }
        try rewind(box.db, shifted: "Kathmandu", firstModel: "ecmwf_ifs025")

        // Opening migrates; every pair with the station is found again, and the analysis of the
        // model each fetch stored first scores only the other model.
        let station = await box.run(
            "query", "verify", "--location", "Kathmandu", "--source", "metar", "--by", "model", "--format", "json")
        #expect(station.code == 0, "\(station.stderrText)")
        #expect(try reportRows(station).n == 2 * 47)
        for name in ["Kathmandu", "Berlin"] {
            #expect(try box.observationSources(name) == ["analysis:ecmwf_ifs025", "metar"], "\(name)")
        }
        // No command shows a time that is not on the hour: the rows are read to see none is stored.
        let db = try SQLiteBackdoor(box.db).db
        #expect(try db.scalarInt("SELECT count(*) FROM hourly_forecasts WHERE valid_time % 3600 != 0") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM observations WHERE time % 3600 != 0") == 0)
        #expect(try db.scalarInt("SELECT count(*) FROM migration_0012_pending") == 0)
        #expect(
            try db.scalarInt("SELECT count(*) FROM verification_summaries WHERE source = 'analysis:' || model") == 0)
        for name in ["Kathmandu", "Berlin"] {
            let analysis = await box.run(
                "query", "verify", "--location", name, "--source", "analysis:ecmwf_ifs025", "--by", "model", "--format",
                "json")
            let (rows, n, _) = try reportRows(analysis)
            #expect(Set(rows.compactMap { $0["model"]?.stringValue }) == ["gfs_seamless"], "\(name)")
            #expect(n == 30, "\(name)")
            #expect(rows.allSatisfy { $0["bias"]?.numberValue.map { abs($0 - 1) < 1e-9 } == true }, "\(name)")
        }
        let doctor = await box.run("doctor", "--deep")
        #expect(doctor.code == 0, "\(doctor.stdout)\(doctor.stderrText)")
    }
}
