import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxSQLite
import WxStore
import WxStoreSQLite

@testable import WxPostgresStore

/// Counts the INSERT statements the server runs on `tables` (a statement-level trigger each), so a
/// test can see how many round trips a write takes without timing it.
func countInsertStatements(_ engine: PostgresEngine, on tables: [String]) throws {
    try engine.db.execute(
        """
        CREATE TABLE statement_counts (tbl text PRIMARY KEY, n bigint NOT NULL);
        CREATE FUNCTION count_statement() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            INSERT INTO statement_counts VALUES (TG_TABLE_NAME, 1)
            ON CONFLICT (tbl) DO UPDATE SET n = statement_counts.n + 1;
            RETURN NULL;
        END $$;
        """)
    for table in tables {
        try engine.db.execute(
            "CREATE TRIGGER count_inserts AFTER INSERT ON " + table
                + " FOR EACH STATEMENT EXECUTE FUNCTION count_statement()")
    }
}

/// The INSERT statements counted on `table` since the last call (and resets the count).
func insertStatements(_ engine: PostgresEngine, _ table: String) throws -> Int64 {
    let n = try engine.db.scalarInt("SELECT n FROM statement_counts WHERE tbl = $1", [.text(table)]) ?? 0
    try engine.db.run("DELETE FROM statement_counts WHERE tbl = $1", [.text(table)])
    return n
}

