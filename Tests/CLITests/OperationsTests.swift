import Foundation
import Testing
import WxCore
import WxSQLite
import WxStore
import WxStoreSQLite

@testable import WxCLI

@Suite("Running it for real: prune, stats, doctor, schedule, overlap")
struct OperationsTests {
    /// Every numeric field of every row of `query verify --format json`, by row and key.
    func verifyNumbers(_ box: Sandbox, _ extra: [String] = []) async throws -> [[String: Double]] {
        let result = await box.run(["query", "verify", "--location", "Testville", "--format", "json"] + extra)
        #expect(result.code == 0, "\(result.stderrText)")
        let rows = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue)
        return rows.map { row in
            var numbers: [String: Double] = [:]
            for (key, value) in zip(row.objectValue!.keys, row.objectValue!.values) {
                if let number = value.numberValue { numbers[key] = number }
            }
            return numbers
        }
    }

    @Test(
        "prune then verify gives the n, bias, MAE, RMSE and correlation verify gave before",
        arguments: [[], ["--by", "day"], ["--units", "imperial"], ["--by", "model"]])
    func pruneKeepsVerification(_ extra: [String]) async throws {
        let box = Sandbox()
        _ = try GeneratedHistory.build(box)
        let before = try await verifyNumbers(box, extra)
        // Prune everything but the last two runs.
        box.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(8) + 86400 * 3))
        let pruned = await box.run("prune", "--keep-days", "3", "--vacuum")
        #expect(pruned.code == 0, "\(pruned.stderrText)")
        #expect(pruned.stderrText.contains("Pruned 8 runs"))
        #expect(try counts(box.db)["hourly_forecasts"] == 2 * 390)
        let after = try await verifyNumbers(box, extra)
        #expect(before.count == after.count)
        for (b, a) in zip(before, after) {
            #expect(b["lead_from_h"] == a["lead_from_h"])
            #expect(b["n"] == a["n"])
            for key in ["bias", "mae", "rmse", "correlation", "error_sd"] {
                let x = try #require(b[key]), y = try #require(a[key])
                #expect(abs(x - y) <= 1e-9 * max(1, abs(x)), "\(key) \(x) vs \(y) in bucket \(b["lead_from_h"]!)")
            }
        }
        let db = try Database(path: box.db)
        #expect(try db.scalarText("PRAGMA integrity_check") == "ok")
        // Pruning again finds nothing more.
        #expect(await box.run("prune", "--keep-days", "3").stderrText.contains("Pruned 0 runs"))
    }

    @Test("precipitation scores at the default threshold survive a prune")
    func prunePrecipitation() async throws {
        let box = Sandbox()
        try QueryPrecipitationTests.build(box)
        let before = await box.run(
            "query", "verify", "--location", "Rainy", "--var", "precipitation", "--format", "json")
        box.now = Date(timeIntervalSince1970: TimeInterval(QueryPrecipitationTests.T + 86400 * 10))
        #expect(await box.run("prune", "--keep-days", "1").code == 0)
        let after = await box.run(
            "query", "verify", "--location", "Rainy", "--var", "precipitation", "--format", "json")
        #expect(after.code == 0)
        for key in ["a", "b", "c", "d", "pod", "far", "csi", "ets", "n", "bias"] {
            let b = try parseJSON(before.stdout)["rows"]?.arrayValue?.first?[key]
            let a = try parseJSON(after.stdout)["rows"]?.arrayValue?.first?[key]
            #expect(b != nil && b == a, "\(key)")
        }
    }

    @Test("doctor on a file that is not a database exits non-zero and leaves it byte-for-byte")
    func doctorRefusesJunk() async throws {
        let box = Sandbox()
        let path = box.folder.appendingPathComponent("notes.sqlite").path
        let junk = Data("PLEASE DO NOT DELETE: my notes\n".utf8) + Data((0..<4096).map { UInt8($0 % 251) })
        try junk.write(to: URL(fileURLWithPath: path))
        let result = await box.run("--db", path, "doctor")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("not a SQLite database"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == junk)
        #expect(!FileManager.default.fileExists(atPath: path + "-wal"))
    }

    @Test("doctor on a sound database reports ok and the schema")
    func doctorOK() async throws {
        let box = Sandbox()
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        let result = await box.run("doctor")
        #expect(result.code == 0)
        #expect(result.stdout.contains("integrity         ok"))
        #expect(result.stdout.contains("(current)"))
    }

    @Test("doctor reports a damaged database without repairing it")
    func doctorDamaged() async throws {
        let box = Sandbox()
        _ = try GeneratedHistory.build(box)
        do {
            let db = try Database(path: box.db)
            try db.execute("PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE")
        }
        // Scribble over a page in the middle of the file.
        let handle = try #require(FileHandle(forUpdatingAtPath: box.db))
        try handle.seek(toOffset: 4096 * 11)  // the root page of hourly_forecasts
        handle.write(Data(repeating: 0xAB, count: 3000))
        try handle.close()
        let damaged = try Data(contentsOf: URL(fileURLWithPath: box.db))
        let result = await box.run("doctor")
        #expect(result.code == 1)
        #expect(result.stderrText.contains("problems"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: box.db)) == damaged)
    }

    @Test("stats counts rows, runs, repeated fetches and gaps")
    func stats() async throws {
        let box = Sandbox()
        _ = try GeneratedHistory.build(box)
        box.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(9) + 7200))
        let result = await box.run("stats", "--format", "json", "--days", "1")
        #expect(result.code == 0)
        let json = try parseJSON(result.stdout)
        #expect(json["tables"]?["forecast_runs"]?.numberValue == 10)
        let location = try #require(json["locations"]?.arrayValue?.first)
        #expect(location["runs"]?.numberValue == 10)
        #expect(location["repeated_fetches"]?.numberValue == 1)
        // Fetches every 6 hours: most hours of the last day have none.
        #expect((location["gap_hours"]?.numberValue ?? 0) >= 18)
    }

    @Test(
        "schedule prints the absolute binary, the database and a fixed minute that is not :00",
        arguments: ["--cron", "--systemd", "--launchd"])
    func schedule(_ kind: String) async throws {
        let box = Sandbox()
        box.environment["WXDB_DB"] = box.folder.appendingPathComponent("my data/wxdb.sqlite").path
        let first = await box.run("schedule", kind)
        let second = await box.run("schedule", kind)
        #expect(first.code == 0)
        #expect(first.stdout == second.stdout)
        #expect(first.stdout.contains("my data/wxdb.sqlite"))
        #expect(first.stdout.contains(" ingest") || first.stdout.contains("<string>ingest</string>"))
        #expect(!first.stdout.contains("apikey"))
        if kind == "--cron" {
            let minute = Int(first.stdout.split(separator: "\n")[1].split(separator: " ")[0])!
            #expect((1...58).contains(minute))
            #expect(first.stdout.contains("'\(box.folder.path)/my data/wxdb.sqlite'"))
        }
    }

    @Test("a second ingest while one holds the lock waits, then gives up with a clear message")
    func ingestLock() async throws {
        let box = Sandbox()
        await box.run("locations", "add", "Here", "--lat", "1", "--lon", "2")
        let held = try ProcessLock(databasePath: box.db, timeout: 1)
        let start = Date()
        let result = await box.run("ingest", "--wait", "1")
        #expect(Date().timeIntervalSince(start) >= 0.9)
        #expect(result.code == 1)
        #expect(result.stderrText.contains("another wxdb ingest"))
        #expect(!result.stderrText.contains("locked"))
        withExtendedLifetime(held) {}
    }

    @Test("the ingest lock is the same for every spelling of the database path")
    func lockByRealPath() throws {
        let box = Sandbox()
        _ = FileManager.default.createFile(atPath: box.db, contents: nil)
        let link = box.folder.appendingPathComponent("link.sqlite").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: box.db)
        let held = try ProcessLock(databasePath: box.db, timeout: 1)
        #expect(throws: ProcessLock.Failure.self) { _ = try ProcessLock(databasePath: link, timeout: 0.2) }
        withExtendedLifetime(held) {}
    }
}

