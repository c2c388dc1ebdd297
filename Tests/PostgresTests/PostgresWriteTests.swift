import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxSQLite
import WxStore
import WxStoreSQLite

@testable import WxPostgresStore

/// A response of `models` (suffixed when several) with hourly temperature, precipitation, its
/// probability, wind speed and direction from `start` for `hours` hours, values varied by `seed`,
/// and a `current` block at `current`.
func syntheticResponse(models: [String], start: Int64, hours: Int, seed: Int, current: Int64) throws
    -> ForecastResponse
{
    let variables = [
        ("temperature_2m", "°C"), ("precipitation", "mm"), ("precipitation_probability", "%"),
        ("wind_speed_10m", "km/h"), ("wind_direction_10m", "°")
    ]
    func value(_ variable: Int, _ model: Int, _ hour: Int) -> Double {
        let x = Double((hour * 7 + variable * 13 + model * 5 + seed * 11) % 37)
        switch variables[variable].0 {
        case "precipitation": return x < 20 ? 0 : (x - 20) / 4
        case "precipitation_probability": return (x * 2.5).rounded()
        case "wind_direction_10m": return (x * 9.7 + 350).truncatingRemainder(dividingBy: 360).rounded()
        default: return x / 2 - 4
        }
    }
    var hourly: [String: Any] = ["time": (0..<hours).map { start + Int64($0) * 3600 }]
    var units: [String: String] = ["time": "unixtime"]
    for (m, model) in models.enumerated() {
        for (v, (name, unit)) in variables.enumerated() {
            let key = models.count > 1 ? "\(name)_\(model)" : name
            hourly[key] = (0..<hours).map { value(v, m, $0) }
            units[key] = unit
        }
    }
    let json: [String: Any] = [
        "latitude": 52.52, "longitude": 13.41, "elevation": 34.0, "utc_offset_seconds": 3600,
        "timezone": "Europe/Berlin", "timezone_abbreviation": "CET", "hourly_units": units, "hourly": hourly,
        "current_units": ["time": "unixtime", "interval": "seconds", "temperature_2m": "°C", "wind_speed_10m": "km/h"],
        "current": ["time": current, "interval": 900, "temperature_2m": Double(seed % 5) + 1.5, "wind_speed_10m": 7.0]
    ]
    // Sorted keys: the models come in one order every time (the first is the current block's).
    let body = try JSONSerialization.data(withJSONObject: json, options: .sortedKeys)
    return try ForecastDecoder.decodeSingle(Array(body), defaultModel: models[0])
}

/// One kept-sums row, keyed as the table is, with its counts and sums.
struct KeptRow: Equatable {
    var key: String
    var values: [Double?]
}

/// The columns both engines' verification_summaries hold, in one order.
let keptColumns = SummarySums.columns.map(\.name) + ["lead_to_h", "valid_to", "first_valid_time", "last_valid_time"]
let keptKey =
    "model || '|' || source || '|' || variable || '|' || lead_from_h || '|' || valid_date || '|' || valid_from"

func keptRows(_ engine: PostgresEngine) throws -> [KeptRow] {
    try engine.db.rows(
        "SELECT \(keptKey), " + keptColumns.joined(separator: ", ") + " FROM verification_summaries ORDER BY 1", []
    ) { row in KeptRow(key: row.string(0), values: keptColumns.indices.map { row.optionalDouble($0 + 1) }) }
}

func keptRows(sqlite path: String) throws -> [KeptRow] {
    try SQLiteBackdoor(path).db.rows(
        "SELECT \(keptKey), " + keptColumns.joined(separator: ", ") + " FROM verification_summaries ORDER BY 1", []
    ) { row in KeptRow(key: row.string(0), values: keptColumns.indices.map { row.optionalDouble($0 + 1) }) }
}