@Suite(
    "PostgreSQL engine: writes go in few statements",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresWriteBatchTests {
    @Test("a run's sums groups and an observation series each go in one statement, not one per group or hour")
    func fewStatements() throws {
        let (engine, _) = try freshEngine()
        try countInsertStatements(engine, on: ["verification_summaries", "observations"])
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        let truth = try syntheticResponse(models: ["era5"], start: t0 - 30 * hour, hours: 120, seed: 3, current: t0)
        let written = try engine.saveObservations(
            truth.models[0], through: .max, locationID: berlin.id, source: "era5", recordedAt: t0)
        #expect(written == 120)
        #expect(try insertStatements(engine, "observations") == 1, "120 hours of era5")
        #expect(try engine.db.scalarInt("SELECT count(*) FROM observations") == 120)

        // Two models of 96 hours, each pairing with era5 over 72 hours: hundreds of sums groups.
        let response = try syntheticResponse(
            models: ["best_match", "gfs_seamless"], start: t0 - 24 * hour, hours: 96, seed: 1, current: t0)
        _ = try engine.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        let groups = try engine.db.scalarInt("SELECT count(*) FROM verification_summaries") ?? 0
        #expect(groups > 50, "too few groups to count: \(groups)")
        // Each run's own sums; each model's analysis hours and the current block keep theirs.
        let sums = try insertStatements(engine, "verification_summaries")
        #expect(sums <= 8, "\(sums) statements for \(groups) groups")
        // The current block (one hour) and each model's 25 past hours as its own analysis source.
        let observed = try insertStatements(engine, "observations")
        #expect(observed == 3, "\(observed) statements")
        let diff = differences(try keptRows(engine), try recomputed(engine, location: berlin.id))
        #expect(diff.isEmpty, "\(diff.count) differ: \(diff.prefix(12))")
    }

    @Test("an ensemble run's sums groups, and an observation write's changes to them, go in one statement each")
    func ensembleSumsFewStatements() throws {
        let (engine, _) = try freshEngine()
        try countInsertStatements(engine, on: ["ensemble_summaries"])
        let bern = try engine.addLocation(
            name: "Bern", latitude: 46.95, longitude: 7.45, elevation: nil, timezone: "Europe/Zurich",
            models: ["icon_d2_eps"], now: 0)
        let truth = try syntheticResponse(models: ["era5"], start: t0 - 24 * hour, hours: 96, seed: 3, current: t0)
        _ = try engine.saveObservations(
            truth.models[0], through: .max, locationID: bern.id, source: "era5", recordedAt: t0)
        // 20 members over 48 hours from the issue time on, every 3rd hour of one member missing.
        let times = (0..<48).map { t0 + Int64($0) * hour }
        let values: [[[Double]]?] = EnsembleModels.variables.indices.map { v in
            (0..<20).map { m in
                times.indices.map { h in m == 3 && h % 3 == 0 ? .nan : Double(v) + sin(Double(h) / 7 + Double(m)) * 2 }
            }
        }
        let run = EnsembleForecast(model: "icon_d2_eps", hourlyTimes: times, values: values)
        let outcome = try engine.storeEnsemble(
            run, grid: (46.95, 7.45, nil), for: bern, issuedAt: t0, fetchedAt: t0 + hour)
        #expect(outcome == .stored(runID: 1))
        let groups = try engine.db.scalarInt("SELECT count(*) FROM ensemble_summaries") ?? 0
        #expect(groups > 10, "too few groups to count: \(groups)")
        #expect(try insertStatements(engine, "ensemble_summaries") == 1, "\(groups) groups")
        // A correction of 20 era5 hours re-pairs the members there: their groups change together.
        let corrected = try syntheticResponse(models: ["era5"], start: t0 + 10 * hour, hours: 20, seed: 4, current: t0)
        _ = try engine.upsertObservations(
            corrected.models[0], through: .max, locationID: bern.id, source: "era5", recordedAt: t0 + 2 * hour)
        #expect(try insertStatements(engine, "ensemble_summaries") == 1)
        let check = try engine.checkEnsembleSums()
        #expect(check.checked > 10 && check.differing.isEmpty, "\(check)")
    }

    @Test("a new run's content hash goes in the statement that stores the run, not one of its own")
    func hashWithRun() throws {
        let (engine, _) = try freshEngine()
        // The statement each insert into run_content_hashes came in (a statement-level trigger's current_query()).
        try engine.db.execute(
            """
            CREATE TABLE hash_statements (query text NOT NULL);
            CREATE FUNCTION record_statement() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO hash_statements VALUES (current_query());
                RETURN NULL;
            END $$;
            CREATE TRIGGER record_hashes AFTER INSERT ON run_content_hashes
                FOR EACH STATEMENT EXECUTE FUNCTION record_statement();
            """)
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        let response = try syntheticResponse(
            models: ["best_match", "gfs_seamless"], start: t0 - 24 * hour, hours: 96, seed: 1, current: t0)
        let outcomes = try engine.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        #expect(outcomes.map(\.kind) == [.stored, .stored])
        let stored = try engine.db.scalarInt(
            "SELECT count(*) FROM run_content_hashes h JOIN forecast_runs r ON r.location_id = h.location_id"
                + " AND r.id = h.run_id AND r.content_hash = h.content_hash AND r.model = h.model")
        #expect(stored == 2, "each run's own hash")
        let queries = try engine.db.rows("SELECT query FROM hash_statements") { $0.string(0) }
        #expect(queries.count == 2)
        #expect(queries.allSatisfy { $0.contains("INSERT INTO forecast_runs") }, "\(queries)")
        // The same bytes again are a repeat of those runs: no new run, no new hash.
        let again = try engine.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0 + hour, origin: .fetch))
        #expect(again.map(\.kind) == [.repeated, .repeated])
        #expect(try engine.db.scalarInt("SELECT count(*) FROM run_content_hashes") == 2)
    }

    @Test("observation batches: an hour given twice, an older recording, more hours than one statement takes")
    func observationBatches() throws {
        let (engine, _) = try freshEngine()
        let path = Scratch.path("pg-batch", suffix: ".sqlite")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let sqlite = try SQLiteStore.open(path: path)
        let hours = PostgresEngine.observationRowsPerStatement + 500
        for store in [engine as any Store, sqlite as any Store] {
            let berlin = try store.addLocation(
                name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin",
                models: [], now: 0)
            let long = try syntheticResponse(
                models: ["era5"], start: t0 - Int64(hours) * hour, hours: hours, seed: 3, current: t0)
            _ = try store.saveObservations(
                long.models[0], through: .max, locationID: berlin.id, source: "era5", recordedAt: t0)
            // A run pairing with the last day, then a series with one hour twice (the later wins).
            let run = try syntheticResponse(
                models: ["best_match"], start: t0 - 48 * hour, hours: 72, seed: 1, current: t0)
            _ = try store.store(
                run, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch, recordAnalysis: false))
            var twice = try syntheticResponse(
                models: ["era5"], start: t0 - 10 * hour, hours: 6, seed: 7, current: t0
            ).models[0]
            twice.hourlyTimes.append(twice.hourlyTimes[2])
            twice.hourly = twice.hourly.map { column in column.map { $0 + [($0[2] ?? 0) + 1] } }
            _ = try store.upsertObservations(
                twice, through: .max, locationID: berlin.id, source: "era5", recordedAt: t0 + hour)
            // An older recording changes nothing.
            let older = try syntheticResponse(
                models: ["era5"], start: t0 - 20 * hour, hours: 6, seed: 9, current: t0
            ).models[0]
            _ = try store.upsertObservations(
                older, through: .max, locationID: berlin.id, source: "era5", recordedAt: t0 - hour)
        }
        let columns = "source, time, " + Variables.hourlyNames.joined(separator: ", ") + ", recorded_at"
        let pg = try engine.db.rows("SELECT " + columns + " FROM observations ORDER BY time, source") { row in
            (0..<(Variables.hourly.count + 3)).map { index in
                if index == 0 { return row.string(0) }
                if index == 1 || index == Variables.hourly.count + 2 { return String(row.int64(index)) }
                return row.optionalDouble(index).map { PostgresValue.real($0).text! } ?? "NULL"
            }.joined(separator: "|")
        }
        let lite = try SQLiteBackdoor(path).db.rows(
            "SELECT " + columns + " FROM observations ORDER BY time, source", []
        ) { row in
            (0..<(Variables.hourly.count + 3)).map { index in
                if index == 0 { return row.string(0) }
                if index == 1 || index == Variables.hourly.count + 2 { return String(row.int64(index)) }
                return row.optionalDouble(index).map { PostgresValue.real($0).text! } ?? "NULL"
            }.joined(separator: "|")
        }
        #expect(pg.count == hours + 1)
        #expect(pg == lite)
        let diff = differences(try keptRows(engine), try keptRows(sqlite: path), exact: true)
        #expect(diff.isEmpty, "\(diff.count) differ: \(diff.prefix(12))")
    }

    @Test("binary COPY stores each bigint, double and text as given, NULLs as NULL; a NUL byte stores nothing")
    func binaryCopy() throws {
        let (engine, _) = try freshEngine()
        try engine.db.execute("CREATE TABLE copied (n bigint, x double precision, t text)")
        let doubles: [Double?] = [0.1 + 0.2, -0.0, 18.3, 1e-300, -.greatestFiniteMagnitude, nil]
        let numbers: [Int64?] = (0..<6).map { $0 == 4 ? nil : Int64($0) * -1_234_567_890_123 }
        let texts: [String?] = ["2026-03-29", "tab\tnew\nline \\ 'q' \"d\"", "Köln 🌧️", "", nil, "x"]
        let stored = try engine.db.copyBinary(into: "copied", columns: ["n", "x", "t"]) { rows in
            for (index, (x, t)) in zip(doubles, texts).enumerated() {
                rows.append(numbers[index])
                rows.append(x)
                try rows.append(t)
                try rows.endRow()
            }
        }
        #expect(stored == doubles.count)
        let back = try engine.db.rows("SELECT n, x, t FROM copied ORDER BY x IS NULL, n DESC NULLS LAST") {
            (n: $0.optionalInt64(0), x: $0.optionalDouble(1), t: $0.optionalString(2))
        }
        #expect(back.map(\.x?.bitPattern) == doubles.map(\.?.bitPattern))
        #expect(back.map(\.t) == texts)
        #expect(back.map(\.n) == numbers)
        #expect(throws: CopyValueError.self) {
            try engine.db.copyBinary(into: "copied", columns: ["n", "x", "t"]) { rows in
                rows.append(Int64(9))
                rows.append(1.0)
                try rows.append("fine")
                try rows.endRow()
                rows.append(Int64(10))
                rows.append(2.0)
                try rows.append("nul\u{0}inside")
                try rows.endRow()
            }
        }
        #expect(try engine.db.scalarInt("SELECT count(*) FROM copied") == 6)
    }

    @Test("binary COPY rows written whole store each bigint, real and double bit for bit, NULLs as NULL")
    func binaryCopyWholeRows() throws {
        let (engine, _) = try freshEngine()
        try engine.db.execute("CREATE TABLE copied (n bigint, f real, x double precision)")
        let floats: [Float?] = [21.3, -0.0, nil, 1e-30, 87, -.greatestFiniteMagnitude]
        let doubles: [Double?] = [0.1 + 0.2, nil, -0.0, 1e-300, 1013.25, .leastNonzeroMagnitude]
        let stored = try engine.db.copyBinary(into: "copied", columns: ["n", "f", "x"]) { rows in
            for (index, (float, double)) in zip(floats, doubles).enumerated() {
                try rows.appendRow { row in
                    row.append(Int64(index) - 3)
                    row.append(float)
                    row.append(double)
                }
            }
        }
        #expect(stored == floats.count)
        let back = try engine.db.rows("SELECT n, f::float8, x FROM copied ORDER BY n") {
            (n: $0.int64(0), f: $0.optionalDouble(1), x: $0.optionalDouble(2))
        }
        #expect(back.map(\.n) == (0..<Int64(floats.count)).map { $0 - 3 })
        #expect(back.map { $0.f.map(Float.init)?.bitPattern } == floats.map(\.?.bitPattern))
        #expect(back.map(\.x?.bitPattern) == doubles.map(\.?.bitPattern))
    }

    @Test("a multi-row statement's text holds placeholders only, numbered row by row")
    func multiRowText() {
        #expect(
            MultiRowStatement.sql(
                prefix: "INSERT INTO t (a, b) VALUES ", suffix: " ON CONFLICT DO NOTHING", width: 2,
                rows: 2, casts: []) == "INSERT INTO t (a, b) VALUES ($1, $2), ($3, $4) ON CONFLICT DO NOTHING")
        #expect(
            MultiRowStatement.sql(
                prefix: "x IN (VALUES ", suffix: ")", width: 2, rows: 1, casts: ["::bigint", "::text"])
                == "x IN (VALUES ($1::bigint, $2::text))")
        #expect(
            MultiRowStatement.sql(
                prefix: "a = $1 AND b IN (VALUES ", suffix: ")", width: 1, rows: 2, casts: ["::text"],
                first: 2) == "a = $1 AND b IN (VALUES ($2::text), ($3::text))")
    }
}

