import Foundation
import TestSupport
import Testing
import WxCore
import WxSQLite
import WxStore
import WxStoreSQLite

// The source databases here are built with the projects' own table definitions:
// - weewx: the `archive` table as weewx's manager.py creates it from bin/schemas/wview_extended.py
//   ("CREATE TABLE archive (`name` TYPE, ...);", every column of the extended wview schema);
// - Home Assistant: `statistics_meta` and `statistics` as SQLAlchemy emits them for SQLite from
//   homeassistant/components/recorder/db_schema.py (schema 41), with its indexes.

/// A weewx archive database built the way weewx builds it.
enum WeewxFixture {
    static let extendedRealColumns = """
        altimeter appTemp appTemp1 barometer batteryStatus1 batteryStatus2 batteryStatus3 batteryStatus4 batteryStatus5 \
        batteryStatus6 batteryStatus7 batteryStatus8 cloudbase co co2 consBatteryVoltage dewpoint dewpoint1 ET extraHumid1 \
        extraHumid2 extraHumid3 extraHumid4 extraHumid5 extraHumid6 extraHumid7 extraHumid8 extraTemp1 extraTemp2 extraTemp3 \
        extraTemp4 extraTemp5 extraTemp6 extraTemp7 extraTemp8 forecast hail hailBatteryStatus hailRate heatindex heatindex1 \
        heatingTemp heatingVoltage humidex humidex1 inDewpoint inHumidity inTemp inTempBatteryStatus leafTemp1 leafTemp2 \
        leafWet1 leafWet2 lightning_distance lightning_disturber_count lightning_energy lightning_noise_count \
        lightning_strike_count luminosity maxSolarRad nh3 no2 noise o3 outHumidity outTemp outTempBatteryStatus pb pm10_0 \
        pm1_0 pm2_5 pressure radiation rain rainBatteryStatus rainRate referenceVoltage rxCheckPercent signal1 signal2 \
        signal3 signal4 signal5 signal6 signal7 signal8 snow snowBatteryStatus snowDepth snowMoisture snowRate so2 \
        soilMoist1 soilMoist2 soilMoist3 soilMoist4 soilTemp1 soilTemp2 soilTemp3 soilTemp4 supplyVoltage txBatteryStatus \
        UV uvBatteryStatus windBatteryStatus windchill windDir windGust windGustDir windrun windSpeed
        """.split(separator: " ").map(String.init)

    /// weewx's manager.py: "CREATE TABLE %s (%s);" over "`%s` %s" of each schema entry.
    static var createArchive: String {
        let table =
            [
                ("dateTime", "INTEGER NOT NULL UNIQUE PRIMARY KEY"), ("usUnits", "INTEGER NOT NULL"),
                ("interval", "INTEGER NOT NULL")
            ] + extendedRealColumns.map { ($0, "REAL") }
        return "CREATE TABLE archive (" + table.map { "`\($0.0)` \($0.1)" }.joined(separator: ", ") + ");"
    }

    struct Record {
        var minute: Int64
        var interval: Int64 = 5
        var usUnits = 1
        var values: [String: Double?] = [:]
    }

    /// Writes `records` (minutes after `start`) to a new archive at `path`, in weewx's default
    /// rollback-journal mode.
    static func write(_ path: String, start: Int64, records: [Record]) throws {
        var options = Database.Options()
        options.walMode = false
        let db = try Database(path: path, options: options)
        try db.execute(createArchive)
        try db.transaction {
            for record in records {
                let names = ["dateTime", "usUnits", "interval"] + record.values.keys.sorted()
                let values: [SQLValue] =
                    [.integer(start + record.minute * 60), .integer(Int64(record.usUnits)), .integer(record.interval)]
                    + record.values.keys.sorted().map { record.values[$0]!.map(SQLValue.real) ?? .null }
                try db.run(
                    "INSERT INTO archive (" + names.map { "`\($0)`" }.joined(separator: ", ") + ") VALUES ("
                        + names.map { _ in "?" }.joined(separator: ", ") + ")", values)
            }
        }
    }
}

/// A Home Assistant recorder database with long-term statistics, as the recorder makes it (WAL).
enum HomeAssistantFixture {
    static let schema = """
        CREATE TABLE statistics_meta (
        	id INTEGER NOT NULL, 
        	statistic_id VARCHAR(255), 
        	source VARCHAR(32), 
        	unit_of_measurement VARCHAR(255), 
        	has_mean BOOLEAN, 
        	has_sum BOOLEAN, 
        	name VARCHAR(255), 
        	PRIMARY KEY (id)
        );
        CREATE UNIQUE INDEX ix_statistics_meta_statistic_id ON statistics_meta (statistic_id);
        CREATE TABLE statistics (
        	id INTEGER NOT NULL, 
        	created CHAR(0), 
        	created_ts FLOAT, 
        	metadata_id INTEGER, 
        	start CHAR(0), 
        	start_ts FLOAT, 
        	mean FLOAT, 
        	min FLOAT, 
        	max FLOAT, 
        	last_reset CHAR(0), 
        	last_reset_ts FLOAT, 
        	state FLOAT, 
        	sum FLOAT, 
        	PRIMARY KEY (id), 
        	FOREIGN KEY(metadata_id) REFERENCES statistics_meta (id) ON DELETE CASCADE
        );
        CREATE INDEX ix_statistics_start_ts ON statistics (start_ts);
        CREATE UNIQUE INDEX ix_statistics_statistic_id_start_ts ON statistics (metadata_id, start_ts);
        """

