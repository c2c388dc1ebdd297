import Foundation
import Testing
import WxStore
import WxStoreSQLite

@testable import WxCLI

/// The free API's daily budget counts the request about to be sent: wxdb refuses (and says why)
/// what Open-Meteo would answer with a 429.
@Suite("Ingest: the daily budget counts the request about to be sent", .serialized)
struct DailyBudgetTests {
    /// Weighted calls already used earlier today (in another hour, so the hourly limit is not
    /// what decides), and whether a one-location request (weight about 3.9) is then sent.
    @Test(
        "a request that would pass 10,000 weighted calls today is refused; one that fits is sent",
        arguments: [(9998.0, false), (9996.5, false), (9990.0, true)])
    func dailyBudget(used: Double, sent: Bool) async throws {
        let replay = try ReplaySandbox()
        defer { try? FileManager.default.removeItem(at: replay.box.folder) }
        #expect(await replay.run("locations", "add", "Here", "--lat", "10", "--lon", "20").code == 0)
        let now = Int64(replay.box.now.timeIntervalSince1970)
        let startOfDay = now - now % 86400
        #expect(now - startOfDay >= 3600, "the sandbox clock must not be in the day's first hour")
        try SQLiteStore.open(path: replay.box.db).logFetch(
            FetchRecord(fetchedAt: startOfDay, origin: .fetch, apiWeight: used), locationID: nil, model: nil,
            outcome: "stored", runID: nil, error: nil)
        let result = await replay.run("ingest")
        if sent {
            #expect(result.code == 0, "\(result.stderrText)")
            #expect(replay.forecastRequests.count == 1)
        } else {
            #expect(result.code == 1)
            #expect(replay.forecastRequests.isEmpty)
            #expect(result.stderrText.contains("free daily limit"), "\(result.stderrText)")
        }
    }
}

@Suite("Ingest: a batched request's weight is shared by its locations", .serialized)
struct BatchWeightTests {
    @Test("two ingests of three batched locations (about 11.7 weighted calls each) fit in the day's last 30")
    func batchWeightCountedOnce() async throws {
        let replay = try ReplaySandbox()
        defer { try? FileManager.default.removeItem(at: replay.box.folder) }
        try await replay.addThreeRecordedLocations()
        let now = Int64(replay.box.now.timeIntervalSince1970)
        try SQLiteStore.open(path: replay.box.db).logFetch(
            FetchRecord(fetchedAt: now - now % 86400, origin: .fetch, apiWeight: 9970), locationID: nil, model: nil,
            outcome: "stored", runID: nil, error: nil)
        for _ in 0..<2 {
            let result = await replay.run("ingest")
            #expect(result.code == 0, "\(result.stderrText)")
        }
        #expect(replay.forecastRequests.count == 2)
        // The third would pass 10,000.
        let third = await replay.run("ingest")
        #expect(third.code == 1)
        #expect(third.stderrText.contains("free daily limit"), "\(third.stderrText)")
        #expect(replay.forecastRequests.count == 2)
    }
}
