import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxStore

@testable import WxPostgresStore

// Migration 0006 keeps a run's values in float4 only when every one of them reads back as the same
// double: these tests hold wxdb's test (Float4.keeps) to the server's trip, and show where runs go
// and that what is read back is what was stored, bit for bit.

/// Values of the kinds a forecast holds and the edges: decimals of 1-3 places, whole numbers,
/// floats widened, sums and unit conversions, ±0, tiny and huge magnitudes.
private func sampleValues(count: Int) -> [Double] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> UInt64 {
        state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
        return state >> 11
    }
    func unit() -> Double { Double(next() % 1_000_000_007) / 1_000_000_007 }
    var values: [Double] = [
        0, -0.0, 0.1 + 0.2, 21.3, -40, 1013.2, 87, 0.5, 1e-30, -1e-30, 1e30, 1e-29, 123_456.7, 16_777_217,
        0.30000001192092896, Double(Float(0.1)), 1234.567, 99.99, -0.001, 5e-8
    ]
    while values.count < count {
        let scale = [1.0, 10, 100, 1000][Int(next() % 4)]
        let magnitude = [0.01, 1, 100, 10_000, 1e6][Int(next() % 5)]
        let sign: Double = next() % 2 == 0 ? 1 : -1
        switch next() % 6 {
        case 0, 1: values.append(sign * (unit() * magnitude * scale).rounded() / scale)  // 0-3 decimals
        case 2: values.append(Double(Float(sign * unit() * magnitude)))  // a float widened
        case 3: values.append((sign * (unit() * 200).rounded() / 10 - 32) * 5 / 9)  // °F → °C
        case 4: values.append(sign * unit() * magnitude)  // any double
        default:
            // Tiny and huge magnitudes inside float4's range.
            values.append(sign * unit() * pow(10, Double(Int(next() % 57)) - 28))
        }
    }
    return values
}