/// The rows that differ: counts exactly, sums to 1e-9 of their size (a recount adds the pairs in
/// another order than the writes did), or, `exact`, bit for bit (both engines' writes fold the
/// same pairs in the same order).
func differences(_ a: [KeptRow], _ b: [KeptRow], exact: Bool = false) -> [String] {
    var out: [String] = []
    let left = Dictionary(uniqueKeysWithValues: a.map { ($0.key, $0.values) })
    let right = Dictionary(uniqueKeysWithValues: b.map { ($0.key, $0.values) })
    for key in Set(left.keys).union(right.keys).sorted() {
        guard let x = left[key], let y = right[key] else {
            out.append("\(key): only in \(left[key] == nil ? "second" : "first")")
            continue
        }
        for (index, (p, q)) in zip(x, y).enumerated() {
            let same: Bool
            switch (p, q) {
            case (nil, nil): same = true
            case (let p?, let q?):
                same = exact ? p.bitPattern == q.bitPattern : abs(p - q) <= 1e-9 * max(1, abs(p), abs(q))
            default: same = false
            }
            if !same {
                out.append("\(key) \(keptColumns[index]): \(String(describing: p)) vs \(String(describing: q))")
            }
        }
    }
    return out
}

/// The PostgreSQL engine's kept sums recomputed from every stored pair of the location.
func recomputed(_ engine: PostgresEngine, location: Int64) throws -> [KeptRow] {
    var delta = SumsDelta()
    try engine.collectSums(.location(location), location: location, into: &delta)
    return delta.groups.map { key, group in
        let values = group.sums.values
        return KeptRow(
            key: "\(key.model)|\(key.source)|\(key.variable)|\(key.leadFrom)|\(key.validDate)|\(key.validFrom)",
            values: values + [
                Double(key.leadTo), Double(key.validTo), group.firstValid.map(Double.init),
                group.lastValid.map(Double.init)
            ])
    }.sorted { $0.key < $1.key }
}

let hour: Int64 = 3600
let t0: Int64 = 1_700_000_000 - 1_700_000_000 % 3600