    struct Statistic {
        var id: String
        var unit: String
        var mean: Bool
        /// Hour offset after `start` → mean (or sum).
        var rows: [Int64: Double?]
    }

    static func write(_ path: String, start: Int64, statistics: [Statistic]) throws {
        let db = try Database(path: path)  // WAL, as the recorder runs it
        try db.execute(schema)
        try db.transaction {
            for (metaID, statistic) in statistics.enumerated() {
                try db.run(
                    "INSERT INTO statistics_meta (id, statistic_id, source, unit_of_measurement, has_mean, has_sum, name) VALUES (?, ?, 'recorder', ?, ?, ?, NULL)",
                    [
                        .integer(Int64(metaID + 1)), .text(statistic.id), .text(statistic.unit),
                        .integer(statistic.mean ? 1 : 0), .integer(statistic.mean ? 0 : 1)
                    ])
                for (hour, value) in statistic.rows.sorted(by: { $0.key < $1.key }) {
                    let start = Double(start + hour * 3600)
                    try db.run(
                        "INSERT INTO statistics (created_ts, metadata_id, start_ts, mean, min, max, state, sum) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                        [
                            .real(start + 3610), .integer(Int64(metaID + 1)), .real(start),
                            statistic.mean ? value.map(SQLValue.real) ?? .null : .null, .null, .null,
                            statistic.mean ? .null : value.map(SQLValue.real) ?? .null,
                            statistic.mean ? .null : value.map(SQLValue.real) ?? .null
                        ])
                }
            }
        }
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }
}

/// One weewx unit system's way of writing the same weather.
struct WeewxSystem: Sendable, CustomStringConvertible {
    var usUnits: Int
    var name: String
    /// °C in the system's temperature unit, then the fixed readings in its units.
    var temperature: @Sendable (Double) -> Double
    var barometer: Double  // 1015.9164 hPa
    var speed10mph: Double  // 16.09344 km/h
    var gust25mph: Double  // 40.2336 km/h
    var gust5mph: Double  // 8.04672 km/h
    var gust15mph: Double  // 24.14016 km/h
    var rain002in: Double  // 0.508 mm
    var rain005in: Double  // 1.27 mm
    var rain001in: Double  // 0.254 mm
    var description: String { name }

    static let us = WeewxSystem(
        usUnits: 1, name: "US", temperature: { $0 * 1.8 + 32 }, barometer: 30.0, speed10mph: 10,
        gust25mph: 25, gust5mph: 5, gust15mph: 15, rain002in: 0.02, rain005in: 0.05, rain001in: 0.01)
    static let metric = WeewxSystem(
        usUnits: 16, name: "METRIC", temperature: { $0 }, barometer: 1015.9164, speed10mph: 16.09344,
        gust25mph: 40.2336, gust5mph: 8.04672, gust15mph: 24.14016, rain002in: 0.0508, rain005in: 0.127,
        rain001in: 0.0254)
    static let metricWX = WeewxSystem(
        usUnits: 17, name: "METRICWX", temperature: { $0 }, barometer: 1015.9164, speed10mph: 4.4704,
        gust25mph: 11.176, gust5mph: 2.2352, gust15mph: 6.7056, rain002in: 0.508, rain005in: 1.27, rain001in: 0.254)
}

/// 2026-03-29T00:00Z, the day Europe/Berlin switches to summer time at 01:00Z.
let stationStart: Int64 = 1_774_742_400

