// The Store requirements for locations and writes that the PostgreSQL engine does not fill yet.
// NOT BUILT YET on PostgreSQL: each stub below throws `PostgresStoreGap`, a clear `Error:` that names
// the operation, so a command that needs one refuses before writing anything. Each is replaced by
// its implementation (in a file of its own beside this one) as the engine grows; this file goes
// when the last one has.
import WxCore
import WxStore

extension PostgresEngine {
    public func requireLocation(named name: String) throws -> Location {
        throw PostgresStoreGap(operation: "requireLocation")
    }

    public func location(id: Int64) throws -> Location? {
        throw PostgresStoreGap(operation: "location")
    }

    public func locationsByID(only id: Int64?) throws -> [(id: Int64, name: String)] {
        throw PostgresStoreGap(operation: "locationsByID")
    }

    public func updateLocation(named name: String, timezone: String?, models: [String]?) throws -> Location {
        throw PostgresStoreGap(operation: "updateLocation")
    }

    public func removeLocation(named name: String, purge: Bool) throws -> (runs: Int, observations: Int) {
        throw PostgresStoreGap(operation: "removeLocation")
    }

    public func isStillSaved(_ location: Location) throws -> Bool {
        throw PostgresStoreGap(operation: "isStillSaved")
    }

    public func adoptTimezoneIfAuto(_ location: Location, from response: ForecastResponse) throws {
        throw PostgresStoreGap(operation: "adoptTimezoneIfAuto")
    }

    public func store(_ response: ForecastResponse, for location: Location, fetch: FetchRecord) throws -> [StoreOutcome]
    {
        throw PostgresStoreGap(operation: "store")
    }

    public func storeAll<Item>(
        _ items: [Item], for location: Location,
        make: (Item) throws -> (response: ForecastResponse, fetch: FetchRecord),
        stored: (Item, [StoreOutcome]) -> Void
    ) throws -> [StoreOutcome] {
        throw PostgresStoreGap(operation: "storeAll")
    }

    public func upsertObservation(
        locationID: Int64, source: String, time: Int64, values: [Double?], recordedAt: Int64, replacing: Bool
    ) throws {
        throw PostgresStoreGap(operation: "upsertObservation")
    }

    public func saveObservations(
        _ series: ModelForecast, through: Int64, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int {
        throw PostgresStoreGap(operation: "saveObservations")
    }

    public func upsertObservations(
        _ series: ModelForecast, through: Int64, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int {
        throw PostgresStoreGap(operation: "upsertObservations")
    }

    public func importObservations(_ csv: StationCSV, locationID: Int64, source: String, recordedAt: Int64) throws
        -> Int
    {
        throw PostgresStoreGap(operation: "importObservations")
    }

    public func replaceStationObservations(
        _ result: StationImport, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int {
        throw PostgresStoreGap(operation: "replaceStationObservations")
    }

    public func logFetch(
        _ fetch: FetchRecord, locationID: Int64?, model: String?, outcome: String, runID: Int64?, error: String?
    ) throws {
        throw PostgresStoreGap(operation: "logFetch")
    }

    public func logFailure(_ fetch: FetchRecord, locationID: Int64?, model: String?, error: String) throws {
        throw PostgresStoreGap(operation: "logFailure")
    }

    public func logFailures(_ fetch: FetchRecord, for targets: [(locationID: Int64?, model: String?)], error: String)
        throws
    {
        throw PostgresStoreGap(operation: "logFailures")
    }

    public func pruneBatch(issuedBefore cutoff: Int64, now: Int64, limit: Int) throws -> PruneBatch? {
        throw PostgresStoreGap(operation: "pruneBatch")
    }
}
