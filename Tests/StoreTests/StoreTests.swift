import Foundation
import TestSupport
import Testing

@testable import WxCore
@testable import WxSQLite
@testable import WxStore
@testable import WxStoreSQLite

let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent()

func temporaryDatabase() -> String {
    let folder = Scratch.root.appendingPathComponent("store-\(UUID().uuidString)")
    return folder.appendingPathComponent("wxdb.sqlite").path
}

func fixtureBytes(_ name: String) throws -> Data {
    try Data(contentsOf: packageRoot.appendingPathComponent("Fixtures").appendingPathComponent(name))
}

/// Row counts of every wxdb table, to show a refused input changed nothing.
func tableCounts(_ store: SQLiteStore) throws -> [String: Int64] {
    var counts: [String: Int64] = [:]
    for table in ["locations", "forecast_runs", "fetch_log", "hourly_forecasts", "daily_forecasts", "observations"] {
        counts[table] = try store.db.scalarInt("SELECT count(*) FROM \(table)")
    }
    return counts
}

func expectClean(_ store: SQLiteStore) throws {
    #expect(try store.db.scalarText("PRAGMA integrity_check") == "ok")
    #expect(try store.db.rows("PRAGMA foreign_key_check") { $0.string(0) }.isEmpty)
}

@Suite("Store")
struct StoreTests {
    @Test("the embedded migrations are the files in Migrations/")
    func embeddedMigrationsMatchFiles() throws {
        let folder = packageRoot.appendingPathComponent("Migrations")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".sql") }
            .sorted()
        #expect(
            files.map { String($0.dropLast(4)) } == Schema.migrations.map(\.name),
            "run Scripts/embed-migrations after adding a migration")
        for (file, migration) in zip(files, Schema.migrations) {
            var text = try String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
            if text.hasSuffix("\n") { text.removeLast() }
            #expect(text == migration.sql, "\(file) differs from its embedded copy: run Scripts/embed-migrations")
        }
    }

    @Test("each embedded migration carries the checksum of its own SQL")
    func embeddedChecksumsMatchTheirSQL() {
        // Scripts/embed-migrations computes them; a wrong one would refuse every database as edited.
        for migration in Schema.migrations {
            #expect(
                migration.checksum == Migration.checksum(of: migration.sql),
                "\(migration.name)'s carried checksum differs from its SQL's: run Scripts/embed-migrations")
        }
        // FNV-1a's published values for "" and "a": databases already record checksums made this way.
        #expect(Migration.checksum(of: "") == "cbf29ce484222325")
        #expect(Migration.checksum(of: "a") == "af63dc4c8601ec8c")
        #expect(Migration(name: "0001_x", sql: "a").checksum == "af63dc4c8601ec8c")
    }

    @Test("a database recording an unknown migration is refused by name and left byte-for-byte")
    func refusesNewerDatabase() throws {
        let path = temporaryDatabase()
        do {
            let store = try SQLiteStore.open(path: path)
            try store.db.run(
                "INSERT INTO schema_migrations (name, checksum, applied_at) VALUES ('0999_from_the_future', 'x', 0)")
            try store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect {
            _ = try SQLiteStore.open(path: path)
        } throws: { error in
            "\(error)".contains("0999_from_the_future") && "\(error)".contains("newer wxdb")
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
    }

    @Test("a file that is not a database is refused and left as it was")
    func refusesNonDatabase() throws {
        let path = temporaryDatabase()
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        let junk = Data("this is not a database, it is a shopping list\n".utf8) + Data(repeating: 7, count: 5000)
        try junk.write(to: URL(fileURLWithPath: path))
        #expect { _ = try SQLiteStore.open(path: path) } throws: { "\($0)".contains("not a wxdb database") }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == junk)
    }

    static let importable: [(String, Int, Int)] = [
        ("forecast-current-hourly-daily-imperial-toronto-dst-crossing.json", 192, 8),
        ("forecast-current-hourly-daily-iso8601-copenhagen.json", 168, 7),
        ("forecast-current-daily-icon_seamless-trailing-nulls-maryland.json", 0, 8),
        ("forecast-current-daily-fahrenheit-denver-2023.json", 0, 7),
        ("forecast-daily-all-null-ocean-point-past-dates.json", 0, 11),
        ("forecast-hourly-halfhour-offset-adelaide.json", 72, 0),
        ("historical-forecast-hourly-daily-enschede-jan2024-TRIMMED.json", 3, 2),
        ("previous-runs-current-hourly-enschede-TRIMMED.json", -1, 0)
    ]

    @Test("fixtures import with row counts equal to the array lengths", arguments: importable)
    func importsFixture(_ name: String, _ hours: Int, _ days: Int) throws {
        let store = try SQLiteStore.open(path: temporaryDatabase())
        let location = try store.addLocation(
            name: "Here", latitude: 1, longitude: 2, elevation: nil, timezone: "auto", models: [], now: 0)
        let response = try ForecastDecoder.decodeSingle(try fixtureBytes(name), defaultModel: location.defaultModel)
        let outcomes = try store.store(
            response, for: location, fetch: FetchRecord(fetchedAt: 1_700_000_000, origin: .import))
        #expect(outcomes.map(\.kind) == [.stored])
        let expectedHours = hours >= 0 ? hours : response.models[0].hourlyTimes.count
        #expect(try store.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == Int64(expectedHours))
        #expect(try store.db.scalarInt("SELECT count(*) FROM daily_forecasts") == Int64(days))
        try expectClean(store)
    }

    @Test("Toronto 2026-03-08T02:00 (EST, fixed offset) is stored as 07:00Z, and nulls stay NULL")
    func torontoInstants() throws {
        let store = try SQLiteStore.open(path: temporaryDatabase())
        let location = try store.addLocation(
            name: "Toronto", latitude: 43.7, longitude: -79.4, elevation: nil, timezone: "auto", models: [], now: 0)
        let response = try ForecastDecoder.decodeSingle(
            try fixtureBytes("forecast-current-hourly-daily-imperial-toronto-dst-crossing.json"),
            defaultModel: "best_match")
        _ = try store.store(response, for: location, fetch: FetchRecord(fetchedAt: 1_772_744_400, origin: .import))
        let utc0700 = Int64(CivilTime.days(year: 2026, month: 3, day: 8) * 86400 + 7 * 3600)
        #expect(
            try store.db.scalarInt("SELECT count(*) FROM hourly_forecasts WHERE valid_time = ?", [.integer(utc0700)])
                == 1)
        // Columns the response lacks are NULL, never zero.
        #expect(try store.db.scalarInt("SELECT count(*) FROM hourly_forecasts WHERE pressure_msl IS NOT NULL") == 0)
        // Sunrise is an instant.
        let sunrise = try #require(try store.db.scalarInt("SELECT sunrise FROM daily_forecasts ORDER BY date LIMIT 1"))
        #expect(sunrise > 1_772_000_000 && sunrise < 1_773_000_000)
        #expect(try store.db.scalarText("SELECT timezone FROM locations") == "America/Toronto")
    }

    @Test("the multi-model Berlin sample gives one run per model")
    func multiModelRuns() throws {
        let store = try SQLiteStore.open(path: temporaryDatabase())
        let location = try store.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: nil, timezone: "GMT",
            models: ["best_match", "gfs_seamless"], now: 0)
        let response = try ForecastDecoder.decodeSingle(
            try fixtureBytes(
                "forecast-multi-model-best_match-gfs_seamless-current-minutely15-hourly-daily-berlin.json"),
            defaultModel: "best_match")
        _ = try store.store(response, for: location, fetch: FetchRecord(fetchedAt: 1_699_872_823, origin: .import))
        #expect(
            try store.db.rows("SELECT model FROM forecast_runs ORDER BY model") { $0.string(0) } == [
                "best_match", "gfs_seamless"
            ])
        #expect(try store.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 2 * 168)
        // The current block is the first model's (Open-Meteo does not suffix it): current:best_match.
        #expect(try store.db.scalarInt("SELECT count(*) FROM observations WHERE source = 'current:best_match'") == 1)
    }

    @Test("the same content twice is one run and two fetch-log entries")
    func repeatedContent() throws {
        let copenhagen = try CopenhagenStore()
        let store = copenhagen.store
        let first = try copenhagen.save(fetchedAt: 1_785_100_000)
        let second = try copenhagen.save(fetchedAt: 1_785_103_600)
        #expect(first.map(\.kind) == [.stored])
        #expect(second.map(\.kind) == [.repeated])
        #expect(first[0].runID == second[0].runID)
        let runs = try copenhagen.runs()
        #expect(runs.count == 1 && runs.first?.repeats == 1, "\(runs)")
        #expect(try store.db.scalarInt("SELECT count(*) FROM fetch_log") == 2)
        #expect(try store.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 168)
        try expectClean(store)
    }

    @Test("a failure in the middle of storing leaves every table as it was")
    func atomicStore() throws {
        let store = try SQLiteStore.open(path: temporaryDatabase())
        let location = try store.addLocation(
            name: "X", latitude: 1, longitude: 2, elevation: nil, timezone: "GMT", models: [], now: 0)
        let before = try tableCounts(store)
        var response = try ForecastDecoder.decodeSingle(
            try fixtureBytes("forecast-current-hourly-daily-iso8601-copenhagen.json"), defaultModel: "best_match")
        // A location that no longer exists fails the second store after the first one's rows went in.
        response.models.append(response.models[0])
        response.models[1].model = "other"
        var ghost = location
        ghost.id = 999
        #expect(throws: StoreError.self) {
            try store.db.transaction {
                _ = try store.storeInTransaction(
                    response, for: location, fetch: FetchRecord(fetchedAt: 1, origin: .import))
                _ = try store.storeInTransaction(
                    response, for: ghost, fetch: FetchRecord(fetchedAt: 1, origin: .import))
            }
        }
        #expect(try tableCounts(store) == before)
    }

    @Test("a response repeating an hour or a date stores counts equal to the rows kept")
    func repeatedTimesKeepCountsTrue() throws {
        let store = try SQLiteStore.open(path: temporaryDatabase())
        let location = try store.addLocation(
            name: "Here", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        let body = #"""
            {"latitude":1,"longitude":2,"utc_offset_seconds":0,
             "hourly":{"time":[0,3600,3600,7200],"temperature_2m":[1,2,3,4]},
             "daily":{"time":["1970-01-01","1970-01-01"],"temperature_2m_max":[5,6]}}
            """#
        let response = try ForecastDecoder.decodeSingle(Array(body.utf8), defaultModel: "best_match")
        _ = try store.store(response, for: location, fetch: FetchRecord(fetchedAt: 100, origin: .import))
        #expect(try store.db.scalarInt("SELECT hour_count FROM forecast_runs") == 3)
        #expect(try store.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 3)
        #expect(try store.db.scalarInt("SELECT day_count FROM forecast_runs") == 1)
        #expect(try store.db.scalarInt("SELECT count(*) FROM daily_forecasts") == 1)
    }

    @Test(
        "a database on a read-only file system is refused with a clear message, not a raw SQLite error",
        .enabled(if: Tmpfs.mountable, "needs to mount a tmpfs: root with CAP_SYS_ADMIN (not given in most containers)"))
    func readOnlyFileSystem() throws {
        let folder = Scratch.folder("ro").path
        try #require(Tmpfs.sh(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", folder]) == 0)
        defer { _ = try? Tmpfs.sh(["umount", "-l", folder]) }
        let path = folder + "/wxdb.sqlite"
        do {
            let store = try SQLiteStore.open(path: path)
            _ = try store.addLocation(
                name: "Here", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        }
        #expect(try Tmpfs.sh(["mount", "-o", "remount,ro", folder]) == 0)
        #expect {
            _ = try SQLiteStore.open(path: path)
        } throws: { error in
            let text = "\(error)"
            return error is SQLiteStore.OpenError && text.contains("read-only") && !text.contains("SQLite error")
        }
    }
}

/// Mounting a scratch tmpfs, for the read-only file system test.
enum Tmpfs {
    static func sh(_ args: [String]) throws -> Int32 {
        let p = try Process.run(URL(fileURLWithPath: "/bin/" + args[0]), arguments: Array(args.dropFirst()))
        p.waitUntilExit()
        return p.terminationStatus
    }

    /// Whether this process can mount one: being root is not enough in a container without CAP_SYS_ADMIN,
    /// so it is tried once (on a folder of its own, unmounted at once) and the test says it was skipped.
    static let mountable: Bool = {
        guard getuid() == 0 else { return false }
        let folder = Scratch.folder("tmpfs-probe").path
        guard (try? sh(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", folder])) == 0 else { return false }
        return (try? sh(["umount", folder])) == 0
    }()
}

@Suite("Runs seen through a moved window")
struct MovedWindowTests {
    /// The Copenhagen sample moved a day on: its first 24 hours dropped and 24 new ones added.
    static func shifted(_ response: ForecastResponse, change: Double = 0) -> ForecastResponse {
        var moved = response
        var forecast = moved.models[0]
        let last = forecast.hourlyTimes.last!
        forecast.hourlyTimes = Array(forecast.hourlyTimes.dropFirst(24)) + (1...24).map { last + Int64($0) * 3600 }
        forecast.hourly = forecast.hourly.map { column in
            column.map { Array($0.dropFirst(24)) + Array(repeating: 1.5, count: 24) }
        }
        if change != 0, var temperature = forecast.hourly[0] {
            temperature[0] = (temperature[0] ?? 0) + change
            forecast.hourly[0] = temperature
        }
        forecast.dailyDates = []
        forecast.daily = forecast.daily.map { _ in nil }
        moved.models = [forecast]
        return moved
    }

    @Test("the same forecast in a window moved by a day continues the run instead of adding one")
    func continuesRun() throws {
        let copenhagen = try CopenhagenStore()
        let store = copenhagen.store
        let first = try copenhagen.save(fetchedAt: 1_785_100_000)
        let moved = try copenhagen.save(Self.shifted(copenhagen.response), fetchedAt: 1_785_170_000)
        #expect(moved.map(\.kind) == [.repeated])
        #expect(moved[0].runID == first[0].runID)
        #expect(try copenhagen.runs().map(\.hourCount) == [168 + 24])
        // The run's own count is the rows it has.
        #expect(try store.db.scalarInt("SELECT count(*) FROM hourly_forecasts") == 168 + 24)
        // The same moved response again is recognised by its hash.
        let again = try copenhagen.save(Self.shifted(copenhagen.response), fetchedAt: 1_785_173_600)
        #expect(again.map(\.kind) == [.repeated])
        try expectClean(store)
    }

    @Test("a moved window whose shared hours differ is a new run")
    func changedIsNewRun() throws {
        let copenhagen = try CopenhagenStore()
        try copenhagen.save(fetchedAt: 1_785_100_000)
        let moved = try copenhagen.save(Self.shifted(copenhagen.response, change: 0.1), fetchedAt: 1_785_170_000)
        #expect(moved.map(\.kind) == [.stored])
        #expect(try copenhagen.runs().count == 2)
    }
}
