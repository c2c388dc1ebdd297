import Foundation
import Testing
import WxStore
import WxStoreSQLite

@testable import WxCLI
@testable import WxCore

/// Builds forecast histories straight through the store API, for the `wxdb query` tests, on the
/// engine `db` names (a SQLite path, or a PostgreSQL connection string as `Sandbox(engine:)` makes).
struct HistoryBuilder {
    let store: any Store
    let location: Location

    init(db: String, name: String = "Testville", timezone: String = "UTC", models: [String] = ["best_match"]) throws {
        store = try StoreEngines.open(db, create: true, busyTimeoutMilliseconds: 5000, access: .write)
        location = try store.addLocation(
            name: name, latitude: 52.5, longitude: 13.4, elevation: 40,
            timezone: timezone, models: models, now: 0)
    }

    /// A response with one model and the given hourly columns (by variable name).
    static func response(model: String, times: [Int64], columns: [String: [Double?]]) -> ForecastResponse {
        var forecast = ModelForecast(model: model)
        forecast.hourlyTimes = times
        for (name, values) in columns {
            forecast.hourly[Variables.hourlyIndex(of: name)!] = values
        }
        return ForecastResponse(
            latitude: 52.5, longitude: 13.4, elevation: 40, utcOffsetSeconds: 0, timezone: "GMT",
            locationID: nil, current: nil, models: [forecast])
    }

    /// Stores one run issued (model run time) at `issuedAt`, fetched at `fetchedAt`.
    @discardableResult
    func storeRun(
        model: String = "best_match", issuedAt: Int64, fetchedAt: Int64, times: [Int64],
        columns: [String: [Double?]], recordAnalysis: Bool = true
    ) throws -> StoreOutcome {
        let response = Self.response(model: model, times: times, columns: columns)
        return try store.store(
            response, for: location,
            fetch: FetchRecord(
                fetchedAt: fetchedAt, origin: .fetch, issuedAt: [model: issuedAt], recordAnalysis: recordAnalysis)
        ).first!
    }

    /// Stores a source's observations for every hour in `times` in one write (the store's own bulk
    /// write, one transaction), with values for the named variables from `values(time)`. Recorded at the
    /// first hour, so a later write of any of these hours replaces what it gives, as `observe` would.
    func observeAll(source: String, times: [Int64], _ values: (Int64) -> [String: Double]) throws {
        var series = ModelForecast(model: source)
        series.hourlyTimes = times
        for (row, time) in times.enumerated() {
            for (name, value) in values(time) {
                let index = Variables.hourlyIndex(of: name)!
                if series.hourly[index] == nil { series.hourly[index] = Array(repeating: nil, count: times.count) }
                series.hourly[index]![row] = value
            }
        }
        try store.saveObservations(series, locationID: location.id, source: source, recordedAt: times.first ?? 0)
    }

    /// Stores one observation hour with values for the named variables.
    func observe(source: String, time: Int64, _ values: [String: Double]) throws {
        var row = [Double?](repeating: nil, count: Variables.hourly.count)
        for (name, value) in values { row[Variables.hourlyIndex(of: name)!] = value }
        try store.upsertObservation(locationID: location.id, source: source, time: time, values: row, recordedAt: time)
    }
}

/// The parsed JSON document a command printed.
func parseJSON(_ text: String) throws -> JSON {
    try JSONParser.parse(Array(text.utf8))
}

/// |a − b| ≤ tolerance; nil is never close.
func near(_ a: Double?, _ b: Double, _ tolerance: Double = 1e-6) -> Bool {
    guard let a else { return false }
    return abs(a - b) <= tolerance
}