/// Seven hours of 5-minute records (and one 10-minute stretch) in `system`'s units:
/// 01:00 complete; 02:00 without its own record (the 01:55 one stands in; 55 minutes of rain);
/// 03:00 a gap; 04:00 with the 03:50 record exactly 10 minutes before, calm (no direction), 40
/// minutes of rain; 05:00 complete from 10-minute records; 06:00 only a record 11 minutes before;
/// 07:00 one 60-minute record in an unknown unit system.
func stationRecords(_ s: WeewxSystem) -> [WeewxFixture.Record] {
    func reading(
        _ minute: Int64, interval: Int64 = 5, celsius: Double = 10, humidity: Double = 70, dewC: Double = 0,
        speed: Double = 0, direction: Double? = 90, rain: Double = 0, gust: Double? = nil
    ) -> WeewxFixture.Record {
        WeewxFixture.Record(
            minute: minute, interval: interval, usUnits: s.usUnits,
            values: [
                "outTemp": s.temperature(celsius), "outHumidity": humidity, "dewpoint": s.temperature(dewC),
                "barometer": s.barometer,
                "windSpeed": speed, "windDir": direction, "rain": rain, "windGust": gust ?? s.gust5mph
            ])
    }
    var records: [WeewxFixture.Record] = []
    for minute in stride(from: Int64(5), through: 55, by: 5) {  // (00:00, 01:00]
        records.append(
            reading(
                minute, rain: minute == 15 ? s.rain002in : minute == 40 ? s.rain005in : 0,
                gust: minute == 25 ? s.gust25mph : nil))
    }
    records.append(reading(60, celsius: 16, humidity: 81, dewC: 5, speed: s.speed10mph, direction: 270))
    for minute in stride(from: Int64(65), through: 110, by: 5) { records.append(reading(minute)) }  // (01:00, 02:00]
    records.append(reading(115, celsius: 20))
    for minute in stride(from: Int64(195), through: 225, by: 5) { records.append(reading(minute)) }  // (03:00, 04:00]
    records.append(reading(230, celsius: 25, direction: nil))
    for minute in stride(from: Int64(250), through: 290, by: 10) {  // (04:00, 05:00], 10-minute records
        records.append(reading(minute, interval: 10, rain: s.rain001in, gust: minute == 270 ? s.gust15mph : nil))
    }
    records.append(reading(300, interval: 10, celsius: 30, rain: s.rain001in))
    records.append(reading(349))  // (05:00, 06:00]: 05:49, 11 minutes before 06:00
    var foreign = reading(420, interval: 60)  // (06:00, 07:00]
    foreign.usUnits = 99
    records.append(foreign)
    return records
}

/// The stored rows, by hour, as name → value.
func storedObservations(_ db: String, source: String) throws -> [Int64: [String: Double]] {
    // Every row of `source` as the Store streams it to `export observations`, with the values exact (the
    // CSV rounds them) and including rows left with no value.
    let store: any Store = try SQLiteStore.openReadOnly(path: db)
    var out: [Int64: [String: Double]] = [:]
    try store.forEachObservation(Variables.hourly, ExportFilter(source: source)) { row in
        var values: [String: Double] = [:]
        for (variable, value) in zip(Variables.hourly, row.values) {
            if let value { values[variable.name] = value }
        }
        out[row.time] = values
    }
    return out
}

func fileBytes(_ path: String) -> Data? { FileManager.default.contents(atPath: path) }

@Suite("Station databases as observations (weewx, Home Assistant)")
struct StationImportTests {
    static let hour: Int64 = 3600