/// The coordinator of a Citus cluster (as CitusTests takes it), or nil.
private let batchCitusURL = ProcessInfo.processInfo.environment["WXDB_CITUS_URL"].flatMap { $0.isEmpty ? nil : $0 }

@Suite(
    "PostgreSQL engine's batched writes on Citus",
    .enabled(
        if: batchCitusURL != nil,
        "needs a Citus cluster: ../shared/citus/citus-cluster start, then WXDB_CITUS_URL=postgresql://postgres@127.0.0.1:9700/postgres"
    ))
struct PostgresWriteBatchCitusTests {
    @Test(
        "runs, sums groups, observation batches and fetch-log rows go in on distributed tables, the sums equal the pairs'"
    )
    func batchedWritesOnCitus() throws {
        let url = try #require(batchCitusURL)
        let schema = "wx_" + String(UUID().uuidString.prefix(8).lowercased())
        let admin = try PostgresConnection(conninfo: url)
        try admin.execute("CREATE SCHEMA " + schema)
        defer { try? admin.execute("DROP SCHEMA " + schema + " CASCADE") }
        let separator = url.contains("?") ? "&" : "?"
        let engine = try PostgresEngine(
            conninfo: url + separator + "options=-csearch_path%3D" + schema, now: 1_700_000_000)
        #expect(engine.migration?.distribution != nil, "the tables are distributed")
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        let truth = try syntheticResponse(models: ["era5"], start: t0 - 30 * hour, hours: 120, seed: 3, current: t0)
        _ = try engine.saveObservations(
            truth.models[0], through: .max, locationID: berlin.id, source: "era5", recordedAt: t0)
        let response = try syntheticResponse(
            models: ["best_match", "gfs_seamless"], start: t0 - 24 * hour, hours: 96, seed: 1, current: t0)
        _ = try engine.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
        // A correction of some era5 hours: groups change, some may empty.
        let corrected = try syntheticResponse(models: ["era5"], start: t0 + 10 * hour, hours: 20, seed: 4, current: t0)
        _ = try engine.upsertObservations(
            corrected.models[0], through: .max, locationID: berlin.id, source: "era5", recordedAt: t0 + hour)
        try engine.logFailure(FetchRecord(fetchedAt: t0, origin: .fetch), locationID: nil, model: nil, error: "x")
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == 2)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM fetch_log") == 3)
        let kept = try keptRows(engine)
        #expect(kept.count > 50)
        let diff = differences(kept, try recomputed(engine, location: berlin.id))
        #expect(diff.isEmpty, "\(diff.count) differ: \(diff.prefix(12))")
    }
}
