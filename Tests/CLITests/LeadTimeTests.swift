import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI

/// Lead time is (valid − issued) / 3600 in fractional hours. A run first fetched at hh:17 (a blend
/// has no model run time) has leads of 0.72, 1.72, ... h, and the hour before its issue time has
/// lead −0.28 h: it is not a forecast and must not enter the [0,6) bucket, before or after a prune.
/// Whole-hour leads (integer division of seconds) would show 2 h for 2 h 43 min.
@Suite("Lead time of runs issued between whole hours")
struct LeadTimeTests {
    static let hour: Int64 = 3600
    static let t: Int64 = 1_780_000_000 / 3600 * 3600
    static let issued = t + 17 * 60

    /// One run issued at hh:17 with hours from 3 h before to 30 h after, forecast = observed + 1,
    /// except the hours before the issue time, which are 10 off (as an analysis could be).
    @discardableResult
    static func build(_ box: Sandbox) throws -> HistoryBuilder {
        let history = try HistoryBuilder(db: box.db, name: "Quarter", timezone: "UTC")
        let times = (-3...30).map { t + Int64($0) * hour }
        let truth = { (time: Int64) in Double(time / hour % 24) }
        try history.storeRun(
            issuedAt: issued, fetchedAt: issued, times: times,
            columns: ["temperature_2m": times.map { truth($0) + ($0 < issued ? 10 : 1) }], recordAnalysis: false)
        for time in times { try history.observe(source: "station", time: time, ["temperature_2m": truth(time)]) }
        return history
    }

    /// The first verify row: [0,6), six forecasts valid 0.7 ... 5.7 h after the issue time.
    func firstBucket(_ box: Sandbox) async throws -> JSON {
        let result = await box.run("query", "verify", "--location", "Quarter", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        return try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
    }

    @Test(
        "verify leaves the hour before the issue time out of [0,6); persistence uses the issue hour's observation",
        arguments: StoreEngine.all)
    func verify(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        try Self.build(box)
        let row = try await firstBucket(box)
        #expect(row["lead_from_h"]?.numberValue == 0)
        #expect(row["n"]?.numberValue == 6)
        #expect(near(row["bias"]?.numberValue, 1))
        #expect(row["first_valid_time"]?.stringValue == CivilTime.isoUTC(Self.t + Self.hour))
        // The observation at hh:00 of the issue hour is carried forward as persistence.
        #expect(row["persistence_n"]?.numberValue == 6)
    }

    @Test("after a prune, verify gives the same [0,6) numbers", arguments: StoreEngine.all)
    func prune(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let later = try Self.build(box)
        // The latest run keeps its rows whatever its age: a later one (hours no observation covers,
        // so no pairs) lets prune remove the run under test.
        let times = (48...53).map { Self.t + Int64($0) * Self.hour }
        try later.storeRun(
            issuedAt: Self.issued + 86400, fetchedAt: Self.issued + 86400, times: times,
            columns: ["temperature_2m": times.map { _ in 0 }], recordAnalysis: false)
        box.now = Date(timeIntervalSince1970: TimeInterval(Self.issued + 10 * 86400))
        let pruned = await box.run("prune", "--keep-days", "1")
        #expect(pruned.code == 0, "\(pruned.stderrText)")
        #expect(pruned.stderrText.contains("Pruned 1 run"), "\(pruned.stderrText)")
        let row = try await firstBucket(box)
        #expect(row["n"]?.numberValue == 6)
        #expect(near(row["bias"]?.numberValue, 1))
    }

    @Test("query forecast gives the lead in fractional hours", arguments: StoreEngine.all)
    func forecast(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        try Self.build(box)
        let result = await box.run(
            "query", "forecast", "--location", "Quarter", "--at", CivilTime.isoUTC(Self.t + 3 * Self.hour), "--format",
            "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let run = try #require(try parseJSON(result.stdout)["runs"]?.arrayValue?.first)
        #expect(near(run["lead_hours"]?.numberValue, 163.0 / 60))
    }

    @Test("export pairs --format verif gives the lead in fractional hours", arguments: StoreEngine.all)
    func verifExport(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        try Self.build(box)
        let result = await box.run("export", "pairs", "--location", "Quarter", "--format", "verif")
        #expect(result.code == 0, "\(result.stderrText)")
        // unixtime leadtime location lat lon altitude obs fcst: the first pair is 43 min after the issue time.
        let first = try #require(
            result.stdout.split(separator: "\n").first { !$0.hasPrefix("#") && !$0.hasPrefix("unixtime") })
        let fields = first.split(separator: " ")
        #expect(fields.count == 8)
        #expect(near(Double(fields[1]), 43.0 / 60), "\(first)")
    }

    @Test("export hourly and export pairs give the lead in fractional hours", arguments: StoreEngine.all)
    func exports(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        try Self.build(box)
        for kind in ["hourly", "pairs"] {
            let result = await box.run("export", kind, "--location", "Quarter")
            #expect(result.code == 0, "\(result.stderrText)")
            let lines = result.stdout.split(separator: "\r\n").map {
                $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            }
            let header = try #require(lines.first)
            let valid = try #require(header.firstIndex(of: "valid_time")),
                lead = try #require(header.firstIndex(of: "lead_hours"))
            let leads = Dictionary(
                lines.dropFirst().map { ($0[valid], Double($0[lead]) ?? .nan) }, uniquingKeysWith: { a, _ in a })
            // 2 h 43 min after the issue time.
            #expect(near(leads[CivilTime.isoUTC(Self.t + 3 * Self.hour)], 163.0 / 60), "\(kind)")
            if kind == "hourly" {
                #expect(near(leads[CivilTime.isoUTC(Self.t)], -17.0 / 60), "\(kind)")
            }
        }
    }
}