    @Test(
        "weewx: each unit system imports to the same hand-computed hours",
        arguments: [WeewxSystem.us, .metric, .metricWX])
    func weewxUnitSystems(_ system: WeewxSystem) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let archive = box.folder.appendingPathComponent("weewx.sdb").path
        try WeewxFixture.write(archive, start: stationStart, records: stationRecords(system))
        let before = try #require(fileBytes(archive))
        let listing = try FileManager.default.contentsOfDirectory(atPath: box.folder.path).sorted()
        #expect(
            await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4", "--timezone", "Europe/Berlin")
                .code == 0)

        let result = await box.run("observe", "import-weewx", archive, "--location", "Garden")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(fileBytes(archive) == before)
        let after = try FileManager.default.contentsOfDirectory(atPath: box.folder.path).filter {
            $0.hasPrefix("weewx.sdb")
        }.sorted()
        #expect(
            after == listing.filter { $0.hasPrefix("weewx.sdb") },
            "no -journal, -wal or -shm beside a rollback-journal archive")

        let h = Self.hour
        let stored = try storedObservations(box.db, source: "weewx")
        // Hand-computed: 60.8 °F = 16 °C; 30.00 inHg / 0.0295299875 = 1015.916 hPa; 10 mph × 1.609344 = 16.093 km/h;
        // rain 0.02 + 0.05 in = 0.07 in = 1.778 mm; the 25 mph gust = 40.234 km/h; 6 × 0.01 in = 1.524 mm; 15 mph = 24.140 km/h.
        #expect(
            stored[stationStart + 1 * h] == [
                "temperature_2m": 16, "relative_humidity_2m": 81, "dew_point_2m": 5,
                "pressure_msl": 1015.92, "wind_speed_10m": 16.09, "wind_direction_10m": 270,
                "precipitation": 1.78, "wind_gusts_10m": 40.23
            ])
        // 02:00: no record at 02:00, the 01:55 one stands in; 55 minutes of records: no rain or gust.
        #expect(
            stored[stationStart + 2 * h] == [
                "temperature_2m": 20, "relative_humidity_2m": 70, "dew_point_2m": 0,
                "pressure_msl": 1015.92, "wind_speed_10m": 0, "wind_direction_10m": 90
            ])
        #expect(stored[stationStart + 3 * h] == nil)
        // 04:00: the 03:50 record, exactly 10 minutes before; calm, so no direction.
        #expect(
            stored[stationStart + 4 * h] == [
                "temperature_2m": 25, "relative_humidity_2m": 70, "dew_point_2m": 0,
                "pressure_msl": 1015.92, "wind_speed_10m": 0
            ])
        #expect(
            stored[stationStart + 5 * h] == [
                "temperature_2m": 30, "relative_humidity_2m": 70, "dew_point_2m": 0,
                "pressure_msl": 1015.92, "wind_speed_10m": 0, "wind_direction_10m": 90,
                "precipitation": 1.52, "wind_gusts_10m": 24.14
            ])
        #expect(stored[stationStart + 6 * h] == nil)
        #expect(stored[stationStart + 7 * h] == nil)
        #expect(stored.count == 4)

        let text = result.stderrText
        #expect(
            text.contains(
                "Read 39 weewx records from \(archive); units: \(system.name) (usUnits \(system.usUnits)), unknown (usUnits 99)"
            ))
        #expect(
            text.contains(
                "Stored 4 of 7 hours for Garden (source weewx), valid 2026-03-29T01:00:00Z to 2026-03-29T07:00:00Z"))
        #expect(text.contains("temperature_2m        4 hours; missing 3: 2 gap, 1 unknown unit"))
        #expect(text.contains("wind_direction_10m    3 hours; missing 4: 2 gap, 1 no value, 1 unknown unit"))
        #expect(text.contains("precipitation         2 hours; missing 5: 1 gap, 3 partial hour, 1 unknown unit"))
        #expect(text.contains("wind_gusts_10m        2 hours; missing 5: 1 gap, 3 partial hour, 1 unknown unit"))
    }

    @Test(
        "weewx: a local date range over a daylight-saving change covers that day's 23 or 25 hours",
        arguments: [
            ("2026-03-29", 23, "2026-03-28T23:00:00Z", "2026-03-29T21:00:00Z"),
            ("2026-10-25", 25, "2026-10-24T22:00:00Z", "2026-10-25T22:00:00Z")
        ])
    func weewxDaylightSaving(_ date: String, _ hours: Int, _ first: String, _ last: String) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let archive = box.folder.appendingPathComponent("weewx.sdb").path
        let day = try #require(CivilTime.parseLabel(date))
        // Two days of 5-minute METRICWX records around the date; temperature = minutes since the start / 60.
        let start = day - 86400
        let records = stride(from: Int64(5), through: 3 * 1440, by: 5).map { minute in
            WeewxFixture.Record(minute: minute, usUnits: 17, values: ["outTemp": Double(minute) / 60, "rain": 0.1])
        }
        try WeewxFixture.write(archive, start: start, records: records)
        #expect(
            await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4", "--timezone", "Europe/Berlin")
                .code == 0)
        let result = await box.run(
            "observe", "import-weewx", archive, "--location", "Garden", "--from", date, "--to", date)
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(
            result.stderrText.contains(
                "Stored \(hours) of \(hours) hours for Garden (source weewx), valid \(first) to \(last)"))
        let stored = try storedObservations(box.db, source: "weewx")
        #expect(stored.count == hours)
        for (time, values) in stored {
            // The record at H: (H − start) / 60 minutes / 60; twelve 0.1 mm records in each hour.
            #expect(
                values == ["temperature_2m": StationUnits.rounded(Double(time - start) / 3600), "precipitation": 1.2])
        }
    }

    @Test("weewx: importing again changes nothing; a corrected archive replaces and clears values")
    func weewxReimport() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let archive = box.folder.appendingPathComponent("weewx.sdb").path
        var records = stationRecords(.us)
        try WeewxFixture.write(archive, start: stationStart, records: records)
        #expect(
            await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4", "--timezone", "Europe/Berlin")
                .code == 0)
        #expect(await box.run("observe", "import-weewx", archive, "--location", "Garden").code == 0)
        let first = try storedObservations(box.db, source: "weewx")
        #expect(await box.run("observe", "import-weewx", archive, "--location", "Garden").code == 0)
        #expect(try storedObservations(box.db, source: "weewx") == first)

        // weewx's operator fixes the 01:00 reading (62.6 °F = 17 °C) and removes the 01:55 one's humidity.
        let at0100 = records.firstIndex { $0.minute == 60 }!
        let at0155 = records.firstIndex { $0.minute == 115 }!
        records[at0100].values["outTemp"] = 62.6
        records[at0155].values["outHumidity"] = .some(nil)
        try FileManager.default.removeItem(atPath: archive)
        try WeewxFixture.write(archive, start: stationStart, records: records)
        #expect(await box.run("observe", "import-weewx", archive, "--location", "Garden").code == 0)
        let corrected = try storedObservations(box.db, source: "weewx")
        #expect(corrected[stationStart + 3600]?["temperature_2m"] == 17)
        #expect(corrected[stationStart + 7200]?["relative_humidity_2m"] == nil)
        #expect(corrected[stationStart + 7200]?["temperature_2m"] == 20)
    }

    @Test("weewx: reads beside a running weewx writer and holds no lock afterwards")
    func weewxWhileWriting() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let archive = box.folder.appendingPathComponent("weewx.sdb").path
        try WeewxFixture.write(archive, start: stationStart, records: stationRecords(.us))
        #expect(await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4").code == 0)
        // weewx in the middle of adding a record: a write transaction holding the RESERVED lock.
        var options = Database.Options()
        options.walMode = false
        options.busyTimeoutMilliseconds = 0
        let weewx = try Database(path: archive, options: options)
        try weewx.execute("BEGIN IMMEDIATE")
        try weewx.run(
            "INSERT INTO archive (dateTime, usUnits, interval, outTemp) VALUES (?, 1, 5, 212)",
            [.integer(stationStart + 3 * 3600)])
        let result = await box.run("observe", "import-weewx", archive, "--location", "Garden")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(try storedObservations(box.db, source: "weewx").count == 4, "the uncommitted record is not read")
        // With no wait allowed, weewx's commit needs every reader gone: wxdb must hold nothing now.
        try weewx.execute("COMMIT")
    }

    @Test("weewx: a damaged archive is read or refused with a message naming the file, never half-stored")
    func weewxDamaged() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let archive = box.folder.appendingPathComponent("weewx.sdb").path
        try WeewxFixture.write(archive, start: stationStart, records: stationRecords(.us))
        let good = try #require(fileBytes(archive))
        #expect(await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4").code == 0)
        var seed: UInt64 = 0x5EED_0019
        func next(_ bound: Int) -> Int {
            seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((seed >> 33) % UInt64(bound))
        }
        var refused = 0
        for trial in 0..<40 {
            var bytes = [UInt8](good)
            for _ in 0...next(8) { bytes[next(bytes.count)] = UInt8(next(256)) }
            try Data(bytes).write(to: URL(fileURLWithPath: archive))
            let result = await box.run(
                "observe", "import-weewx", archive, "--location", "Garden", "--source", "t\(trial)")
            #expect(result.code == 0 || result.code == 1, "trial \(trial): \(result.stderrText)")
            if result.code == 1 {
                refused += 1
                #expect(
                    result.stderrText.hasPrefix("Error: ") && result.stderrText.contains(archive),
                    "trial \(trial): \(result.stderrText)")
                #expect(try storedObservations(box.db, source: "t\(trial)").isEmpty)
            }
        }
        #expect(refused > 0 && refused < 40, "\(refused) of 40 refused")
    }

    @Test(
        "weewx: a file that is not an archive is refused by name and nothing is stored",
        arguments: [
            ("not SQLite", "is not a SQLite database"),
            ("no archive", "without an `archive` table, so it is not a weewx archive"),
            ("missing", "cannot read")
        ])
    func weewxRefused(_ kind: String, _ message: String) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let path = box.folder.appendingPathComponent("weewx.sdb").path
        switch kind {
        case "not SQLite": try Data(repeating: 0x41, count: 4096).write(to: URL(fileURLWithPath: path))
        case "no archive":
            let db = try Database(path: path)
            try db.execute("CREATE TABLE something (x)")
        default: break
        }
        let before = fileBytes(path)
        #expect(await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4").code == 0)
        let result = await box.run("observe", "import-weewx", path, "--location", "Garden")
        #expect(result.code == 1)
        #expect(result.stderrText.contains(message), "\(result.stderrText)")
        #expect(result.stderrText.hasPrefix("Error: "))
        #expect(fileBytes(path) == before)
        #expect(try storedObservations(box.db, source: "weewx").isEmpty)
    }

    /// Home Assistant units per system: temperature, pressure, speed, precipitation, and the
    /// readings of the same weather (15 °C, 1013.2 hPa, 18 km/h, 2.54 mm then 3.81 mm) in them.
    struct HASystem: Sendable, CustomStringConvertible {
        var units: [String]
        var temperature: Double, pressure: Double, speed: Double, sums: [Double]
        var description: String { units.joined(separator: ",") }
    }

    @Test(
        "Home Assistant: hourly means and sum increases in each unit system, with a gap",
        arguments: [
            HASystem(
                units: ["°F", "inHg", "mph", "in"], temperature: 59, pressure: 29.92, speed: 11.184681,
                sums: [10, 10.1, 10.25, 10.25, 10.3]),
            HASystem(
                units: ["°C", "hPa", "km/h", "mm"], temperature: 15, pressure: 1013.2, speed: 18,
                sums: [254, 256.54, 260.35, 260.35, 261.62]),
            HASystem(
                units: ["K", "mbar", "m/s", "cm"], temperature: 288.15, pressure: 1013.2, speed: 5,
                sums: [25.4, 25.654, 26.035, 26.035, 26.162])
        ])
    func homeAssistant(_ system: HASystem) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        // Rows start at 00:00, 01:00, 02:00, (03:00 missing), 04:00, 05:00; the 02:00 temperature mean is NULL.
        let hours: [Int64] = [0, 1, 2, 4, 5]
        func rows(_ values: [Double?]) -> [Int64: Double?] { Dictionary(uniqueKeysWithValues: zip(hours, values)) }
        try HomeAssistantFixture.write(
            path, start: stationStart,
            statistics: [
                .init(
                    id: "sensor.outdoor_temperature", unit: system.units[0], mean: true,
                    rows: rows([
                        system.temperature, system.temperature + (system.units[0] == "°F" ? 1.8 : 1), nil,
                        system.temperature, system.temperature
                    ])),
                .init(
                    id: "sensor.pressure", unit: system.units[1], mean: true,
                    rows: rows(Array(repeating: system.pressure, count: 5))),
                .init(
                    id: "sensor.wind_speed", unit: system.units[2], mean: true,
                    rows: rows(Array(repeating: system.speed, count: 5))),
                .init(id: "sensor.rain", unit: system.units[3], mean: false, rows: rows(system.sums)),
                .init(id: "sensor.humidity", unit: "%", mean: true, rows: rows([60, 61, 62, 63, 64]))
            ])
        let before = try #require(fileBytes(path))
        #expect(
            await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4", "--timezone", "Europe/Berlin")
                .code == 0)

        let listed = await box.run("observe", "import-home-assistant", path, "--list")
        #expect(listed.code == 0)
        #expect(listed.stdout.contains("sensor.rain"))
        #expect(
            listed.stdout.split(separator: "\n").contains {
                $0.hasPrefix("sensor.outdoor_temperature") && $0.contains(system.units[0]) && $0.contains("mean")
            })

        let result = await box.run(
            "observe", "import-home-assistant", path, "--location", "Garden",
            "--sensor", "temperature_2m=sensor.outdoor_temperature", "--sensor", "pressure_msl=sensor.pressure",
            "--sensor", "wind_speed_10m=sensor.wind_speed", "--sensor", "precipitation=sensor.rain",
            "--sensor", "relative_humidity_2m=sensor.humidity")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(fileBytes(path) == before)
        let h = Self.hour
        let stored = try storedObservations(box.db, source: "home-assistant")
        // Hand-computed: 59 °F = 288.15 K = 15 °C; 29.92 inHg = 1013.21 hPa; 11.184681 mph = 5 m/s = 18 km/h;
        // sum increases 0.1 in = 2.54 mm, 0.15 in = 3.81 mm, 0.05 in = 1.27 mm.
        let pressure = system.units[1] == "inHg" ? 1013.21 : 1013.2
        #expect(
            stored[stationStart + 1 * h] == [
                "temperature_2m": 15, "pressure_msl": pressure, "wind_speed_10m": 18, "relative_humidity_2m": 60
            ])
        #expect(
            stored[stationStart + 2 * h] == [
                "temperature_2m": 16, "pressure_msl": pressure, "wind_speed_10m": 18, "relative_humidity_2m": 61,
                "precipitation": 2.54
            ])
        #expect(
            stored[stationStart + 3 * h] == [
                "pressure_msl": pressure, "wind_speed_10m": 18, "relative_humidity_2m": 62, "precipitation": 3.81
            ])
        #expect(stored[stationStart + 4 * h] == nil)
        #expect(
            stored[stationStart + 5 * h] == [
                "temperature_2m": 15, "pressure_msl": pressure, "wind_speed_10m": 18, "relative_humidity_2m": 63
            ])
        #expect(
            stored[stationStart + 6 * h] == [
                "temperature_2m": 15, "pressure_msl": pressure, "wind_speed_10m": 18, "relative_humidity_2m": 64,
                "precipitation": 1.27
            ])
        #expect(stored.count == 5)
        let text = result.stderrText
        #expect(
            text.contains(
                "Stored 5 of 6 hours for Garden (source home-assistant), valid 2026-03-29T01:00:00Z to 2026-03-29T06:00:00Z"
            ))
        #expect(text.contains("temperature_2m        4 hours; missing 2: 1 gap, 1 no value"))
        #expect(text.contains("precipitation         3 hours; missing 3: 1 gap, 2 no sum the hour before"))
    }

    @Test("Home Assistant: a recorder migrated to the newer schema (mean_type, mean_weight, unit_class) reads the same")
    func homeAssistantNewerSchema() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        try HomeAssistantFixture.write(
            path, start: stationStart,
            statistics: [
                .init(id: "sensor.outdoor_temperature", unit: "°F", mean: true, rows: [0: 50, 1: 51.8])
            ])
        // the columns later recorder migrations add (db_schema.py: StatisticsMeta.mean_type, StatisticsBase.mean_weight)
        do {
            let db = try Database(path: path)
            try db.execute(
                """
                ALTER TABLE statistics ADD COLUMN mean_weight FLOAT;
                ALTER TABLE statistics_meta ADD COLUMN mean_type SMALLINT NOT NULL DEFAULT 1;
                ALTER TABLE statistics_meta ADD COLUMN unit_class VARCHAR(255);
                PRAGMA wal_checkpoint(TRUNCATE);
                """)
        }
        #expect(await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4").code == 0)
        let result = await box.run(
            "observe", "import-home-assistant", path, "--location", "Garden",
            "--sensor", "temperature_2m=sensor.outdoor_temperature")
        #expect(result.code == 0, "\(result.stderrText)")
        // 50 °F = 10 °C valid at 01:00, 51.8 °F = 11 °C at 02:00.
        #expect(
            try storedObservations(box.db, source: "home-assistant") == [
                stationStart + 3600: ["temperature_2m": 10],
                stationStart + 7200: ["temperature_2m": 11]
            ])

        // Local times without offset are Berlin's: 03:00 on the switch day is summer time, 01:00Z.
        #expect(await box.run("locations", "set", "Garden", "--timezone", "Europe/Berlin").code == 0)
        let local = await box.run(
            "observe", "import-home-assistant", path, "--location", "Garden", "--source", "berlin",
            "--sensor", "temperature_2m=sensor.outdoor_temperature", "--from", "2026-03-29T03:00", "--to",
            "2026-03-29T03:00")
        #expect(local.code == 0, "\(local.stderrText)")
        #expect(try storedObservations(box.db, source: "berlin") == [stationStart + 3600: ["temperature_2m": 10]])
    }

    @Test(
        "Home Assistant: an unknown statistic id, a unit that does not convert, or another database stores nothing",
        arguments: [
            (["temperature_2m=sensor.nope"], "has no statistic 'sensor.nope' (for temperature_2m)"),
            (
                ["temperature_2m=sensor.power"],
                "statistic 'sensor.power' is in 'W', which is not a unit of temperature_2m"
            ),
            (
                ["temperature_2m=sensor.outdoor_temperature", "precipitation=sensor.missing_rain"],
                "has no statistic 'sensor.missing_rain'"
            )
        ])
    func homeAssistantRefused(_ sensors: [String], _ message: String) async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        try HomeAssistantFixture.write(
            path, start: stationStart,
            statistics: [
                .init(id: "sensor.outdoor_temperature", unit: "°C", mean: true, rows: [0: 10, 1: 11]),
                .init(id: "sensor.power", unit: "W", mean: true, rows: [0: 100])
            ])
        #expect(await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4").code == 0)
        let result = await box.run(
            ["observe", "import-home-assistant", path, "--location", "Garden"] + sensors.flatMap { ["--sensor", $0] })
        #expect(result.code == 1)
        #expect(result.stderrText.contains(message), "\(result.stderrText)")
        #expect(try storedObservations(box.db, source: "home-assistant").isEmpty)

        let weewx = box.folder.appendingPathComponent("weewx.sdb").path
        try WeewxFixture.write(weewx, start: stationStart, records: [])
        let wrong = await box.run(
            "observe", "import-home-assistant", weewx, "--location", "Garden", "--sensor", "temperature_2m=sensor.x")
        #expect(wrong.code == 1)
        #expect(wrong.stderrText.contains("so it is not a recorder database"))
    }

    @Test(
        "station imports: usage mistakes exit 64 before any file or database is opened",
        arguments: [
            (["import-home-assistant", "ha.db", "--location", "Garden"], "give at least one --sensor"),
            (["import-home-assistant", "ha.db", "--sensor", "temperature_2m=sensor.t"], "missing --location"),
            (
                ["import-home-assistant", "ha.db", "--location", "Garden", "--sensor", "temperature_2m"],
                "is not VARIABLE=STATISTIC_ID"
            ),
            (
                [
                    "import-home-assistant", "ha.db", "--location", "Garden", "--sensor",
                    "precipitation_probability=sensor.p"
                ],
                "is not a variable a sensor measures"
            ),
            (
                ["import-home-assistant", "ha.db", "--location", "Garden", "--sensor", "temprature_2m=sensor.t"],
                "did you mean 'temperature_2m'?"
            ),
            (
                [
                    "import-home-assistant", "ha.db", "--location", "Garden", "--sensor", "temperature_2m=sensor.a",
                    "--sensor", "temperature_2m=sensor.b"
                ],
                "gives temperature_2m twice"
            ),
            (
                [
                    "import-home-assistant", "ha.db", "--location", "Garden", "--sensor", "temperature_2m=sensor.t",
                    "--format", "json"
                ],
                "--format is for --list"
            ),
            (["import-weewx", "weewx.sdb", "--location", "Garden", "--source", "analysis"], "is reserved"),
            (
                ["import-weewx", "weewx.sdb", "--location", "Garden", "--from", "2026-03-30", "--to", "2026-03-29"],
                "--from must be before --to"
            ),
            (["import-weewx", "weewx.sdb"], "missing --location")
        ])
    func usageMistakes(_ arguments: [String], _ message: String) async {
        let box = Sandbox()
        let result = await box.run(["observe"] + arguments)
        #expect(result.code == 64, "\(result.stderrText)")
        #expect(result.stderr.first?.hasPrefix("Error: ") == true)
        #expect(result.stderrText.contains(message), "\(result.stderrText)")
        #expect(result.stderrText.contains("Usage: wxdb observe \(arguments[0]) <path>"))
        #expect(!FileManager.default.fileExists(atPath: box.db))
    }

    @Test(
        "Home Assistant --list --format json and csv: the statistic ids, their units and valid hours, without a database"
    )
    func homeAssistantListFormats() async throws {
        let box = Sandbox()
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        try HomeAssistantFixture.write(
            path, start: stationStart,
            statistics: [
                .init(id: "sensor.outdoor_temperature", unit: "°F", mean: true, rows: [0: 50, 1: 51.8]),
                .init(id: "sensor.rain", unit: "in", mean: false, rows: [0: 1, 1: 1.1])
            ])
        let json = await box.run("observe", "import-home-assistant", path, "--list", "--format", "json")
        #expect(json.code == 0, "\(json.stderrText)")
        let document = try parseJSON(json.stdout)
        #expect(document["path"]?.stringValue == path)
        let rows = try #require(document["statistics"]?.arrayValue)
        let temperature = try #require(rows.first { $0["statistic_id"]?.stringValue == "sensor.outdoor_temperature" })
        #expect(temperature["unit"]?.stringValue == "°F")
        #expect(temperature["hours"]?.numberValue == 2)
        #expect(temperature["kind"]?.arrayValue?.compactMap(\.stringValue) == ["mean"])
        #expect(temperature["first_valid_time"]?.stringValue == "2026-03-29T01:00:00Z")
        #expect(temperature["last_valid_time"]?.stringValue == "2026-03-29T02:00:00Z")
        let csv = await box.run("observe", "import-home-assistant", path, "--list", "--format", "csv")
        #expect(csv.stdout.hasPrefix("statistic_id,unit,hours,kind,first_valid_time,last_valid_time\r\n"))
        #expect(csv.stdout.contains("sensor.rain,in,2,sum,2026-03-29T01:00:00Z,2026-03-29T02:00:00Z\r\n"))
        #expect(!FileManager.default.fileExists(atPath: box.db), "--list needs no database")
    }

    @Test("query verify --source weewx scores forecasts against the imported station")
    func verifyAgainstWeewx() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let archive = box.folder.appendingPathComponent("weewx.sdb").path
        try WeewxFixture.write(archive, start: stationStart, records: stationRecords(.us))
        let history = try HistoryBuilder(db: box.db, name: "Garden")
        // One run issued at 00:00 forecasting 17 °C for every hour 01:00-07:00.
        let times = (1...7).map { stationStart + Int64($0) * 3600 }
        try history.storeRun(
            issuedAt: stationStart, fetchedAt: stationStart, times: times,
            columns: ["temperature_2m": Array(repeating: 17, count: 7)], recordAnalysis: false)
        #expect(await box.run("observe", "import-weewx", archive, "--location", "Garden").code == 0)
        let result = await box.run("query", "verify", "--location", "Garden", "--source", "weewx", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let json = try parseJSON(result.stdout)
        #expect(json["source"]?.stringValue == "weewx")
        let row = try #require(json["rows"]?.arrayValue?.first)
        // Observed 16, 20, 25, 30 at 01:00, 02:00, 04:00, 05:00: errors +1, −3, −8, −13.
        #expect(row["n"]?.numberValue == 4)
        #expect(near(row["bias"]?.numberValue, -5.75))
        #expect(near(row["mae"]?.numberValue, 6.25))
    }
}
