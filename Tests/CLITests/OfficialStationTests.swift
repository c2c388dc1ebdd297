import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite
import WxStore
import WxStoreSQLite

/// UTC seconds of a civil time.
private func utc(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int = 0) -> Int64 {
    UTCTime.days(fromCivil: y, month: mo, day: d) * 86400 + Int64(h * 3600 + mi * 60)
}

/// Every stored observation row of the database, as (source, time) → values; for "nothing changed".
private func allObservations(_ db: String) throws -> [String: [Int64: [String: Double]]] {
    let store: any Store = try SQLiteStore.openReadOnly(path: db)
    let sources = Set(try store.locations().flatMap { try store.observationSources(locationID: $0.id) })
    var out: [String: [Int64: [String: Double]]] = [:]
    for source in sources { out[source] = try storedObservations(db, source: source) }
    return out
}

@Suite("Official stations as observations (ISD, METAR, Meteostat)")
struct OfficialStationTests {
    @Test(
        "import-isd: the real Delhi ISD-Lite .gz stores the official hours as isd:421820-99999; again changes nothing")
    func isdLiteGzip() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run("locations", "add", "Delhi", "--lat", "28.58", "--lon", "77.21", "--timezone", "Asia/Kolkata")
                .code == 0)
        let file = box.fixture("stations/421820-99999-2019-excerpt.gz")
        let first = await box.run("observe", "import-isd", file, "--location", "Delhi")
        #expect(first.code == 0, "\(first.stderrText)")
        let stored = try storedObservations(box.db, source: "isd:421820-99999")
        #expect(stored.count == 20)
        #expect(
            stored[utc(2019, 7, 1, 9)] == [
                "temperature_2m": 41, "dew_point_2m": 23.5, "pressure_msl": 994.8, "wind_speed_10m": 7.56,
                "wind_direction_10m": 70
            ])
        #expect(
            stored[utc(2019, 7, 1, 18)] == [
                "temperature_2m": 34.2, "dew_point_2m": 21.9, "pressure_msl": 996.5, "wind_speed_10m": 0
            ])
        let text = first.stderrText
        #expect(text.contains("Stored 20 of 33 hours for Delhi (source isd:421820-99999)"), "\(text)")
        #expect(text.contains("13 no report"), "\(text)")
        #expect(text.contains("1 calm"), "\(text)")

        let again = await box.run("observe", "import-isd", file, "--location", "Delhi")
        #expect(again.code == 0)
        #expect(try storedObservations(box.db, source: "isd:421820-99999") == stored)

        // Delhi's local day 2019-07-01 (IST, +05:30) starts at 2019-06-30 18:30 UTC: --from/--to are local.
        let box2 = Sandbox()
        defer { try? FileManager.default.removeItem(at: box2.folder) }
        #expect(
            await box2.run(
                "locations", "add", "Delhi", "--lat", "28.58", "--lon", "77.21", "--timezone", "Asia/Kolkata"
            )
            .code == 0)
        let ranged = await box2.run(
            "observe", "import-isd", file, "--location", "Delhi", "--from", "2019-07-01", "--to", "2019-07-01")
        #expect(ranged.code == 0, "\(ranged.stderrText)")
        let day = try storedObservations(box2.db, source: "isd:421820-99999")
        #expect(day.keys.min() == utc(2019, 6, 30, 21))
        #expect(day.keys.max() == utc(2019, 7, 1, 18))
    }

    @Test("import-isd: a corrected file replaces the hours it covers and clears a value it no longer has")
    func correctedReplaces() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Hamburg", "--lat", "53.63", "--lon", "9.99").code == 0)
        let path = box.folder.appendingPathComponent("101470-99999-2024").path
        try """
        2024 01 01 00    50    20 10132    90    41     8    13 -9999
        2024 01 01 01    55    21 10130    90    41     8     0 -9999
        """.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(await box.run("observe", "import-isd", path, "--location", "Hamburg").code == 0)
        try """
        2024 01 01 00    52    20 10132    90    41     8 -9999 -9999
        2024 01 01 01    55    21 10130    90    41     8     0 -9999
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = await box.run("observe", "import-isd", path, "--location", "Hamburg")
        #expect(result.code == 0, "\(result.stderrText)")
        let stored = try storedObservations(box.db, source: "isd:101470-99999")
        #expect(stored[utc(2024, 1, 1, 0)]?["temperature_2m"] == 5.2)
        #expect(stored[utc(2024, 1, 1, 0)]?["precipitation"] == nil)
        #expect(stored[utc(2024, 1, 1, 1)]?["precipitation"] == 0)
    }

    @Test(
        "Bad input is refused with the line, and nothing is stored",
        arguments: [
            (
                "import-isd", "stations/metar-washington-2018-01-11-awc.txt", [String](),
                "line 1: this is not an ISD-Lite file"
            ),
            ("import-isd", "truncated.gz", [], "the gzip file is truncated"),
            ("import-isd", "hot-101470-99999-2024", [], "line 2: temperature_2m of 80.0 °C is impossible"),
            ("import-metar", "stations/421820-99999-2019-excerpt", [], "line 1: this is not METAR text"),
            ("import-metar", "stations/metar-washington-2018-01-11-awc.txt", ["--month", "2018-01"], "13 stations"),
            ("import-metar", "stations/metar-washington-2018-01-11-awc.txt", ["--station", "KSEA"], "--month YYYY-MM"),
            (
                "import-metar", "stations/metar-washington-2018-01-11-awc.txt",
                ["--station", "KDCA", "--month", "2018-01"],
                "no reports from KDCA"
            ),
            (
                "import-metar", "stations/metar-washington-2018-01-11-awc.txt",
                [
                    "--station", "KCLS", "--month", "2018-01", "--from", "2019-01-01T00:00Z", "--to",
                    "2019-01-02T00:00Z"
                ],
                "no hour to import"
            ),
            ("import-metar", "rain.csv", [], "line 3: precipitation of -2.54 mm is impossible"),
            (
                "import-meteostat", "stations/421820-99999-2019-excerpt", [],
                "line 1: this is not a Meteostat hourly file"
            )
        ])
    func badInput(_ command: String, _ file: String, _ extra: [String], _ phrase: String) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Hamburg", "--lat", "53.63", "--lon", "9.99").code == 0)
        // Something already stored, which a refused import must leave exactly as it was.
        let good = box.folder.appendingPathComponent("101470-99999-2024").path
        try "2024 01 01 00    50    20 10132    90    41     8    13 -9999\n".write(
            toFile: good, atomically: true, encoding: .utf8)
        #expect(await box.run("observe", "import-isd", good, "--location", "Hamburg").code == 0)
        let before = try allObservations(box.db)

        let gz = try Data(contentsOf: URL(fileURLWithPath: box.fixture("stations/421820-99999-2019-excerpt.gz")))
        try gz.prefix(gz.count - 10).write(to: box.folder.appendingPathComponent("truncated.gz"))
        try
            "2024 01 01 00    50    20 10132    90    41     8    13 -9999\n2024 01 01 01   800    20 10132    90    41     8    13 -9999\n"
            .write(
                toFile: box.folder.appendingPathComponent("hot-101470-99999-2024").path, atomically: true,
                encoding: .utf8)
        try "station,valid,tmpc,p01i\nEDDH,2024-01-01 00:50,5.0,0.00\nEDDH,2024-01-01 01:50,5.0,-0.10\n".write(
            toFile: box.folder.appendingPathComponent("rain.csv").path, atomically: true, encoding: .utf8)
        let path = file.hasPrefix("stations/") ? box.fixture(file) : box.folder.appendingPathComponent(file).path

        let result = await box.run(["observe", command, path, "--location", "Hamburg"] + extra)
        #expect(result.code == 1)
        // The last line (an import that read the file says what it read first).
        #expect(result.stderrText.split(separator: "\n").last?.hasPrefix("Error: ") == true, "\(result.stderrText)")
        #expect(result.stderrText.contains(phrase), "\(result.stderrText)")
        #expect(result.stderrText.contains("Nothing was stored"), "\(result.stderrText)")
        #expect(try allObservations(box.db) == before)
    }

    @Test("import-metar: the real ADDS text for one station, then IEM CSV in °F with DST, as metar:ID")
    func metarImports() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run(
                "locations", "add", "Bremerton", "--lat", "47.49", "--lon", "-122.76", "--timezone",
                "America/Los_Angeles"
            )
            .code == 0)
        let text = await box.run(
            "observe", "import-metar", box.fixture("stations/metar-washington-2018-01-11-awc.txt"), "--location",
            "Bremerton", "--station", "KPWT", "--month", "2018-01")
        #expect(text.code == 0, "\(text.stderrText)")
        #expect(
            try storedObservations(box.db, source: "metar:KPWT") == [
                utc(2018, 1, 11, 15): [
                    "temperature_2m": 7, "dew_point_2m": 7, "wind_speed_10m": 5.56, "wind_direction_10m": 170
                ]
            ])
        #expect(text.stderrText.contains("1 not the whole hour"), "\(text.stderrText)")

        // The location is on Pacific time, the file was asked for in Chicago time (tz=America/Chicago), over
        // the autumn change: 01:53 comes twice that night, first CDT (06:53 UTC), then CST (07:53 UTC).
        let csv = box.folder.appendingPathComponent("asos.csv").path
        try """
        station,valid,lon,lat,elevation,tmpf,dwpf,sknt,drct,p01i
        ORD,2024-11-02 23:53,-87.9336,41.9602,201.0,50.00,41.00,10.00,180.00,0.00
        ORD,2024-11-03 00:53,-87.9336,41.9602,201.0,48.20,41.00,0.00,0.00,0.01
        ORD,2024-11-03 01:53,-87.9336,41.9602,201.0,46.40,41.00,5.00,90.00,0.02
        ORD,2024-11-03 01:53,-87.9336,41.9602,201.0,44.60,41.00,5.00,90.00,0.03
        ORD,2024-11-03 02:53,-87.9336,41.9602,201.0,42.80,41.00,5.00,90.00,T
        """.write(toFile: csv, atomically: true, encoding: .utf8)
        let iem = await box.run(
            "observe", "import-metar", csv, "--location", "Bremerton", "--timezone", "America/Chicago", "--station",
            "KORD")
        #expect(iem.code == 0, "\(iem.stderrText)")
        #expect(try storedObservations(box.db, source: "metar:ORD").isEmpty)
        let stored = try storedObservations(box.db, source: "metar:KORD")
        // 23:53 CDT = 04:53 UTC → hour 05:00 UTC; 50 °F = 10 °C; 41 °F = 5 °C; 10 kt = 18.52 km/h.
        #expect(
            stored[utc(2024, 11, 3, 5)] == [
                "temperature_2m": 10, "dew_point_2m": 5, "wind_speed_10m": 18.52, "wind_direction_10m": 180
            ])
        // 00:53 CDT = 05:53 UTC → 06:00; 48.2 °F = 9 °C; calm; 0.01 in = 0.25 mm over the hour after a routine report.
        #expect(
            stored[utc(2024, 11, 3, 6)] == [
                "temperature_2m": 9, "dew_point_2m": 5, "wind_speed_10m": 0, "precipitation": 0.25
            ])
        // The repeated 01:53: 06:53 UTC (46.4 °F = 8 °C) → 07:00, then 07:53 UTC (44.6 °F = 7 °C) → 08:00;
        // 02:53 CST = 08:53 UTC → 09:00 with a trace.
        #expect(stored[utc(2024, 11, 3, 7)]?["temperature_2m"] == 8)
        #expect(stored[utc(2024, 11, 3, 7)]?["precipitation"] == 0.51)
        #expect(stored[utc(2024, 11, 3, 8)]?["temperature_2m"] == 7)
        #expect(stored[utc(2024, 11, 3, 8)]?["precipitation"] == 0.76)
        #expect(stored[utc(2024, 11, 3, 9)]?["temperature_2m"] == 6)
        #expect(stored[utc(2024, 11, 3, 9)]?["precipitation"] == 0)
        #expect(stored.count == 5)
        // Chicago is ~2,800 km from Bremerton: accepted, with a warning naming both places.
        #expect(iem.stderrText.contains("Warning: station KORD (41.9602, -87.9336, 201 m)"), "\(iem.stderrText)")
        #expect(iem.stderrText.contains("from Bremerton (47.4900, -122.7600"), "\(iem.stderrText)")
    }

    @Test("import-meteostat: model-filled values are left out and said; --include-model keeps them")
    func meteostatModelRows() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Hamburg", "--lat", "53.63", "--lon", "9.99").code == 0)
        let path = box.folder.appendingPathComponent("10147.csv").path
        try """
        time,temp,temp_source,prcp,prcp_source,wspd,wspd_source
        2024-01-01 00:00:00,5.2,metar,0.4,synop,18.4,metar
        2024-01-01 01:00:00,5.0,model,0.0,model,16.0,model
        """.write(toFile: path, atomically: true, encoding: .utf8)
        let result = await box.run("observe", "import-meteostat", path, "--location", "Hamburg")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(
            try storedObservations(box.db, source: "meteostat:10147") == [
                utc(2024, 1, 1, 0): ["temperature_2m": 5.2, "precipitation": 0.4, "wind_speed_10m": 18.4]
            ])
        #expect(
            result.stderrText.contains("Left out 1 rows and 3 values Meteostat filled from a model"),
            "\(result.stderrText)")
        let kept = await box.run("observe", "import-meteostat", path, "--location", "Hamburg", "--include-model")
        #expect(kept.code == 0)
        #expect(try storedObservations(box.db, source: "meteostat:10147")[utc(2024, 1, 1, 1)]?["temperature_2m"] == 5)
    }

    @Test("query verify --source metar:ID scores forecasts against the airport, and is the default beside era5")
    func verifyAgainstMETAR() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let start = utc(2024, 1, 1, 0)
        let history = try HistoryBuilder(db: box.db, name: "Hamburg")
        let times = (1...3).map { start + Int64($0) * 3600 }
        try history.storeRun(
            issuedAt: start, fetchedAt: start, times: times,
            columns: ["temperature_2m": [6, 6, 6]], recordAnalysis: false)
        try history.store.upsertObservation(
            locationID: history.location.id, source: "era5", time: times[0],
            values: Variables.hourly.map { $0.name == "temperature_2m" ? 0 : nil }, recordedAt: start)
        let path = box.folder.appendingPathComponent("eddh.txt").path
        try """
        202401010050 METAR EDDH 010050Z 27010KT 9999 05/02 Q1013
        202401010150 METAR EDDH 010150Z 27010KT 9999 04/02 Q1013
        202401010250 METAR EDDH 010250Z 27010KT 9999 03/02 Q1013
        """.write(toFile: path, atomically: true, encoding: .utf8)
        #expect(await box.run("observe", "import-metar", path, "--location", "Hamburg").code == 0)
        let result = await box.run(
            "query", "verify", "--location", "Hamburg", "--source", "metar:EDDH", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let json = try parseJSON(result.stdout)
        #expect(json["source"]?.stringValue == "metar:EDDH")
        let row = try #require(json["rows"]?.arrayValue?.first)
        // Observed 5, 4, 3 at 01, 02, 03 UTC; forecast 6: errors +1, +2, +3.
        #expect(row["n"]?.numberValue == 3)
        #expect(near(row["bias"]?.numberValue, 2))
        let byDefault = await box.run("query", "verify", "--location", "Hamburg", "--format", "json")
        #expect(try parseJSON(byDefault.stdout)["source"]?.stringValue == "metar:EDDH", "\(byDefault.stderrText)")
    }
}
