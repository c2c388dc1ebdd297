import Foundation
import Testing
import WxSQLite
import WxStore
import WxStoreSQLite

/// Issue #26 items 6 and 10 through the binary: station files built to crash, hang or confuse.
@Suite("Hostile station files through the binary")
struct HostileStationTests {
    /// Runs the binary; one that has not ended after `guardSeconds` is killed and reported as
    /// hanging (a guard against the old endless loops, not a timing assertion).
    static func run(_ arguments: [String], environment: [String: String], guardSeconds: Double = 120) throws
        -> (status: Int32, signalled: Bool, hung: Bool, stdout: String, stderr: String)
    {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: HostileLocalTests.binary!)
        process.arguments = arguments
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let ended = DispatchSemaphore(value: 0)
        process.terminationHandler = { _ in ended.signal() }
        try process.run()
        let collected = OutputCollector(out: out, err: err)
        let hung = ended.wait(timeout: .now() + guardSeconds) == .timedOut
        if hung {
            kill(process.processIdentifier, SIGKILL)
            ended.wait()
        }
        let (stdout, stderr) = collected.finish()
        return (
            process.terminationStatus, process.terminationReason == .uncaughtSignal, hung,
            String(decoding: stdout, as: UTF8.self), String(decoding: stderr, as: UTF8.self)
        )
    }

    /// Reads both pipes on their own threads, so a chatty child never blocks on a full pipe.
    final class OutputCollector: @unchecked Sendable {
        private var stdout = Data(), stderr = Data()
        private let group = DispatchGroup()
        init(out: Pipe, err: Pipe) {
            group.enter()
            DispatchQueue.global().async {
                self.stdout = out.fileHandleForReading.readDataToEndOfFile()
                self.group.leave()
            }
            group.enter()
            DispatchQueue.global().async {
                self.stderr = err.fileHandleForReading.readDataToEndOfFile()
                self.group.leave()
            }
        }
        func finish() -> (Data, Data) {
            group.wait()
            return (stdout, stderr)
        }
    }

    /// A weewx archive whose records are `rows` of (dateTime, interval), each with a temperature.
    static func weewx(_ path: String, _ rows: [(Int64, Int64)]) throws {
        var options = Database.Options()
        options.walMode = false
        let db = try Database(path: path, options: options)
        try db.execute(WeewxFixture.createArchive)
        try db.transaction {
            for (time, interval) in rows {
                try db.run(
                    "INSERT INTO archive (dateTime, usUnits, interval, outTemp) VALUES (?, 16, ?, 12.5)",
                    [.integer(time), .integer(interval)])
            }
        }
    }

    /// An endless recursive query, for a view to stand in for a table.
    static let endless = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n"

    static let hour: Int64 = 1_782_864_000  // 2026-07-01T00:00Z

    @Test(
        "weewx: overflowing times and intervals, far-apart records and endless views end with an import or a clear error",
        arguments: [
            ("dateTime Int64.max", 0, "Stored 1 of 1 hours"), ("interval +9.2e18", 0, "Stored 1 of 1 hours"),
            ("interval -9.2e18", 0, "Stored 1 of 1 hours"), ("record at Int64.min", 0, "Stored 1 of 1 hours"),
            ("records at 0 and 4e18", 0, "Stored 1 of 1 hours"), ("records in 1970 and 2100", 0, "Stored 2 of"),
            ("endless view", 1, "more work than a weewx archive of its size can need"),
            ("fifo", 1, "is not a regular file"), ("folder", 1, "is a folder, not a weewx archive"),
            ("hot journal", 1, "has a hot journal beside it")
        ])
    func hostileWeewx(_ kind: String, _ status: Int32, _ message: String) async throws {
        guard HostileLocalTests.binary != nil else { return }
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4").code == 0)
        let path = box.folder.appendingPathComponent("weewx.sdb").path
        switch kind {
        case "dateTime Int64.max": try Self.weewx(path, [(Self.hour, 5), (Int64.max, 5)])
        case "interval +9.2e18": try Self.weewx(path, [(Self.hour, Int64.max), (Self.hour - 300, Int64.max)])
        case "interval -9.2e18": try Self.weewx(path, [(Self.hour, Int64.min), (Self.hour - 300, Int64.min + 1)])
        case "record at Int64.min": try Self.weewx(path, [(Int64.min, 5), (Self.hour, 5)])
        case "records at 0 and 4e18": try Self.weewx(path, [(0, 60), (4_000_000_000_000_000_000, 60)])
        case "records in 1970 and 2100": try Self.weewx(path, [(0, 60), (4_102_444_800, 60)])
        case "endless view":
            let db = try Database(path: path)
            try db.execute(
                "CREATE VIEW archive AS SELECT i AS dateTime, 16 AS usUnits, 5 AS interval, 1.0 AS outTemp FROM ("
                    + Self.endless + ")")
        case "fifo": #expect(mkfifo(path, 0o644) == 0)
        case "folder": try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        default:
            // The database and its journal copied in the middle of a write: a hot journal SQLite
            // must roll back before anyone reads the file.
            let source = box.folder.appendingPathComponent("live.sdb").path
            try Self.weewx(source, (0..<2000).map { (Self.hour + Int64($0) * 300, 5) })
            var options = Database.Options()
            options.walMode = false
            let writer = try Database(path: source, options: options)
            try writer.execute("PRAGMA cache_size = 1")
            try writer.execute("BEGIN IMMEDIATE")
            try writer.execute("UPDATE archive SET outTemp = outTemp + 1")
            try FileManager.default.copyItem(atPath: source, toPath: path)
            try FileManager.default.copyItem(atPath: source + "-journal", toPath: path + "-journal")
            try writer.execute("ROLLBACK")
        }
        let result = try Self.run(
            ["--db", box.db, "observe", "import-weewx", path, "--location", "Garden"], environment: box.environment)
        #expect(!result.hung, "still running after the guard: killed")
        #expect(!result.signalled, "crashed: \(result.stderr)")
        #expect(result.status == status, "\(result.stderr)")
        #expect(result.stderr.contains(message), "\(result.stderr)")
        if status == 1 {
            #expect(result.stderr.hasPrefix("Error: "), "\(result.stderr)")
            #expect(try storedObservations(box.db, source: "weewx").isEmpty)
        }
    }

    /// A recorder database with one statistic whose rows start at `starts`.
    static func homeAssistant(_ path: String, _ starts: [Double]) throws {
        let db = try Database(path: path)
        try db.execute(HomeAssistantFixture.schema)
        try db.run(
            "INSERT INTO statistics_meta (id, statistic_id, source, unit_of_measurement, has_mean, has_sum) VALUES (1, 'sensor.t', 'recorder', '°C', 1, 0)"
        )
        for start in starts {
            try db.run(
                "INSERT INTO statistics (metadata_id, start_ts, mean) VALUES (1, ?, 10.5)", [.real(start)])
        }
        try db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    }

    @Test(
        "Home Assistant: far-apart, huge and endless statistics end with an import, a list or a clear error",
        arguments: [
            ("start_ts 0 and 3.6e18", false, 0, "Stored 1 of 1 hours"),
            ("start_ts in 1970 and 2100", false, 0, "Stored 2 of"),
            ("start_ts 1e300", true, 0, "sensor.t"),
            ("endless view", false, 1, "more work than a Home Assistant database of its size can need"),
            ("endless view", true, 1, "more work than a Home Assistant database of its size can need"),
            ("fifo", true, 1, "is not a regular file")
        ])
    func hostileHomeAssistant(_ kind: String, _ list: Bool, _ status: Int32, _ message: String) async throws {
        guard HostileLocalTests.binary != nil else { return }
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4").code == 0)
        let path = box.folder.appendingPathComponent("home-assistant_v2.db").path
        switch kind {
        case "start_ts 0 and 3.6e18": try Self.homeAssistant(path, [0, 3.6e18])
        case "start_ts in 1970 and 2100": try Self.homeAssistant(path, [0, 4_102_444_800])
        case "start_ts 1e300": try Self.homeAssistant(path, [Double(Self.hour), 1e300])
        case "endless view":
            let db = try Database(path: path)
            try db.execute(
                """
                CREATE TABLE statistics_meta (id INTEGER PRIMARY KEY, statistic_id TEXT, unit_of_measurement TEXT);
                INSERT INTO statistics_meta VALUES (1, 'sensor.t', '°C');
                CREATE VIEW statistics AS SELECT 1 AS metadata_id, i * 3600.0 AS start_ts, 1.0 AS mean, NULL AS sum
                FROM (\(Self.endless)) ORDER BY i DESC;
                """)
        default: #expect(mkfifo(path, 0o644) == 0)
        }
        let arguments =
            list
            ? ["observe", "import-home-assistant", path, "--list"]
            : [
                "--db", box.db, "observe", "import-home-assistant", path, "--location", "Garden", "--sensor",
                "temperature_2m=sensor.t"
            ]
        let result = try Self.run(arguments, environment: box.environment)
        #expect(!result.hung, "still running after the guard: killed")
        #expect(!result.signalled, "crashed: \(result.stderr)")
        #expect(result.status == status, "\(result.stderr)")
        #expect((list && status == 0 ? result.stdout : result.stderr).contains(message), "\(result.stderr)")
        if status == 1 { #expect(result.stderr.hasPrefix("Error: "), "\(result.stderr)") }
    }
}