/// The writes both engines are given, in order (each a Store call a command makes).
func sameWrites(_ store: any Store, location: Location) throws {
    let models = ["best_match", "gfs_seamless"]
    let a = try syntheticResponse(models: models, start: t0 - 24 * hour, hours: 96, seed: 1, current: t0)
    let b = try syntheticResponse(models: models, start: t0 - 18 * hour, hours: 96, seed: 2, current: t0 + 6 * hour)
    // era5 over the whole window: every run pairs with it.
    var era5 = ModelForecast(model: "era5")
    let truth = try syntheticResponse(models: ["era5"], start: t0 - 30 * hour, hours: 120, seed: 3, current: t0)
    era5 = truth.models[0]
    _ = try store.saveObservations(
        era5, through: t0 + 48 * hour, locationID: location.id, source: "era5", recordedAt: t0)
    _ = try store.store(a, for: location, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
    _ = try store.store(b, for: location, fetch: FetchRecord(fetchedAt: t0 + 6 * hour, origin: .fetch))
    // A later era5 with other values for some hours (a correction), and more hours.
    let corrected = try syntheticResponse(models: ["era5"], start: t0 + 10 * hour, hours: 60, seed: 4, current: t0)
    _ = try store.upsertObservations(
        corrected.models[0], through: .max, locationID: location.id, source: "era5", recordedAt: t0 + hour)
    // The first response again, imported with an earlier fetch time: its run's leads move.
    _ = try store.storeAll([a], for: location, make: { ($0, FetchRecord(fetchedAt: t0 - hour, origin: .import)) }) {
        _, _ in
    }
    // Two later responses in one storeAll chunk: their analysis hours' sums are kept once over the
    // chunk's span (SQLite's `enclosingWriteKeeps`), then each run's own.
    let c = try syntheticResponse(models: models, start: t0 - 12 * hour, hours: 96, seed: 5, current: t0 + 12 * hour)
    let d = try syntheticResponse(models: models, start: t0 - 6 * hour, hours: 96, seed: 6, current: t0 + 18 * hour)
    _ = try store.storeAll(
        [(c, t0 + 12 * hour), (d, t0 + 18 * hour)], for: location,
        make: {
            ($0.0, FetchRecord(fetchedAt: $0.1, origin: .fetch))
        }
    ) { _, _ in }
    // One station hour replaced, then the zone changed: every pair moves to other days.
    try store.upsertObservation(
        locationID: location.id, source: "era5", time: t0 + 12 * hour, values: Variables.hourly.map { _ in 1.0 },
        recordedAt: t0, replacing: true)
    _ = try store.updateLocation(named: location.name, timezone: "America/New_York", models: nil)
}

@Suite(
    "PostgreSQL engine: writes keep the sums as SQLite's do",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresWriteTests {
    @Test(
        "the same writes give the same kept sums in both engines, bit for bit, and PostgreSQL's equal its pairs' sums"
    )
    func sameSumsAsSQLite() throws {
        let (engine, _) = try freshEngine()
        let path = Scratch.path("pg-compare", suffix: ".sqlite")
        let sqlite = try SQLiteStore.open(path: path)
        for store in [engine as any Store, sqlite as any Store] {
            let berlin = try store.addLocation(
                name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin",
                models: [], now: 0)
            try sameWrites(store, location: berlin)
        }
        let kept = try keptRows(engine)
        #expect(kept.count > 100, "too few groups to compare: \(kept.count)")
        let diff0 = differences(kept, try keptRows(sqlite: path), exact: true)
        #expect(diff0.isEmpty, "\(diff0.count) differ: \(diff0.prefix(12))")
        let diff1 = differences(kept, try recomputed(engine, location: 1))
        #expect(diff1.isEmpty, "\(diff1.count) differ: \(diff1.prefix(12))")
        // The same runs, observations and fetch log.
        for table in ["forecast_runs", "hourly_forecasts", "daily_forecasts", "observations", "fetch_log"] {
            #expect(
                try engine.db.scalarInt("SELECT count(*) FROM " + table)
                    == SQLiteBackdoor(path).scalar("SELECT count(*) FROM " + table), "\(table)")
        }
    }

    @Test("a run seen again through a moved window continues the stored run, as on SQLite")
    func windowMatch() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "GMT", models: [], now: 0)
        let whole = try syntheticResponse(models: ["icon_seamless"], start: t0, hours: 72, seed: 5, current: t0)
        var cut = whole
        cut.models[0].hourlyTimes = Array(whole.models[0].hourlyTimes.dropFirst(24))
        cut.models[0].hourly = whole.models[0].hourly.map { $0.map { Array($0.dropFirst(24)) } }
        var later = whole
        later.models[0].hourlyTimes = whole.models[0].hourlyTimes + [t0 + 72 * hour]
        later.models[0].hourly = whole.models[0].hourly.map { $0.map { $0 + [$0.last ?? nil] } }
        let fetch = FetchRecord(fetchedAt: t0, origin: .fetch, recordAnalysis: false)
        let first = try engine.store(cut, for: berlin, fetch: fetch)
        let second = try engine.store(whole, for: berlin, fetch: fetch)
        let third = try engine.store(later, for: berlin, fetch: fetch)
        #expect(first.map(\.kind) == [.stored])
        #expect(second.map(\.kind) == [.repeated] && second[0].continued && second[0].addedHours == 24)
        #expect(third.map(\.kind) == [.repeated] && third[0].addedHours == 1)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == 1)
        #expect(try engine.db.scalarInt("SELECT hour_count FROM forecast_runs") == 73)
    }

    @Test("four processes storing and observing one location at once: one run per model run, sums equal the pairs'")
    func concurrentWriters() async throws {
        let (engine, conninfo) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        let models = ["best_match", "gfs_seamless"]
        let responses = try (0..<4).map {
            try syntheticResponse(
                models: models, start: t0 - 24 * hour + Int64($0 % 2) * 6 * hour, hours: 96, seed: $0 % 2,
                current: t0 + Int64($0 % 2) * 6 * hour)
        }
        let truth = try syntheticResponse(models: ["era5"], start: t0 - 30 * hour, hours: 120, seed: 3, current: t0)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<4 {
                group.addTask {
                    let mine = try PostgresEngine(conninfo: conninfo, now: 0)
                    if index == 3 {
                        _ = try mine.saveObservations(
                            truth.models[0], through: .max, locationID: berlin.id, source: "era5", recordedAt: t0)
                    }
                    _ = try mine.store(
                        responses[index], for: berlin,
                        fetch: FetchRecord(fetchedAt: t0 + Int64(index % 2) * 6 * hour, origin: .fetch))
                }
            }
            try await group.waitForAll()
        }
        // Two distinct responses of two models: four runs, the other two stores repeats.
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == 4)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM fetch_log") == 8)
        let kept = try keptRows(engine)
        #expect(!kept.isEmpty)
        let diff2 = differences(kept, try recomputed(engine, location: berlin.id))
        #expect(diff2.isEmpty, "\(diff2.count) differ: \(diff2.prefix(12))")
    }

    @Test("locations: update, remove with and without purge, isStillSaved, auto zone adopted")
    func locations() throws {
        let (engine, _) = try freshEngine()
        let auto = try engine.addLocation(
            name: "Auto", latitude: 52.52, longitude: 13.41, elevation: nil, timezone: "auto", models: [], now: 0)
        #expect(try engine.isStillSaved(auto))
        #expect(try engine.requireLocation(named: "Auto") == auto)
        #expect(throws: LocationError.unknown("auto")) { try engine.requireLocation(named: "auto") }
        let response = try syntheticResponse(models: ["best_match"], start: t0, hours: 24, seed: 1, current: t0)
        _ = try engine.store(response, for: auto, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        #expect(try engine.location(id: auto.id)?.timezone == "Europe/Berlin")
        let moved = try engine.updateLocation(named: "Auto", timezone: "GMT", models: ["icon_seamless"])
        #expect(moved.timezone == "GMT" && moved.models == ["icon_seamless"])
        #expect(throws: StoreError.self) { try engine.removeLocation(named: "Auto", purge: false) }
        #expect(try engine.locationsByID(only: nil).map(\.name) == ["Auto"])
        let removed = try engine.removeLocation(named: "Auto", purge: true)
        #expect(removed.runs == 1 && removed.observations > 0)
        #expect(try !engine.isStillSaved(auto))
        for table in ["forecast_runs", "hourly_forecasts", "observations", "fetch_log", "verification_summaries"] {
            #expect(try engine.db.scalarInt("SELECT count(*) FROM " + table) == 0, "\(table)")
        }
        #expect(throws: StoreError.self) {
            try engine.store(response, for: auto, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        }
    }

    @Test("failures are logged with their error, in a transaction of their own; prune keeps the sums")
    func fetchLogAndPrune() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "GMT", models: [], now: 0)
        try engine.logFailures(
            FetchRecord(fetchedAt: t0, origin: .fetch, httpStatus: 500),
            for: [(berlin.id, "best_match"), (nil, nil), (99, "gone")], error: "server said \u{1b}[31mno")
        #expect(
            try engine.db.rows("SELECT location_id, outcome, error FROM fetch_log ORDER BY location_id", []) {
                "\($0.int64(0)) \($0.string(1)) \($0.string(2))"
            } == ["0", "1"].map { "\($0) failed " + "server said \u{1b}[31mno".escapingControls() })
        let era5 = try syntheticResponse(models: ["era5"], start: t0 - 30 * hour, hours: 200, seed: 3, current: t0)
        _ = try engine.saveObservations(
            era5.models[0], through: .max, locationID: berlin.id, source: "era5", recordedAt: t0)
        for index in 0..<3 {
            let response = try syntheticResponse(
                models: ["best_match"], start: t0 + Int64(index) * 6 * hour, hours: 48, seed: index, current: t0)
            _ = try engine.store(
                response, for: berlin, fetch: FetchRecord(fetchedAt: t0 + Int64(index) * 6 * hour, origin: .fetch))
        }
        let before = try keptRows(engine)
        let batch = try #require(try engine.pruneBatch(issuedBefore: t0 + 100 * hour, now: t0, limit: 10))
        #expect(batch.runs == 2 && batch.hourlyRows == 96)
        #expect(try engine.pruneBatch(issuedBefore: t0 + 100 * hour, now: t0, limit: 10) == nil)
        #expect(try keptRows(engine) == before)
    }
}
