// Storing fetched responses on PostgreSQL, as the SQLite engine does (StoreSQLite/ForecastRuns.swift):
// each response whole or not at all, in one transaction under the location's advisory lock (so
// several ingest processes never store one run twice); a run per model, or a fetch-log row only
// when the content, or the same model run seen through another window or UTC offset, is stored
// already; the `current` block and the past hours as observations; the kept sums in the same
// transaction. Rows go in by COPY (PostgresEngine.copyRows).
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine: ResponseBatchStorer {
    /// Stores one decoded response for `location` in one transaction.
    public func store(_ response: ForecastResponse, for location: Location, fetch: FetchRecord) throws -> [StoreOutcome]
    {
        try db.transaction {
            try db.lockForTransaction(Self.lockKey(location.id))
            return try storeInTransaction(response, for: location, fetch: fetch)
        }
    }

    /// Stores one response's runs (`store` without the observations): kept for the engine tests
    /// written before the engine stood behind the Store protocol.
    public func storeRuns(_ response: ForecastResponse, for location: Location, fetch: FetchRecord) throws
        -> [StoreOutcome]
    {
        try db.transaction {
            try db.lockForTransaction(Self.lockKey(location.id))
            guard try isStillSaved(location) else { throw StoreError.locationRemoved(name: location.name) }
            return try response.models.map { try storeRun($0, response: response, location: location, fetch: fetch) }
        }
    }

    /// Stores the responses `make` builds from `items`, all in one transaction: made
    /// `storeAllChunk` at a time, just before they are stored, so memory stays flat; the first
    /// error rolls every one back. The next chunk is made on a thread of its own while this one is
    /// stored: most of a store is waiting for the server, and reading and decoding the next
    /// responses meanwhile uses the second core. `make` is called in the items' order, one call at
    /// a time, and must not touch this engine (the loop is both engines' `storeBatch`).
    public func storeAll<Item>(
        _ items: [Item], for location: Location,
        make: (Item) throws -> (response: ForecastResponse, fetch: FetchRecord),
        stored: (Item, [StoreOutcome]) -> Void
    ) throws -> [StoreOutcome] {
        try db.transaction {
            try db.lockForTransaction(Self.lockKey(location.id))
            return try storeBatch(
                items, for: location, chunk: Self.storeAllChunk, makeAhead: true, make: make, stored: stored)
        }
    }

    /// `keepingSums` of one span's observations (for `storeBatch`).
    package func keepingSpanSums(_ span: ObservationSpan, _ write: () throws -> Void) throws {
        try keepingSums(
            .observations(location: span.location, source: span.source, from: span.from, through: span.through),
            location: span.location, write)
    }

    /// `keeping` (for `storeBatch`).
    package func keepingScope(_ scope: SumsKeeping, _ write: () throws -> Void) throws { try keeping(scope, write) }

    /// How many responses `storeAll` decodes before storing them (as the SQLite engine).
    static let storeAllChunk = 64

    /// Like `store`, inside the transaction (and the location's lock) the caller holds.
    package func storeInTransaction(_ response: ForecastResponse, for location: Location, fetch: FetchRecord) throws
        -> [StoreOutcome]
    {
        guard try isStillSaved(location) else { throw StoreError.locationRemoved(name: location.name) }
        try adoptTimezoneIfAuto(location, from: response)
        var outcomes: [StoreOutcome] = []
        for forecast in response.models {
            outcomes.append(try storeRun(forecast, response: response, location: location, fetch: fetch))
        }
        if let current = response.current {
            // The block is the first requested model's (Open-Meteo does not suffix it per model).
            let source = response.models.first.map { SourceNames.current(of: $0.model) } ?? SourceNames.current
            try upsertObservation(
                locationID: location.id, source: source, time: current.time, values: current.values,
                recordedAt: fetch.fetchedAt, replacing: false)
        }
        if fetch.recordAnalysis {
            // Each model's past hours are its own source: a model is never the truth it is scored against.
            let through = AnalysisHours.through(response, fetch: fetch)
            for model in response.models {
                try upsertObservations(
                    model, through: through, locationID: location.id, source: SourceNames.analysis(of: model.model),
                    recordedAt: fetch.fetchedAt)
            }
        }
        return outcomes
    }

    func storeRun(_ forecast: ModelForecast, response: ForecastResponse, location: Location, fetch: FetchRecord) throws
        -> StoreOutcome
    {
        let hash = forecast.contentHash(grid: (response.latitude, response.longitude, response.elevation))
        // Any earlier run of this location and model with the same content (every hash a run has had).
        let same = try db.firstRow(
            """
            SELECT r.id, r.fetched_at FROM run_content_hashes h
            JOIN forecast_runs r ON r.location_id = h.location_id AND r.id = h.run_id
            WHERE h.location_id = $1 AND h.model = $2 AND h.content_hash = $3 ORDER BY r.id LIMIT 1
            """,
            [.integer(location.id), .text(forecast.model), .integer(hash)]
        ) { (id: $0.int64(0), fetchedAt: $0.int64(1)) }
        // Not the same bytes, but maybe the same model run seen through another window or offset.
        let match =
            same == nil
            ? try matchingRun(
                forecast, utcOffset: response.utcOffsetSeconds, modelRun: fetch.issuedAt[forecast.model],
                locationID: location.id)
            : nil
        let runID: Int64
        let kind: StoreOutcome.Kind
        let continued = match.map { !$0.contained } ?? false
        var added = 0
        if let earlier = same ?? match.map({ (id: $0.id, fetchedAt: $0.fetchedAt) }) {
            runID = earlier.id
            kind = .repeated
            if let match, continued {
                added = try extendRun(
                    runID, location: location.id, with: forecast, hash: hash, dailies: match.sameOffset)
            }
            // An import of an older copy moves the run's first fetch (and a fallback issue time)
            // back: every lead of the run changes, so its pairs' sums move with it.
            if fetch.fetchedAt < earlier.fetchedAt {
                try keepingSums(.run(runID, validTimes: nil), location: location.id) {
                    try db.run(
                        "UPDATE forecast_runs SET fetched_at = $1, issued_at = CASE issued_at_source WHEN 'first_fetch' THEN $1 ELSE issued_at END WHERE location_id = $2 AND id = $3",
                        [.integer(fetch.fetchedAt), .integer(location.id), .integer(runID)])
                }
            }
            if let modelRun = fetch.issuedAt[forecast.model] {
                try correctIssueTime(runID, location: location.id, to: modelRun, origin: fetch.origin)
            }
        } else {
            kind = .stored
            let modelRun = fetch.issuedAt[forecast.model]
            // The run's id, its row, its content hash, its fetch-log row and its daily rows in one
            // statement (one round trip, not six); no counter row means the location was removed.
            let float4 = Float4.keeps(forecast)
            guard
                let id = try db.firstRow(
                    Self.runInsertSQL(float4: float4),
                    [
                        .integer(location.id), .text(forecast.model), .integer(modelRun ?? fetch.fetchedAt),
                        .text(
                            modelRun == nil ? "first_fetch" : fetch.origin == .singleRun ? "single_run" : "model_run"),
                        .integer(fetch.fetchedAt), .real(response.latitude), .real(response.longitude),
                        response.elevation.postgresValue, .integer(Int64(response.utcOffsetSeconds)),
                        .text(response.timezone), .integer(hash), forecast.hourlyTimes.min().postgresValue,
                        forecast.hourlyTimes.max().postgresValue, .integer(Int64(Set(forecast.hourlyTimes).count)),
                        .integer(Int64(Set(forecast.dailyDates).count))
                    ] + Self.fetchLogValues(fetch, outcome: kind.rawValue) + Self.dailyArrays(forecast, float4: float4),
                    { $0.int64(0) })
            else { throw StoreError.locationRemoved(name: location.name) }
            runID = id
            try copyRows(forecast, location: location.id, runID: runID, float4: float4, daily: false)
            try addSums(.run(runID, validTimes: nil), location: location.id)
        }
        // A new run's hash went in with its row (runInsertSQL); a matched run gains this content's hash.
        if same == nil && kind == .repeated {
            try db.run(
                "INSERT INTO run_content_hashes (location_id, model, content_hash, run_id) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                [.integer(location.id), .text(forecast.model), .integer(hash), .integer(runID)])
        }
        if kind == .repeated {
            try logFetch(
                fetch, locationID: location.id, model: forecast.model, outcome: kind.rawValue, runID: runID, error: nil)
        }
        return StoreOutcome(
            kind: kind, model: forecast.model, runID: runID, hours: forecast.hourlyTimes.count,
            days: forecast.dailyDates.count, addedHours: added, continued: continued)
    }

    /// A new run: both of the location's counters move in the one update (a statement may change
    /// a row once), then the run's row, its content hash, the fetch-log row that names it, as
    /// `logFetch` would write it (`fetchLogValues` are $16 on), and its daily rows from the arrays
    /// `dailyArrays` makes ($22 on), into the float4 or the double table (migration 0006). A COPY
    /// of a run's 16 daily rows cost two round trips and more server time than the rows.
    static func runInsertSQL(float4: Bool) -> String { float4 ? runInsertF4SQL : runInsertF8SQL }
    static let runInsertF4SQL = runInsertSQL(daily: "daily_forecasts_f4", values: "real")
    static let runInsertF8SQL = runInsertSQL(daily: "daily_forecasts_f8", values: "double precision")

    private static func runInsertSQL(daily: String, values: String) -> String {
        let arrays = Variables.daily.enumerated().map { index, variable in
            "$" + String(23 + index) + "::" + (variable.quantity == .instant ? "bigint" : values) + "[]"
        }
        return
            "WITH c AS (UPDATE location_counters SET next_run_id = next_run_id + 1, next_fetch_id = next_fetch_id + 1"
            + " WHERE location_id = $1 RETURNING location_id, next_run_id - 1 AS id, next_fetch_id - 1 AS fetch_id),"
            + " r AS (INSERT INTO forecast_runs (location_id, id, model, issued_at, issued_at_source, fetched_at,"
            + " grid_latitude, grid_longitude, grid_elevation, utc_offset_seconds, timezone, content_hash,"
            + " first_valid_time, last_valid_time, hour_count, day_count)"
            + " SELECT c.location_id, c.id, $2::text, $3::bigint, $4::text, $5::bigint, $6::double precision,"
            + " $7::double precision, $8::double precision, $9::bigint, $10::text, $11::bigint, $12::bigint,"
            + " $13::bigint, $14::bigint, $15::bigint FROM c RETURNING location_id, id),"
            // Its content hash in the same statement (one round trip less per stored run); the foreign key
            // to forecast_runs is checked at the statement's end, when the run's row is there.
            + " h AS (INSERT INTO run_content_hashes (location_id, model, content_hash, run_id)"
            + " SELECT r.location_id, $2::text, $11::bigint, r.id FROM r ON CONFLICT DO NOTHING),"
            + " f AS (INSERT INTO fetch_log (" + fetchLogColumns + ") SELECT c.location_id, c.fetch_id, $5::bigint,"
            + " $2::text, $16::text, $17::text, $18::bigint, NULL, $19::bigint, r.id, $20::text, $21::double precision"
            + " FROM c JOIN r ON r.location_id = c.location_id),"
            + " d AS (INSERT INTO " + daily + " (" + dailyColumns.joined(separator: ", ") + ")"
            + " SELECT r.location_id, r.id, u.* FROM r, unnest($22::text[], " + arrays.joined(separator: ", ") + ") u)"
            + " SELECT id FROM r"
    }

    /// A forecast's daily rows as the array parameters of `runInsertSQL` (the dates, then one array
    /// per daily variable; a repeated date keeps its first values, as `copyRows`): a float4 value
    /// as its float's shortest text, which float4in reads back as that float exactly, a double as
    /// its own shortest text, an instant (sunrise, sunset) as a whole number as `copyRows` stores it.
    static func dailyArrays(_ forecast: ModelForecast, float4: Bool) -> [PostgresValue] {
        var seen = Set<String>()
        let rows = forecast.dailyDates.indices.filter { seen.insert(forecast.dailyDates[$0]).inserted }
        func array(_ elements: [String]) -> PostgresValue { .text("{" + elements.joined(separator: ",") + "}") }
        // A date is wxdb's YYYY-MM-DD; quoted and escaped all the same, as an array element must be.
        let dates = rows.map { forecast.dailyDates[$0].replacing("\\", with: "\\\\").replacing("\"", with: "\\\"") }
        var arrays = [array(dates.map { "\"" + $0 + "\"" })]
        for (index, column) in forecast.daily.enumerated() {
            let instant = Variables.daily[index].quantity == .instant
            arrays.append(
                array(
                    rows.map { row in
                        guard let value = column?[row] ?? nil else { return "NULL" }
                        if instant { return String(Int64(value)) }
                        return float4 ? Float(value).description : PostgresValue.text(of: value)
                    }))
        }
        return arrays
    }

    /// Gives a stored run measured from its first fetch the initialisation time a better source now
    /// names for the same content, moving its pairs' sums with every lead (as the SQLite engine).
    func correctIssueTime(_ runID: Int64, location: Int64, to modelRun: Int64, origin: FetchOrigin) throws {
        guard
            let run = try db.firstRow(
                "SELECT issued_at_source, fetched_at FROM forecast_runs WHERE location_id = $1 AND id = $2",
                [.integer(location), .integer(runID)], { (source: $0.string(0), fetchedAt: $0.int64(1)) }),
            run.source == "first_fetch", modelRun <= run.fetchedAt
        else { return }
        try keepingSums(.run(runID, validTimes: nil), location: location) {
            try db.run(
                "UPDATE forecast_runs SET issued_at = $1, issued_at_source = $2 WHERE location_id = $3 AND id = $4",
                [
                    .integer(modelRun), .text(origin == .singleRun ? "single_run" : "model_run"), .integer(location),
                    .integer(runID)
                ])
        }
    }

    /// How far apart the windows of two copies of one model run may start or end (as SQLite's).
    static let matchWindow: Int64 = 3 * 86400
    /// How many window matches run on one plan of their query at most (PostgreSQL plans a prepared
    /// statement's first five executions with their values, then reuses a generic plan).
    static let matchReplanEvery = 64

    /// A stored run that is the same model run as a forecast.
    struct RunMatch {
        var id: Int64
        var fetchedAt: Int64
        /// Every hour (and, under the same offset, every date) of the forecast is already stored.
        var contained: Bool
        /// The run was stored under the same UTC offset, so its daily rows are comparable.
        var sameOffset: Bool
    }

    /// The runs `matchingRun` compares (SQLite's `candidateRunsSQL`): those whose window starts or
    /// ends near the forecast's, each with its stored row at the forecast's first hour or its own.
    /// The row is read from the run-row tables themselves, not through the `hourly_forecasts` view:
    /// a float4 value as its own shortest text, which parses to the double the view gives
    /// (`col::text::float8`) without the server parsing and printing it again (over a quarter of the
    /// query's time). An hour of a run is in one of the two tables (a run goes wholly into one, and
    /// an extension adds only hours the run lacks), so the double table is read only without a row
    /// in the float4 one.
    static let candidateRunsSQL = {
        let runs =
            "SELECT id, first_valid_time FROM forecast_runs "
            + "WHERE location_id = $1 AND model = $2 AND first_valid_time <= $3::bigint AND last_valid_time >= $4::bigint AND "
        func at(_ table: String) -> String {
            table + ".location_id = $1 AND " + table + ".run_id = r.id AND " + table
                + ".valid_time = greatest(r.first_valid_time, $4::bigint)"
        }
        return "SELECT r.id, r.first_valid_time, coalesce(h4.valid_time, h8.valid_time), "
            + Variables.hourlyNames.map { "coalesce(h4." + $0 + "::text, h8." + $0 + "::text)" }.joined(separator: ", ")
            + " FROM (" + runs
            + "first_valid_time BETWEEN $4::bigint - $5::bigint AND $4::bigint + $5::bigint UNION ALL "
            + runs
            + "last_valid_time BETWEEN $3::bigint - $5::bigint AND $3::bigint + $5::bigint AND first_valid_time NOT BETWEEN $4::bigint - $5::bigint AND $4::bigint + $5::bigint) r "
            + "LEFT JOIN hourly_forecasts_f4 h4 ON " + at("h4")
            + " LEFT JOIN hourly_forecasts_f8 h8 ON h4.valid_time IS NULL AND " + at("h8")
    }()
    static let candidateDetailsSQL = """
        SELECT fetched_at, utc_offset_seconds, issued_at FROM forecast_runs
        WHERE location_id = $1 AND id = $2 AND pruned_at IS NULL
          AND ($3::bigint IS NULL OR issued_at_source = 'first_fetch' OR issued_at = $3::bigint)
        """

    /// The newest unpruned run of this location and model that agrees with `forecast` on every hour
    /// they share (at least a day of hours, or all of the forecast's) and, under the same UTC
    /// offset, on every shared date: SQLite's `matchingRun`, with the same rules.
    func matchingRun(_ forecast: ModelForecast, utcOffset: Int, modelRun: Int64?, locationID: Int64) throws
        -> RunMatch?
    {
        let times = forecast.hourlyTimes
        guard let first = times.first, let last = times.last, zip(times, times.dropFirst()).allSatisfy({ $0 < $1 })
        else { return nil }
        // Prepared (planning it was a third of its time), but planned afresh every
        // `matchReplanEvery` calls: a plan made while an import's first runs were stored (no
        // statistics yet) scans every run of the model, and an import stores thousands in one
        // transaction. The plan follows the table as it grows, at one planning in ten.
        windowMatches += 1
        if windowMatches % Self.matchReplanEvery == 0 { try db.replan(Self.candidateRunsSQL) }
        let candidates = try db.rows(
            Self.candidateRunsSQL,
            [.integer(locationID), .text(forecast.model), .integer(last), .integer(first), .integer(Self.matchWindow)]
        ) { row in disagrees(forecast, row) ? nil : row.int64(0) }
        var agreeing = try candidates.compactMap { $0 }.compactMap { id in
            try db.firstRow(Self.candidateDetailsSQL, [.integer(locationID), .integer(id), modelRun.postgresValue]) {
                (id: id, fetchedAt: $0.int64(0), offset: Int($0.int64(1)), issuedAt: $0.int64(2))
            }
        }
        agreeing.sort { ($0.issuedAt, $0.id) > ($1.issuedAt, $1.id) }
        for candidate in agreeing {
            guard let shared = try sharedHours(forecast, location: locationID, runID: candidate.id),
                shared >= min(24, times.count)
            else { continue }
            let sameOffset = candidate.offset == utcOffset
            var allDates = true
            if sameOffset {
                guard let dates = try sharedDates(forecast, location: locationID, runID: candidate.id) else { continue }
                allDates = dates == Set(forecast.dailyDates).count
            }
            return RunMatch(
                id: candidate.id, fetchedAt: candidate.fetchedAt, contained: shared == times.count && allDates,
                sameOffset: sameOffset)
        }
        return nil
    }

    /// Whether a candidate row holds a value the forecast has otherwise at the same hour.
    func disagrees(_ forecast: ModelForecast, _ row: PostgresRow) -> Bool {
        guard let time = row.optionalInt64(2) else { return false }
        let times = forecast.hourlyTimes
        var low = 0
        var high = times.count
        while low < high {
            let middle = (low + high) / 2
            if times[middle] < time { low = middle + 1 } else { high = middle }
        }
        guard low < times.count, times[low] == time else { return false }
        for (index, column) in forecast.hourly.enumerated() where (column?[low] ?? nil) != row.optionalDouble(index + 3)
        {
            return true
        }
        return false
    }

    static let runHoursSQL =
        "SELECT valid_time, " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM hourly_forecasts WHERE location_id = $1 AND run_id = $2 AND valid_time BETWEEN $3::bigint AND $4::bigint"
        + " ORDER BY valid_time"
    static let runDaysSQL =
        "SELECT date, " + Variables.dailyNames.joined(separator: ", ")
        + " FROM daily_forecasts WHERE location_id = $1 AND run_id = $2"

    /// How many of `forecast`'s (ascending) hours the run holds, all with the same values; nil at
    /// the first disagreement.
    func sharedHours(_ forecast: ModelForecast, location: Int64, runID: Int64) throws -> Int? {
        let times = forecast.hourlyTimes
        guard let first = times.first, let last = times.last else { return 0 }
        // Read whole (a run has at most a few hundred hours): a statement stopped early would be
        // cancelled, and a cancelled statement aborts the transaction it is in.
        let rows = try db.rows(Self.runHoursSQL, [.integer(location), .integer(runID), .integer(first), .integer(last)])
        { row in (time: row.int64(0), values: (0..<Variables.hourly.count).map { row.optionalDouble($0 + 1) }) }
        // Both sides ascend in time: walk them together, and stop at the first disagreement.
        var row = 0
        var shared = 0
        for stored in rows {
            while row < times.count && times[row] < stored.time { row += 1 }
            guard row < times.count else { break }
            guard times[row] == stored.time else { continue }
            for (index, column) in forecast.hourly.enumerated() where (column?[row] ?? nil) != stored.values[index] {
                return nil
            }
            shared += 1
        }
        return shared
    }

    /// How many of `forecast`'s dates the run holds, all with the same values; nil at the first disagreement.
    func sharedDates(_ forecast: ModelForecast, location: Int64, runID: Int64) throws -> Int? {
        var dayOf: [String: Int] = [:]
        for (row, date) in forecast.dailyDates.enumerated() where dayOf[date] == nil { dayOf[date] = row }
        var shared = 0
        for stored in try db.rows(
            Self.runDaysSQL, [.integer(location), .integer(runID)],
            { row in
                (date: row.string(0), values: (0..<Variables.daily.count).map { row.optionalDouble($0 + 1) })
            })
        {
            guard let row = dayOf[stored.date] else { continue }
            for (index, column) in forecast.daily.enumerated() where (column?[row] ?? nil) != stored.values[index] {
                return nil
            }
            shared += 1
        }
        return shared
    }

    /// Adds the hours (and, when `dailies`, the dates) `forecast` has that the run lacks, and takes
    /// its content hash. Returns the number of hours added.
    @discardableResult
    func extendRun(_ runID: Int64, location: Int64, with forecast: ModelForecast, hash: Int64, dailies: Bool) throws
        -> Int
    {
        let key: [PostgresValue] = [.integer(location), .integer(runID)]
        let storedHours = Set(
            try db.rows("SELECT valid_time FROM hourly_forecasts WHERE location_id = $1 AND run_id = $2", key) {
                $0.int64(0)
            })
        let storedDates = Set(
            try db.rows("SELECT date FROM daily_forecasts WHERE location_id = $1 AND run_id = $2", key) {
                $0.string(0)
            })
        var extra = ModelForecast(model: forecast.model)
        let hourRows = forecast.hourlyTimes.indices.filter { !storedHours.contains(forecast.hourlyTimes[$0]) }
        extra.hourlyTimes = hourRows.map { forecast.hourlyTimes[$0] }
        extra.hourly = forecast.hourly.map { column in column.map { values in hourRows.map { values[$0] } } }
        let dayRows =
            dailies ? forecast.dailyDates.indices.filter { !storedDates.contains(forecast.dailyDates[$0]) } : []
        extra.dailyDates = dayRows.map { forecast.dailyDates[$0] }
        extra.daily = forecast.daily.map { column in column.map { values in dayRows.map { values[$0] } } }
        try copyRows(extra, location: location, runID: runID)
        // Only the new hours make new pairs; the run's other pairs are already summed.
        if !extra.hourlyTimes.isEmpty {
            try addSums(.run(runID, validTimes: Set(extra.hourlyTimes)), location: location)
        }
        try db.run(
            """
            UPDATE forecast_runs SET content_hash = $3,
                hour_count = (SELECT count(*) FROM hourly_forecasts WHERE location_id = $1 AND run_id = $2),
                day_count = (SELECT count(*) FROM daily_forecasts WHERE location_id = $1 AND run_id = $2),
                first_valid_time = (SELECT min(valid_time) FROM hourly_forecasts WHERE location_id = $1 AND run_id = $2),
                last_valid_time = (SELECT max(valid_time) FROM hourly_forecasts WHERE location_id = $1 AND run_id = $2)
            WHERE location_id = $1 AND id = $2
            """,
            key + [.integer(hash)])
        return extra.hourlyTimes.count
    }
}
