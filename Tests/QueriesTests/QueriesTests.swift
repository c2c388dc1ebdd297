import Foundation
import TestSupport
import Testing
import WxStore
import WxStoreSQLite

@testable import WxCore
@testable import WxQueries

private let hour: Int64 = 3600
private let t0: Int64 = 1_780_000_000 / 3600 * 3600

private func temporaryStore() throws -> SQLiteStore {
    let path = Scratch.path("queries", suffix: ".sqlite")
    return try SQLiteStore.open(path: path)
}

private func storeRun(
    _ store: SQLiteStore, _ location: Location, model: String = "best_match", issuedAt: Int64,
    times: [Int64], _ columns: [String: [Double?]]
) throws {
    var forecast = ModelForecast(model: model)
    forecast.hourlyTimes = times
    for (name, values) in columns { forecast.hourly[Variables.hourlyIndex(of: name)!] = values }
    let response = ForecastResponse(
        latitude: 1, longitude: 2, elevation: nil, utcOffsetSeconds: 0, timezone: "GMT",
        locationID: nil, current: nil, models: [forecast])
    _ = try store.store(
        response, for: location,
        fetch: FetchRecord(
            fetchedAt: issuedAt + 600, origin: .fetch, issuedAt: [model: issuedAt], recordAnalysis: false))
}

private func observe(
    _ store: SQLiteStore, _ location: Location, _ source: String, _ time: Int64, _ values: [String: Double]
)
    throws
{
    var row = [Double?](repeating: nil, count: Variables.hourly.count)
    for (name, value) in values { row[Variables.hourlyIndex(of: name)!] = value }
    try store.upsertObservation(locationID: location.id, source: source, time: time, values: row, recordedAt: time)
}

private let temperature = Variables.hourlyVariable(named: "temperature_2m")!

@Suite("Queries over a store")
struct QueriesTests {
    @Test("the default source is an imported one, then era5, analysis, current")
    func sourceRanking() throws {
        let store = try temporaryStore()
        let location = try store.addLocation(
            name: "A", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        for source in ["current", "analysis", "era5"] {
            try observe(store, location, source, t0, ["temperature_2m": 1])
        }
        #expect(try ObservationSources.resolve(store, location: location, requested: nil) == "era5")
        try observe(store, location, "my_station", t0, ["temperature_2m": 1])
        #expect(
            try ObservationSources.ranked(store, locationID: location.id) == [
                "my_station", "era5", "analysis", "current"
            ])
    }

    @Test("verify: a hand-made pair set, persistence from the issue hour, model filter")
    func verifyByHand() throws {
        let store = try temporaryStore()
        let location = try store.addLocation(
            name: "B", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        // Run issued at t0 + 30 min: persistence takes the observation at t0 (rounded down).
        // forecasts at leads ~1.5 and ~2.5 h: 12 and 15; observed 10 and 14; obs at t0 = 11.
        try storeRun(
            store, location, issuedAt: t0 + 1800, times: [t0 + 2 * hour, t0 + 3 * hour], ["temperature_2m": [12, 15]])
        try storeRun(store, location, model: "gfs", issuedAt: t0, times: [t0 + 2 * hour], ["temperature_2m": [9]])
        try observe(store, location, "station", t0, ["temperature_2m": 11])
        try observe(store, location, "station", t0 + 2 * hour, ["temperature_2m": 10])
        try observe(store, location, "station", t0 + 3 * hour, ["temperature_2m": 14])
        let result = try VerifyQuery.verify(
            store, location: location, options: VerifyOptions(variable: temperature, model: "best_match"))
        let row = try #require(result.rows.first)
        #expect(result.rows.count == 1)
        #expect(row.scores.n == 2)
        #expect(row.scores.bias == 1.5)  // errors +2, +1
        // forecast MSE (4 + 1)/2 = 2.5; persistence errors 11−10 = +1, 11−14 = −3 → MSE 5; skill 1 − 2.5/5 = 0.5
        #expect(row.persistence.n == 2)
        #expect(row.persistenceSkill == 0.5)
        let all = try VerifyQuery.verify(store, location: location, options: VerifyOptions(variable: temperature))
        #expect(all.rows.first?.scores.n == 3)
    }

    @Test("wind direction errors go the short way round")
    func directionErrors() throws {
        let store = try temporaryStore()
        let location = try store.addLocation(
            name: "C", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        try storeRun(store, location, issuedAt: t0, times: [t0 + hour], ["wind_direction_10m": [350]])
        try observe(store, location, "station", t0 + hour, ["wind_direction_10m": 10])
        let result = try VerifyQuery.verify(
            store, location: location,
            options: VerifyOptions(variable: Variables.hourlyVariable(named: "wind_direction_10m")!))
        #expect(result.rows.first?.scores.bias == -20)
    }

    @Test("trend --every day averages per local day and weights the running bias by hours")
    func trendDaily() throws {
        let store = try temporaryStore()
        let location = try store.addLocation(
            name: "D", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        let start = t0 / 86400 * 86400  // midnight UTC
        // One run, lead 24 h at every hour of the second day and two hours of the third.
        let times = (24..<50).map { start + Int64($0) * hour }
        try storeRun(store, location, issuedAt: start, times: times, ["temperature_2m": times.map { _ in 5 }])
        for t in times { try observe(store, location, "station", t, ["temperature_2m": t < start + 48 * hour ? 4 : 2]) }
        let hourly = try TrendQuery.trend(
            store, location: location, options: TrendOptions(variable: temperature, leadHours: 24, toleranceHours: 30))
        #expect(hourly.points.count == 26)
        let daily = try TrendQuery.trend(
            store, location: location,
            options: TrendOptions(variable: temperature, leadHours: 24, toleranceHours: 30, every: .day))
        #expect(daily.points.map(\.hours) == [24, 2])
        #expect(daily.points.map(\.error) == [1, 3])
        // (24·1 + 2·3) / 26
        #expect(abs(daily.points[1].runningBias - 30.0 / 26) < 1e-12)
    }

    @Test("errors name what is missing")
    func errors() throws {
        let store = try temporaryStore()
        let location = try store.addLocation(
            name: "New York", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        #expect(throws: QueryError.noRuns(location: "New York", model: nil)) {
            _ = try RunsQuery.runs(store, location: location)
        }
        #expect(
            QueryError.noRuns(location: "New York", model: nil).description.contains(
                "wxdb ingest --location \"New York\""))
        try storeRun(store, location, issuedAt: t0, times: [t0], ["temperature_2m": [1]])
        #expect(throws: QueryError.noObservations(location: "New York", source: nil, available: [])) {
            _ = try VerifyQuery.verify(store, location: location, options: VerifyOptions(variable: temperature))
        }
        #expect(throws: QueryError.self) {
            _ = try VerifyQuery.verify(
                store, location: location,
                options: VerifyOptions(variable: Variables.hourlyVariable(named: "weather_code")!))
        }
    }
}
