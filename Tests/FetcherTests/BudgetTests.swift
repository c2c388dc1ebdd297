import Foundation
import TestSupport
import Testing
import WxCore
import WxFetcher
import WxStore
import WxStoreSQLite

/// The free-tier budget read from the fetch log (issue 11, point 6 and 17).
@Suite("Rate budget")
struct BudgetTests {
    final class Lines: @unchecked Sendable {
        private let lock = NSLock()
        private var list: [String] = []
        func add(_ line: String) { lock.withLock { list.append(line) } }
        var all: [String] { lock.withLock { list } }
    }

    func store() throws -> (SQLiteStore, Location, URL) {
        let folder = Scratch.folder("budget")
        let store = try SQLiteStore.open(path: folder.appendingPathComponent("wxdb.sqlite").path)
        let location = try store.addLocation(
            name: "Here", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC",
            models: ["best_match"], now: 0)
        return (store, location, folder)
    }

    @Test("fetches logged by a clock that ran ahead never count against today's budget")
    func futureRowsDoNotCount() throws {
        let (store, location, folder) = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let now: Int64 = 1_785_067_200
        for ahead: Int64 in [30, 3600, 86400, 365 * 86400] {
            try store.logFetch(
                FetchRecord(fetchedAt: now + ahead, origin: .fetch, apiWeight: 20_000),
                locationID: location.id, model: "best_match", outcome: "stored", runID: nil, error: nil)
        }
        try store.logFetch(
            FetchRecord(fetchedAt: now, origin: .fetch, apiWeight: 4),
            locationID: location.id, model: "best_match", outcome: "stored", runID: nil, error: nil)
        let use = try BudgetUse.read(store, now: now)
        #expect(use.minute == 4 && use.hour == 4 && use.day == 4)
        #expect(use.refusal(adding: 3.9, limits: RateLimits()) == nil)
    }

    @Test("an ingest that must wait for the next minute says why before it waits")
    func saysWhyItWaits() async throws {
        let (store, location, folder) = try store()
        defer { try? FileManager.default.removeItem(at: folder) }
        let now = Support.fixedNow
        try store.logFetch(
            FetchRecord(fetchedAt: Int64(now.timeIntervalSince1970), origin: .fetch, apiWeight: 599),
            locationID: location.id, model: "best_match", outcome: "stored", runID: nil, error: nil)
        let nowhere = "http://127.0.0.1:9"
        let endpoints = Endpoints(
            forecast: nowhere + "/v1/forecast", archive: nowhere, geocoding: nowhere, meta: nowhere, apiKey: nil)
        let ingestor = Ingestor(
            store: store, client: Support.client(timeout: 1, attempts: 1), endpoints: endpoints, now: { now })
        let notices = Lines()
        let waits = Lines()
        ingestor.notice = { notices.add($0) }
        ingestor.sleep = { waits.add("\($0)") }
        _ = await ingestor.run([location], options: IngestOptions())
        #expect(waits.all.count == 1)
        let line = try #require(notices.all.first)
        #expect(line.hasPrefix("Waiting \(waits.all[0]) s for the next minute"), "\(line)")
        #expect(line.contains("599 of Open-Meteo's 600"))
    }
}
