import Foundation
import TestSupport

@testable import WxCore
@testable import WxStore
@testable import WxStoreSQLite

/// A new store with Copenhagen saved (time zone `auto`, adopted from the first response) and the
/// recorded Copenhagen forecast decoded: where the run-identity tests start.
struct CopenhagenStore {
    let store: SQLiteStore
    let location: Location
    let response: ForecastResponse

    init() throws {
        store = try SQLiteStore.open(path: temporaryDatabase())
        location = try store.addLocation(
            name: "Copenhagen", latitude: 55.68, longitude: 12.57, elevation: nil, timezone: "auto", models: [], now: 0)
        response = try ForecastDecoder.decodeSingle(
            try fixtureBytes("forecast-current-hourly-daily-iso8601-copenhagen.json"), defaultModel: "best_match")
    }

    /// Stores `response` (the recorded one by default) as imported at `fetchedAt`.
    @discardableResult
    func save(_ response: ForecastResponse? = nil, fetchedAt: Int64) throws -> [StoreOutcome] {
        try store.store(
            response ?? self.response, for: location, fetch: FetchRecord(fetchedAt: fetchedAt, origin: .import))
    }

    /// The location's runs as `query runs` reads them.
    func runs() throws -> [RunSummary] {
        try store.runSummaries(locationID: location.id, model: nil, issuedFrom: .min, issuedTo: .max)
    }
}
