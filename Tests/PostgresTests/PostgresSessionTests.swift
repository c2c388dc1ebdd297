import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxStore

@testable import WxPostgresStore

/// What wxdb sets in its PostgreSQL sessions, and the statements it keeps prepared in them.
@Suite(
    "PostgreSQL sessions: commit setting and prepared statements",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresSessionTests {
    /// The `synchronous_commit` in force inside one of the engine's transactions, and that a
    /// response stored on it is there.
    func commitSetting(_ conninfo: String) throws -> String? {
        let engine = try PostgresEngine(conninfo: conninfo, now: 1_700_000_000)
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        let response = try syntheticResponse(models: ["best_match"], start: t0, hours: 48, seed: 1, current: t0)
        let setting = try engine.db.transaction {
            _ = try engine.storeInTransaction(response, for: berlin, fetch: FetchRecord(fetchedAt: t0, origin: .fetch))
            return try engine.db.scalarText("SHOW synchronous_commit")
        }
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == 1)
        #expect(engine.db.synchronousCommit == setting)
        return setting
    }

    @Test("writes commit without waiting for the WAL flush when nobody chose synchronous_commit")
    func commitsRelaxedByDefault() throws {
        let (_, conninfo) = try freshEngine()
        #expect(try commitSetting(conninfo) == "off")
    }

    @Test(
        "a synchronous_commit someone chose is kept",
        arguments: [
            ("the connection string's options", "options='-csynchronous_commit=on'", nil, "on"),
            ("ALTER DATABASE … SET", "", "remote_write", "remote_write"),
            ("ALTER DATABASE … SET to PostgreSQL's own default", "", "on", "on")
        ])
    func chosenSettingKept(_ how: String, _ options: String, _ databaseSetting: String?, _ expected: String) throws {
        let server = try PostgresServer.shared()
        let name = try server.createDatabase("session")
        if let databaseSetting {
            // Identifiers and a keyword from this table, not user input.
            let admin = try PostgresConnection(conninfo: server.conninfo(database: name))
            try admin.execute("ALTER DATABASE \(name) SET synchronous_commit = \(databaseSetting)")
        }
        let conninfo = server.conninfo(database: name) + (options.isEmpty ? "" : " " + options)
        #expect(try commitSetting(conninfo) == expected, "\(how)")
    }

    @Test("a session opened again after the server ended it gets wxdb's setting again")
    func settingAfterReconnect() throws {
        let (engine, conninfo) = try freshEngine()
        let admin = try PostgresConnection(conninfo: conninfo)
        // Prepared statements of the old session are gone with it: they must be prepared again.
        for _ in 0..<3 { _ = try engine.locations() }
        #expect(
            try admin.firstRow("SELECT pg_terminate_backend($1, 10000)", [.integer(Int64(engine.db.backendPID))]) {
                $0.bool(0)
            } == true)
        let setting = try engine.db.transaction { try engine.db.scalarText("SHOW synchronous_commit") }
        #expect(engine.db.reconnects == 1)
        #expect(setting == "off")
        for _ in 0..<3 { #expect(try engine.locations().isEmpty) }
    }

    @Test("float4 values print exactly in wxdb's sessions even where the database sets extra_float_digits to 0")
    func floatDigitsKeptExact() throws {
        let server = try PostgresServer.shared()
        let name = try server.createDatabase("digits")
        let admin = try PostgresConnection(conninfo: server.conninfo(database: name))
        try admin.execute("ALTER DATABASE \(name) SET extra_float_digits = 0")
        let engine = try PostgresEngine(conninfo: server.conninfo(database: name), now: 1_700_000_000)
        // At 0, float4 21.37 would print as 21.37 too, but 1013.257 as 1013.26: the view's value would change.
        let probe = "SELECT 1013.257::real::text"
        #expect(try engine.db.scalarText(probe) == "1013.257")
        #expect(
            try admin.firstRow("SELECT pg_terminate_backend($1, 10000)", [.integer(Int64(engine.db.backendPID))]) {
                $0.bool(0)
            } == true)
        // A statement outside a transaction, just after the server ended the session, reconnects too.
        #expect(try engine.db.scalarText(probe) == "1013.257")
        #expect(engine.db.reconnects == 1)
        // The database's own setting is 0 (a session's default), and at 0 the probe prints 6 digits.
        let fresh = try PostgresConnection(conninfo: server.conninfo(database: name))
        #expect(try fresh.scalarText("SELECT reset_val FROM pg_settings WHERE name = 'extra_float_digits'") == "0")
        #expect(
            try fresh.transaction { () throws -> String? in
                try fresh.run("SET LOCAL extra_float_digits = 0")
                return try fresh.scalarText(probe)
            } == "1013.26")
    }

    @Test(
        "a COPY just after the server ended the session reconnects outside a transaction, and fails cleanly inside one",
        arguments: ["text", "binary"])
    func copyAfterSessionEnded(_ format: String) throws {
        let (engine, conninfo) = try freshEngine()
        let db = engine.db
        let admin = try PostgresConnection(conninfo: conninfo)
        try db.execute("CREATE TABLE copied (n bigint)")
        func copy(_ numbers: [Int64]) throws -> Int {
            if format == "binary" {
                return try db.copyBinary(into: "copied", columns: ["n"]) { rows in
                    for number in numbers {
                        rows.append(number)
                        try rows.endRow()
                    }
                }
            }
            return try db.copy(into: "copied", columns: ["n"]) { rows in
                for number in numbers {
                    rows.append(number)
                    try rows.endRow()
                }
            }
        }
        func endSession() throws -> Bool? {
            try admin.firstRow("SELECT pg_terminate_backend($1, 10000)", [.integer(Int64(db.backendPID))]) {
                $0.bool(0)
            }
        }
        #expect(try endSession() == true)
        #expect(try copy([1, 2]) == 2)
        #expect(db.reconnects == 1)
        // Inside a transaction the caller hears of it, and nothing of the transaction stays.
        let error = #expect(throws: PostgresError.self) {
            try db.transaction {
                try db.run("INSERT INTO copied VALUES (3)")
                _ = try endSession()
                _ = try copy([4])
            }
        }
        #expect(error?.kind == .connectionLost, "\(String(describing: error))")
        #expect(db.reconnects == 1)
        #expect(try admin.rows("SELECT n FROM copied ORDER BY n") { $0.int64(0) } == [1, 2])
    }

    @Test("the statements a stored run repeats are prepared once per session, not parsed and planned each time")
    func preparedOnce() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        for index in 0..<4 {
            let response = try syntheticResponse(
                models: ["best_match"], start: t0 + Int64(index) * 6 * hour, hours: 48, seed: index + 1,
                current: t0 + Int64(index) * 6 * hour)
            let outcomes = try engine.store(
                response, for: berlin, fetch: FetchRecord(fetchedAt: t0 + Int64(index) * 6 * hour, origin: .fetch))
            #expect(outcomes.map(\.kind) == [.stored])
        }
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == 4)
        // pg_prepared_statements lists this session's own.
        let prepared = try engine.db.rows("SELECT statement FROM pg_prepared_statements") { $0.string(0) }
        #expect(prepared.filter { $0 == PostgresEngine.runInsertSQL(float4: true) }.count == 1, "\(prepared)")
        // The window match's candidates too (planning them was a third of their time).
        #expect(prepared.filter { $0 == PostgresEngine.candidateRunsSQL }.count == 1, "\(prepared)")
        // A table's columns changed under a prepared statement: it is prepared again, not refused.
        try engine.db.execute("CREATE TABLE widths (a bigint)")
        for _ in 0..<3 { _ = try engine.db.rows("SELECT * FROM widths") { $0.count } }
        try engine.db.execute("ALTER TABLE widths ADD COLUMN b bigint")
        try engine.db.run("INSERT INTO widths VALUES (1, 2)")
        #expect(try engine.db.rows("SELECT * FROM widths") { $0.count } == [2])
    }

    @Test("the window match's prepared plan is made again every so many matches, from the tables as they are then")
    func windowMatchReplanned() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        var index = 0
        func storeNext() throws {
            let response = try syntheticResponse(
                models: ["best_match"], start: t0 + Int64(index) * 6 * hour, hours: 48, seed: index + 1,
                current: t0 + Int64(index) * 6 * hour)
            let outcomes = try engine.store(
                response, for: berlin, fetch: FetchRecord(fetchedAt: t0 + Int64(index) * 6 * hour, origin: .fetch))
            #expect(outcomes.map(\.kind) == [.stored])
            index += 1
        }
        /// How many times the session's prepared window match has run (nil: not prepared now).
        func matchExecutions() throws -> Int64? {
            try engine.db.firstRow(
                "SELECT generic_plans + custom_plans FROM pg_prepared_statements WHERE statement = $1",
                [.text(PostgresEngine.candidateRunsSQL)]
            ) { $0.int64(0) }
        }
        for _ in 0..<3 { try storeNext() }
        // Run unprepared the first time, then prepared: two executions of the prepared statement.
        #expect(try matchExecutions() == 2)
        let every = PostgresEngine.matchReplanEvery
        while engine.windowMatches < every - 1 { try storeNext() }
        #expect(try matchExecutions() == Int64(every - 2))
        // The next match drops the plan and runs unprepared; the one after prepares it again.
        try storeNext()
        #expect(try matchExecutions() == nil)
        try storeNext()
        #expect(try matchExecutions() == 1)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == Int64(every + 1))
    }

    @Test("a new run's fetch-log row goes in the statement that stores the run")
    func fetchLogWithRun() throws {
        let (engine, _) = try freshEngine()
        try engine.db.execute(
            """
            CREATE TABLE log_statements (query text NOT NULL);
            CREATE FUNCTION record_log_statement() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                INSERT INTO log_statements VALUES (current_query());
                RETURN NULL;
            END $$;
            CREATE TRIGGER record_log AFTER INSERT ON fetch_log
                FOR EACH STATEMENT EXECUTE FUNCTION record_log_statement();
            """)
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        let response = try syntheticResponse(
            models: ["best_match", "gfs_seamless"], start: t0 - 24 * hour, hours: 96, seed: 1, current: t0)
        let fetch = FetchRecord(
            fetchedAt: t0, origin: .fetch, request: "https://example/x", httpStatus: 200, durationMilliseconds: 42,
            apiWeight: 1.5)
        let outcomes = try engine.store(response, for: berlin, fetch: fetch)
        #expect(outcomes.map(\.kind) == [.stored, .stored])
        let queries = try engine.db.rows("SELECT query FROM log_statements") { $0.string(0) }
        #expect(queries.count == 2)
        #expect(queries.allSatisfy { $0.contains("INSERT INTO forecast_runs") }, "\(queries)")
        // The same bytes again: a repeat, logged on its own, naming the same runs.
        let again = try engine.store(response, for: berlin, fetch: FetchRecord(fetchedAt: t0 + hour, origin: .fetch))
        #expect(again.map(\.kind) == [.repeated, .repeated])
        let rows = try engine.db.rows(
            "SELECT id, attempted_at, model, origin, outcome, http_status, error, duration_ms, run_id, request,"
                + " api_weight FROM fetch_log ORDER BY id"
        ) { row in (0..<row.count).map { row.optionalString($0) ?? "NULL" }.joined(separator: "|") }
        let runs = outcomes.map { String($0.runID) }
        #expect(
            rows == [
                "1|\(t0)|best_match|fetch|stored|200|NULL|42|\(runs[0])|https://example/x|1.5",
                "2|\(t0)|gfs_seamless|fetch|stored|200|NULL|42|\(runs[1])|https://example/x|1.5",
                "3|\(t0 + hour)|best_match|fetch|repeated|NULL|NULL|NULL|\(runs[0])|NULL|NULL",
                "4|\(t0 + hour)|gfs_seamless|fetch|repeated|NULL|NULL|NULL|\(runs[1])|NULL|NULL"
            ], "\(rows)")
    }

    @Test("an import of many responses makes the next ones while it stores these, in order, all or nothing")
    func importMakesAhead() throws {
        let (engine, _) = try freshEngine()
        let berlin = try engine.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        let items = Array(0..<(2 * PostgresEngine.storeAllChunk + 20))
        let caller = pthread_self()
        var madeElsewhere = 0
        var made: [Int] = []
        var stored: [Int] = []
        func make(_ item: Int) throws -> (response: ForecastResponse, fetch: FetchRecord) {
            if pthread_equal(pthread_self(), caller) == 0 { madeElsewhere += 1 }
            made.append(item)
            let start = t0 + Int64(item) * 3 * hour
            return (
                try syntheticResponse(models: ["best_match"], start: start, hours: 24, seed: item + 1, current: start),
                FetchRecord(fetchedAt: start, origin: .import)
            )
        }
        let outcomes = try engine.storeAll(items, for: berlin, make: make) { item, _ in stored.append(item) }
        #expect(outcomes.count == items.count && outcomes.allSatisfy { $0.kind == .stored })
        #expect(made == items && stored == items)
        // Every chunk after the first is made while the one before it is stored.
        #expect(madeElsewhere == items.count - PostgresEngine.storeAllChunk)
        #expect(try engine.db.scalarInt("SELECT count(*) FROM forecast_runs") == Int64(items.count))

        // A response that cannot be made, in the last chunk: nothing of the import stays.
        struct Unreadable: Error {}
        let again = try engine.addLocation(
            name: "Bern", latitude: 46.95, longitude: 7.45, elevation: 540, timezone: "Europe/Zurich", models: [],
            now: 0)
        #expect(throws: Unreadable.self) {
            _ = try engine.storeAll(items, for: again) { item in
                if item == items.count - 5 { throw Unreadable() }
                return try make(item)
            }
        }
        #expect(
            try engine.db.scalarInt("SELECT count(*) FROM forecast_runs WHERE location_id = $1", [.integer(again.id)])
                == 0)
    }
}
