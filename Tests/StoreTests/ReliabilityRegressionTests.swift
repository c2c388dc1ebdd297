import Foundation
import TestSupport
import Testing
@testable import WxCore
@testable import WxSQLite
@testable import WxStore

/// Defects found by the reliability suite (issue #7), one test each.
@Suite("Store regressions found by Scripts/reliability")
struct StoreReliabilityRegressionTests {
    @Test("a response repeating an hour or a date stores counts equal to the rows kept")
    func repeatedTimesKeepCountsTrue() throws {
        let store = try Store.open(path: temporaryDatabase())
        let location = try store.addLocation(name: "Here", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
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

    @Test("a station CSV error quotes at most a short piece of a huge field")
    func hugeFieldClipped() throws {
        let huge = String(repeating: "7", count: 100_000)
        for body in ["time,temperature_2m\n2026-01-01T00:00Z,\(huge)\n", "time,temperature_2m\n\(huge),1\n", "time,\(huge)\n"] {
            #expect {
                _ = try StationCSV.parse(Data(body.utf8), timezone: nil, skipBadRows: false)
            } throws: { error in
                "\(error)".utf8.count < 600 && "\(error)".hasPrefix("line ")
            }
        }
    }

    @Test("a NUL byte inside a station CSV number is refused, not read as the digits before it")
    func nulInsideNumber() throws {
        let body = "time,temperature_2m\n2026-01-01T00:00Z,1\u{0}2\n"
        #expect(throws: StationCSV.Problem.self) {
            _ = try StationCSV.parse(Data(body.utf8), timezone: nil, skipBadRows: false)
        }
    }

    @Test("a database on a read-only file system is refused with a clear message, not a raw SQLite error",
          .enabled(if: getuid() == 0, "needs root to mount a tmpfs"))
    func readOnlyFileSystem() throws {
        let folder = Scratch.root.appendingPathComponent("ro-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        func sh(_ args: [String]) throws -> Int32 {
            let p = try Process.run(URL(fileURLWithPath: "/bin/" + args[0]), arguments: Array(args.dropFirst()))
            p.waitUntilExit()
            return p.terminationStatus
        }
        guard try sh(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", folder]) == 0 else { return }
        defer { _ = try? sh(["umount", "-l", folder]) }
        let path = folder + "/wxdb.sqlite"
        do {
            let store = try Store.open(path: path)
            _ = try store.addLocation(name: "Here", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        }
        #expect(try sh(["mount", "-o", "remount,ro", folder]) == 0)
        #expect {
            _ = try Store.open(path: path)
        } throws: { error in
            let text = "\(error)"
            return error is Store.OpenError && text.contains("read-only") && !text.contains("SQLite error")
        }
    }
}