@Suite(
    "PostgreSQL engine: run values in float4 when they read back exactly (migration 0006)",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct Float4ValuesTests {
    @Test("wxdb's exactness test agrees with the server's float4 trip on thousands of values")
    func serverAgrees() throws {
        let (engine, _) = try freshEngine()
        let values = sampleValues(count: 20_000)
        let array = "{" + values.map { "\($0)" }.joined(separator: ",") + "}"
        let back = try engine.db.rows(
            "SELECT (v::real)::text::float8 FROM unnest($1::float8[]) WITH ORDINALITY AS t(v, n) ORDER BY n",
            [.text(array)]
        ) { $0.double(0) }
        #expect(back.count == values.count)
        var kept = 0
        var disagree: [String] = []
        for (value, read) in zip(values, back) {
            let survives = read.bitPattern == value.bitPattern
            if Float4.keeps(value) != survives { disagree.append("\(value) → \(read)") }
            if survives { kept += 1 }
        }
        #expect(disagree.isEmpty, "\(disagree.count) differ: \(disagree.prefix(10))")
        #expect(kept > 1000 && kept < values.count - 1000, "both kinds are tried: \(kept) of \(values.count) kept")
        // Outside float4's range (or where the cast would fail) nothing goes to float4.
        for value in [1e31, -1e300, 1e-31, 5e-324, Double.infinity, Double.nan] { #expect(!Float4.keeps(value)) }
        #expect(Float4.keeps(-0.0) && Float4.keeps(21.3) && !Float4.keeps(0.1 + 0.2))
    }

    @Test(
        "a run of exact values goes to the float4 tables, a run with 0.1 + 0.2 to the double ones; both read back bit for bit"
    )
    func whereRunsGo() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "GMT", models: [], now: 0)
        let exact = try syntheticResponse(models: ["best_match"], start: t0, hours: 48, seed: 1, current: t0)
        _ = try engine.store(exact, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        var inexact = try syntheticResponse(
            models: ["best_match"], start: t0 + 6 * hour, hours: 48, seed: 2, current: t0)
        let temperature = Variables.hourlyNames.firstIndex(of: "temperature_2m")!
        inexact.models[0].hourly[temperature]![5] = 0.1 + 0.2
        _ = try engine.store(inexact, for: berlin, fetch: FetchRecord(fetchedAt: t0 + 6 * hour, origin: .fetch))
        let runs = try engine.db.rows("SELECT id FROM forecast_runs ORDER BY id") { $0.int64(0) }
        #expect(runs.count == 2)
        func rows(_ table: String, _ run: Int64) throws -> Int64 {
            try engine.db.scalarInt(
                "SELECT count(*) FROM " + table + " WHERE location_id = $1 AND run_id = $2",
                [.integer(berlin.id), .integer(run)]) ?? -1
        }
        #expect(try rows("hourly_forecasts_f4", runs[0]) == 48 && rows("hourly_forecasts_f8", runs[0]) == 0)
        #expect(try rows("hourly_forecasts_f4", runs[1]) == 0 && rows("hourly_forecasts_f8", runs[1]) == 48)
        for (run, response) in zip(runs, [exact, inexact]) {
            let forecast = response.models[0]
            let stored = try engine.db.rows(
                "SELECT " + Variables.hourlyNames.joined(separator: ", ")
                    + " FROM hourly_forecasts WHERE location_id = $1 AND run_id = $2 ORDER BY valid_time",
                [.integer(berlin.id), .integer(run)]
            ) { row in Variables.hourly.indices.map { row.optionalDouble($0)?.bitPattern } }
            let given = forecast.hourlyTimes.indices.map { row in
                forecast.hourly.map { ($0?[row] ?? nil)?.bitPattern }
            }
            #expect(stored == given, "run \(run)")
        }
        #expect(
            try engine.db.scalarInt(
                "SELECT count(*) FROM hourly_forecasts WHERE temperature_2m = 0.30000000000000004::float8") == 1)
    }

    @Test("the window match reads a run's row at the forecast's first hour as the views give it, from either table")
    func windowMatchRows() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "GMT", models: [], now: 0)
        let exact = try syntheticResponse(models: ["best_match"], start: t0, hours: 48, seed: 1, current: t0)
        _ = try engine.store(exact, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        var inexact = try syntheticResponse(
            models: ["best_match"], start: t0 + 6 * hour, hours: 48, seed: 2, current: t0)
        let temperature = Variables.hourlyNames.firstIndex(of: "temperature_2m")!
        inexact.models[0].hourly[temperature]![0] = 0.1 + 0.2
        inexact.models[0].hourly[temperature]![7] = 0.1 + 0.2
        _ = try engine.store(inexact, for: berlin, fetch: FetchRecord(fetchedAt: t0 + 6 * hour, origin: .fetch))
        let runs = try engine.db.rows("SELECT id, first_valid_time FROM forecast_runs ORDER BY id") {
            (id: $0.int64(0), first: $0.int64(1))
        }
        #expect(runs.map(\.first) == [t0, t0 + 6 * hour])
        // A forecast from t0 + 3 h reads the float4 run at t0 + 3 h and the double run at its own
        // first hour; one from t0 + 13 h reads both at t0 + 13 h.
        for first in [t0 + 3 * hour, t0 + 13 * hour] {
            let candidates = try engine.db.rows(
                PostgresEngine.candidateRunsSQL,
                [
                    .integer(berlin.id), .text("best_match"), .integer(first + 47 * hour), .integer(first),
                    .integer(PostgresEngine.matchWindow)
                ]
            ) { row in
                (
                    id: row.int64(0), time: row.optionalInt64(2),
                    values: Variables.hourly.indices.map { row.optionalDouble($0 + 3)?.bitPattern }
                )
            }
            #expect(candidates.count == 2)
            for candidate in candidates {
                let viewed = try engine.db.firstRow(
                    "SELECT valid_time, " + Variables.hourlyNames.joined(separator: ", ")
                        + " FROM hourly_forecasts WHERE location_id = $1 AND run_id = $2 AND valid_time = $3",
                    [.integer(berlin.id), .integer(candidate.id), .integer(candidate.time ?? -1)]
                ) { row in Variables.hourly.indices.map { row.optionalDouble($0 + 1)?.bitPattern } }
                let runFirst = runs.first { $0.id == candidate.id }?.first ?? -1
                #expect(candidate.time == max(first, runFirst))
                #expect(viewed != nil && candidate.values == viewed, "run \(candidate.id) from \(first)")
            }
        }
        #expect(
            try engine.db.scalarInt(
                "SELECT count(*) FROM hourly_forecasts WHERE temperature_2m = 0.30000000000000004::float8") == 2)
    }

    @Test(
        "migrating a database with rows moves the runs float4 keeps exactly and leaves the others; every value reads the same"
    )
    func migrationMovesExactRuns() throws {
        let server = try PostgresServer.shared()
        let db = try PostgresConnection(conninfo: server.conninfo(database: try server.createDatabase("f4")))
        let before = PostgresSchema.migrations.filter { $0.name < "0006" }
        try PostgresSchema.migrate(db, now: 0, migrations: before)
        try db.execute(
            """
            INSERT INTO locations (id, name, latitude, longitude, created_at) VALUES (1, 'a', 1, 1, 0), (2, 'b', 2, 2, 0);
            INSERT INTO forecast_runs (location_id, id, model, issued_at, issued_at_source, fetched_at, utc_offset_seconds, timezone, content_hash)
                VALUES (1, 1, 'm', 0, 'model_run', 0, 0, 'GMT', 1), (1, 2, 'm', 0, 'model_run', 0, 0, 'GMT', 2),
                       (2, 1, 'm', 0, 'model_run', 0, 0, 'GMT', 3);
            INSERT INTO hourly_forecasts (location_id, run_id, valid_time, temperature_2m, pressure_msl) VALUES
                (1, 1, 3600, 21.3, 1013.2), (1, 1, 7200, -0.0, NULL),
                (1, 2, 3600, 0.30000000000000004, 1000), (1, 2, 7200, 1, 2),
                (2, 1, 3600, 1234.567, 1e29);
            INSERT INTO daily_forecasts (location_id, run_id, date, temperature_2m_max, sunrise) VALUES
                (1, 1, '2026-01-01', 12.5, 1700000000), (2, 1, '2026-01-01', 1e35, 1700000001);
            """)
        let read =
            "SELECT location_id, run_id, valid_time, temperature_2m, pressure_msl FROM hourly_forecasts ORDER BY 1, 2, 3"
        func snapshot() throws -> [[String]] {
            try db.rows(read) { row in
                [row.string(0), row.string(1), row.string(2)]
                    + [3, 4].map { row.optionalDouble($0).map { String($0.bitPattern) } ?? "null" }
            }
                + db.rows(
                    "SELECT location_id, run_id, date, temperature_2m_max, sunrise FROM daily_forecasts ORDER BY 1, 2"
                ) {
                    row in
                    [row.string(0), row.string(1), row.string(2), String(row.double(3).bitPattern), row.string(4)]
                }
        }
        let old = try snapshot()
        try PostgresSchema.migrate(db, now: 0)
        #expect(try snapshot() == old)
        let f4 = try db.rows("SELECT DISTINCT location_id || '/' || run_id FROM hourly_forecasts_f4 ORDER BY 1") {
            $0.string(0)
        }
        let f8 = try db.rows("SELECT DISTINCT location_id || '/' || run_id FROM hourly_forecasts_f8 ORDER BY 1") {
            $0.string(0)
        }
        // 1/2 holds 0.1 + 0.2; 2/1's daily 1e35 is outside float4's range.
        #expect(f4 == ["1/1"] && f8 == ["1/2", "2/1"])
        #expect(try db.scalarInt("SELECT count(*) FROM daily_forecasts_f4") == 1)
        #expect(try db.scalarInt("SELECT count(*) FROM hourly_forecasts_with_lead") == 5, "the views read both tables")
    }
}