@Suite("Prune and time ranges")
struct PruneRangeTests {
    @Test("verify over whole local dates gives the same numbers after a prune; a range that cuts a pruned day says so")
    func rangesAfterPrune() async throws {
        let box = Sandbox()
        _ = try GeneratedHistory.build(box)  // Testville is in Europe/Berlin
        // Four whole local days in the middle of the history.
        let start = GeneratedHistory.issued(2) + 86400
        let from = ZoneTime.date(of: start, timezone: "Europe/Berlin")
        let to = ZoneTime.date(of: start + 3 * 86400, timezone: "Europe/Berlin")
        let args = ["query", "verify", "--location", "Testville", "--format", "json", "--from", from, "--to", to]
        let before = await box.run(args)
        #expect(before.code == 0, "\(before.stderrText)")
        box.now = Date(timeIntervalSince1970: TimeInterval(GeneratedHistory.issued(9) + 86400 * 3))
        #expect(await box.run("prune", "--keep-days", "1").code == 0)
        let after = await box.run(args)
        #expect(after.code == 0)
        let b = try #require(try parseJSON(before.stdout)["rows"]?.arrayValue)
        let a = try #require(try parseJSON(after.stdout)["rows"]?.arrayValue)
        #expect(b.count == a.count)
        for (x, y) in zip(b, a) {
            #expect(x["n"] == y["n"])
            let bx = try #require(x["bias"]?.numberValue), by = try #require(y["bias"]?.numberValue)
            #expect(abs(bx - by) <= 1e-9)
        }
        #expect(!after.stderrText.contains("left out"))
        // A range in UTC hours cuts the first and last local day.
        let cut = await box.run(
            "query", "verify", "--location", "Testville", "--from", from + "T06:00Z", "--to", to + "T06:00Z")
        #expect(cut.code == 0)
        #expect(cut.stderrText.contains("were left out"))
    }
}
