import Foundation
import TestSupport
import Testing
import WxCore

@testable import WxCLI

/// Scores whose definition has an edge: an event is precipitation at or above the threshold, and a
/// wind direction error goes the short way round the compass.
@Suite("Verify: threshold edges and compass errors")
struct EventScoreTests {
    static let t: Int64 = 1_780_000_000 / 3600 * 3600

    @Test("exactly the threshold is an event: 0.1 mm forecast and observed is a hit", arguments: StoreEngine.all)
    func thresholdIsAnEvent(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let history = try HistoryBuilder(db: box.db, name: "Edge")
        // Forecast/observed: 0.1/0.1 (hit), 0.1/0 (false alarm), 0/0.1 (miss), 0/0 (correct negative).
        let pairs: [(Double, Double)] = [(0.1, 0.1), (0.1, 0), (0, 0.1), (0, 0)]
        let times = (1...4).map { Self.t + Int64($0) * 3600 }
        try history.storeRun(
            issuedAt: Self.t, fetchedAt: Self.t, times: times,
            columns: ["precipitation": pairs.map { $0.0 }], recordAnalysis: false)
        for (time, pair) in zip(times, pairs) {
            try history.observe(source: "station", time: time, ["precipitation": pair.1])
        }
        let result = await box.run(
            "query", "verify", "--location", "Edge", "--var", "precipitation", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect([row["a"], row["b"], row["c"], row["d"]].map { $0?.numberValue } == [1, 1, 1, 1])
    }

    @Test(
        "wind direction errors go the short way round: 350° against 10° is 20° off",
        arguments: StoreEngine.all,
        [
            ([350.0, 10.0], [10.0, 350.0], 0.0, 20.0),
            ([350.0, 355.0], [10.0, 15.0], -20.0, 20.0),
            ([100.0, 190.0], [80.0, 170.0], 20.0, 20.0)
        ])
    func compass(_ engine: StoreEngine, _ c: ([Double], [Double], Double, Double)) async throws {
        let (forecasts, observed, bias, mae) = c
        let box = try Sandbox(engine: engine)
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let history = try HistoryBuilder(db: box.db, name: "Windy")
        let times = forecasts.indices.map { Self.t + Int64($0 + 1) * 3600 }
        try history.storeRun(
            issuedAt: Self.t, fetchedAt: Self.t, times: times,
            columns: ["wind_direction_10m": forecasts], recordAnalysis: false)
        for (time, value) in zip(times, observed) {
            try history.observe(source: "station", time: time, ["wind_direction_10m": value])
        }
        let result = await box.run(
            "query", "verify", "--location", "Windy", "--var", "wind_direction_10m", "--format", "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let row = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue?.first)
        #expect(near(row["bias"]?.numberValue, bias, 1e-9), "bias \(String(describing: row["bias"]))")
        #expect(near(row["mae"]?.numberValue, mae, 1e-9), "MAE \(String(describing: row["mae"]))")
    }
}
