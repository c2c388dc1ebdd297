import WxCore
import WxSQLite
import WxStore

extension SQLiteStore: ResponseBatchStorer {
    static let hourlyInsertSQL =
        "INSERT INTO hourly_forecasts (run_id, valid_time, "
        + Variables.hourlyNames.joined(separator: ", ") + ") VALUES (?, ?"
        + String(repeating: ", ?", count: Variables.hourly.count) + ")"
    static let dailyInsertSQL =
        "INSERT INTO daily_forecasts (run_id, date, "
        + Variables.dailyNames.joined(separator: ", ") + ") VALUES (?, ?"
        + String(repeating: ", ?", count: Variables.daily.count) + ")"
    static let observationReplaceSQL =
        "INSERT INTO observations (location_id, source, time, "
        + Variables.hourlyNames.joined(separator: ", ") + ", recorded_at) VALUES (?, ?, ?"
        + String(repeating: ", ?", count: Variables.hourly.count) + ", ?) "
        + "ON CONFLICT (location_id, source, time) DO UPDATE SET "
        + Variables.hourlyNames.map { "\($0) = coalesce(excluded.\($0), observations.\($0))" }.joined(separator: ", ")
        + ", recorded_at = excluded.recorded_at"
    static let observationUpsertSQL = observationReplaceSQL + " WHERE excluded.recorded_at >= observations.recorded_at"

    /// Stores one decoded response for `location` in one transaction: a run per model (or a
    /// fetch-log entry only, when the content equals a run already stored for that model), the `current`
    /// block as observations, and the past hours as `analysis` observations.
    public func store(_ response: ForecastResponse, for location: Location, fetch: FetchRecord) throws -> [StoreOutcome]
    {
        try db.transaction { try storeInTransaction(response, for: location, fetch: fetch) }
    }

    /// Stores the responses `make` builds from `items`, all in one transaction: they are made
    /// `storeAllChunk` at a time, just before they are stored, so memory stays flat however many
    /// there are, and the first error rolls every one back. `stored` hears about each item as it is stored.
    /// (The loop is both engines' `storeBatch`; here each chunk is made after the one before is
    /// stored: SQLite's writes use this process's CPU, they do not wait on a server.)
    public func storeAll<Item>(
        _ items: [Item], for location: Location,
        make: (Item) throws -> (response: ForecastResponse, fetch: FetchRecord),
        stored: (Item, [StoreOutcome]) -> Void = { _, _ in }
    ) throws -> [StoreOutcome] {
        try db.transaction {
            try storeBatch(
                items, for: location, chunk: Self.storeAllChunk, makeAhead: false, make: make, stored: stored)
        }
    }

    /// How many responses `storeAll` decodes before storing them: about 5 MB of 16-day hourly
    /// forecasts, and few enough chunks that keeping the sums per chunk costs little.
    static let storeAllChunk = 64

    /// Like `store`, inside a transaction the caller holds.
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
                locationID: location.id, source: source, time: current.time,
                values: current.values, recordedAt: fetch.fetchedAt)
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
        // Any earlier run of this location and model with the same content: re-fetching (or
        // re-importing an archive) adds a fetch-log entry, never a second copy.
        // Every hash a run has had counts (run_content_hashes), so this holds after the run took
        // newer windows, and after prune removed its rows.
        let same = try db.firstRow(
            """
            SELECT r.id, r.fetched_at FROM run_content_hashes h JOIN forecast_runs r ON r.id = h.run_id
            WHERE h.location_id = ? AND h.model = ? AND h.content_hash = ? ORDER BY r.id LIMIT 1
            """,
            [.integer(location.id), .text(forecast.model), .integer(hash)]
        ) { (id: $0.int64(0), fetchedAt: $0.int64(1)) }
        // Not the same bytes, but maybe the same model run: seen through Open-Meteo's window after
        // it moved on at local midnight, under another UTC offset (DST, `locations set --timezone`),
        // or an older response re-imported after the run absorbed newer windows (and their hashes).
        let match =
            same == nil
            ? try matchingRun(
                forecast, utcOffset: response.utcOffsetSeconds, modelRun: fetch.issuedAt[forecast.model],
                locationID: location.id)
            : nil

        let runID: Int64
        let kind: StoreOutcome.Kind
        // A matching run that lacks some of the forecast's hours or dates is continued: it takes them.
        let continued = match.map { !$0.contained } ?? false
        var added = 0
        if let earlier = same ?? match.map({ (id: $0.id, fetchedAt: $0.fetchedAt) }) {
            runID = earlier.id
            kind = .repeated
            if let match, continued {
                added = try extendRun(runID, with: forecast, hash: hash, dailies: match.sameOffset)
            }
            // An import of an older copy moves the run's first fetch (and a fallback issue time) back:
            // every lead of the run changes, so its pairs' sums move with it.
            if fetch.fetchedAt < earlier.fetchedAt {
                try keepingSums(.run(runID, validTimes: nil)) {
                    try db.run(
                        "UPDATE forecast_runs SET fetched_at = ?, issued_at = CASE issued_at_source WHEN 'first_fetch' THEN ? ELSE issued_at END WHERE id = ?",
                        [.integer(fetch.fetchedAt), .integer(fetch.fetchedAt), .integer(runID)])
                }
            }
            if let modelRun = fetch.issuedAt[forecast.model] {
                try correctIssueTime(runID, to: modelRun, origin: fetch.origin)
            }
        } else {
            let modelRun = fetch.issuedAt[forecast.model]
            try db.run(
                """
                INSERT INTO forecast_runs (location_id, model, issued_at, issued_at_source, fetched_at,
                    grid_latitude, grid_longitude, grid_elevation, utc_offset_seconds, timezone, content_hash,
                    first_valid_time, last_valid_time, hour_count, day_count)
                VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                """,
                [
                    .integer(location.id), .text(forecast.model), .integer(modelRun ?? fetch.fetchedAt),
                    .text(modelRun == nil ? "first_fetch" : fetch.origin == .singleRun ? "single_run" : "model_run"),
                    .integer(fetch.fetchedAt),
                    .real(response.latitude), .real(response.longitude), response.elevation.sqlValue,
                    .integer(Int64(response.utcOffsetSeconds)), .text(response.timezone), .integer(hash),
                    forecast.hourlyTimes.min().sqlValue, forecast.hourlyTimes.max().sqlValue,
                    // Distinct counts: `insertRows` keeps one row per repeated hour or date.
                    .integer(Int64(Set(forecast.hourlyTimes).count)), .integer(Int64(Set(forecast.dailyDates).count))
                ])
            runID = db.lastInsertRowID
            kind = .stored
            try insertRows(forecast, runID: runID)
            try addSums(.run(runID, validTimes: nil))
        }
        if same == nil {
            try db.run(
                "INSERT OR IGNORE INTO run_content_hashes (location_id, model, content_hash, run_id) VALUES (?, ?, ?, ?)",
                [.integer(location.id), .text(forecast.model), .integer(hash), .integer(runID)])
        }
        try logFetch(
            fetch, locationID: location.id, model: forecast.model, outcome: kind.rawValue, runID: runID, error: nil)
        return StoreOutcome(
            kind: kind, model: forecast.model, runID: runID,
            hours: forecast.hourlyTimes.count, days: forecast.dailyDates.count,
            addedHours: added, continued: continued)
    }

    /// Gives a stored run measured from its first fetch the initialisation time a better source
    /// (model metadata, the Single Runs API, `import --issued-at`) now names for the same content,
    /// moving its pairs' sums with every lead. A time after the run's first fetch cannot be its
    /// initialisation and is not taken; a known issue time is never replaced.
    func correctIssueTime(_ runID: Int64, to modelRun: Int64, origin: FetchOrigin) throws {
        guard
            let run = try db.firstRow(
                "SELECT issued_at_source, fetched_at FROM forecast_runs WHERE id = ?", [.integer(runID)],
                { (source: $0.string(0), fetchedAt: $0.int64(1)) }),
            run.source == "first_fetch", modelRun <= run.fetchedAt
        else { return }
        try keepingSums(.run(runID, validTimes: nil)) {
            try db.run(
                "UPDATE forecast_runs SET issued_at = ?, issued_at_source = ? WHERE id = ?",
                [.integer(modelRun), .text(origin == .singleRun ? "single_run" : "model_run"), .integer(runID)])
        }
    }

    /// The initialisation times of the location's stored runs of `model` issued in `from..<to`
    /// whose issue time is a known model run (from metadata or the Single Runs API): what a
    /// backfill skips without a request.
    public func knownRunTimes(locationID: Int64, model: String, from: Int64, to: Int64) throws -> Set<Int64> {
        let statement = try db.cachedStatement(
            """
            SELECT issued_at FROM forecast_runs WHERE location_id = ? AND model = ? AND issued_at >= ? AND issued_at < ?
              AND issued_at_source != 'first_fetch'
            """)
        try statement.bind([.integer(locationID), .text(model), .integer(from), .integer(to)])
        defer { statement.reset() }
        var times = Set<Int64>()
        while let row = try statement.step() { times.insert(row.int64(0)) }
        return times
    }

    /// How far apart the windows of two copies of one model run may start or end (`matchingRun`).
    static let matchWindow: Int64 = 3 * 86400

    /// A stored run that is the same model run as `forecast`.
    struct RunMatch {
        var id: Int64
        var fetchedAt: Int64
        /// Every hour (and, under the same offset, every date) of `forecast` is already stored.
        var contained: Bool
        /// The run was stored under the same UTC offset, so its daily rows are comparable.
        var sameOffset: Bool
    }

    /// The newest unpruned run of this location and model that agrees with `forecast` on every hour
    /// they share (at least a day of hours, or all of the forecast's) and, when both have the same
    /// UTC offset, on every shared date: the same model run however the response was cut. Daily
    /// values under another offset cover other 24 hours, so they are not compared. When both the
    /// response's model run time (`modelRun`) and a run's are known, they must be equal: another
    /// model run that happens to give the same values (as synthetic histories do) is not this one.
    /// Only runs near this one are compared: a model run is current for a day at most (the slowest
    /// models update every 12 h), so two copies of it were fetched within about a day of each other,
    /// and their windows start (local midnight minus `past_days`) or end (plus `forecast_days`)
    /// within a day or two unless both options changed in between. A run whose window starts and
    /// ends more than `matchWindow` away is another one. (Not the fetch times: an import gives all
    /// its files one `--fetched-at`.) Without the bound, hourly fetches compared every run of the
    /// last 16 days, each a seek.
    func matchingRun(_ forecast: ModelForecast, utcOffset: Int, modelRun: Int64?, locationID: Int64) throws
        -> RunMatch?
    {
        let times = forecast.hourlyTimes
        // Only a response in ascending time order (as Open-Meteo writes them) is compared.
        guard let first = times.first, let last = times.last, zip(times, times.dropFirst()).allSatisfy({ $0 < $1 })
        else { return nil }
        // Runs whose hours overlap the forecast's, each with its row at its first hour the forecast
        // also has (if both have it): a different model run disagrees there, so most are turned
        // away by this one query, read from the window indexes alone.
        let candidates = try db.rows(
            Self.candidateRunsSQL,
            [.integer(locationID), .text(forecast.model), .integer(last), .integer(first), .integer(Self.matchWindow)]
        ) { row in disagrees(forecast, row) ? nil : row.int64(0) }
        // The few left: their details, newest first.
        var agreeing = try candidates.compactMap { $0 }.compactMap { id in
            try db.firstRow(Self.candidateDetailsSQL, [.integer(id), modelRun.sqlValue]) {
                (id: id, fetchedAt: $0.int64(0), offset: $0.int(1), issuedAt: $0.int64(2))
            }
        }
        agreeing.sort { ($0.issuedAt, $0.id) > ($1.issuedAt, $1.id) }
        for candidate in agreeing {
            guard let shared = try sharedHours(forecast, runID: candidate.id),
                shared >= min(24, times.count)
            else { continue }
            let sameOffset = candidate.offset == utcOffset
            var allDates = true
            if sameOffset {
                guard let dates = try sharedDates(forecast, runID: candidate.id) else { continue }
                allDates = dates == Set(forecast.dailyDates).count
            }
            return RunMatch(
                id: candidate.id, fetchedAt: candidate.fetchedAt,
                contained: shared == times.count && allDates, sameOffset: sameOffset)
        }
        return nil
    }

    /// The runs `matchingRun` compares: their ids from two ranges of the window indexes (start near
    /// ?4, end near ?3; migration 0011), not a filter over every run of the location and model, each
    /// with its stored row at the forecast's first hour or its own, whichever is later.
    static let candidateRunsSQL = {
        let runs =
            "SELECT id, first_valid_time FROM forecast_runs "
            + "WHERE location_id = ?1 AND model = ?2 AND first_valid_time <= ?3 AND last_valid_time >= ?4 AND "
        return "SELECT r.id, r.first_valid_time, h.valid_time, "
            + Variables.hourlyNames.map { "h." + $0 }.joined(separator: ", ")
            + " FROM (" + runs + "first_valid_time BETWEEN ?4 - ?5 AND ?4 + ?5 UNION ALL "
            + runs
            + "last_valid_time BETWEEN ?3 - ?5 AND ?3 + ?5 AND first_valid_time NOT BETWEEN ?4 - ?5 AND ?4 + ?5) r "
            + "LEFT JOIN hourly_forecasts h ON h.run_id = r.id AND h.valid_time = max(r.first_valid_time, ?4)"
    }()
    /// A candidate's details, when it is not pruned and was issued at the model run asked about
    /// (or its issue time is only its first fetch).
    static let candidateDetailsSQL = """
        SELECT fetched_at, utc_offset_seconds, issued_at FROM forecast_runs
        WHERE id = ?1 AND pruned_at IS NULL AND (?2 IS NULL OR issued_at_source = 'first_fetch' OR issued_at = ?2)
        """

    /// Whether a candidate row of `candidateRunsSQL` holds a value the forecast has otherwise at
    /// the same hour (false when the row or the hour is missing: `sharedHours` decides then).
    func disagrees(_ forecast: ModelForecast, _ row: Row) -> Bool {
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

    // Built once: these run for every candidate run and observation hour of an ingest.
    static let runHoursSQL =
        "SELECT valid_time, " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM hourly_forecasts WHERE run_id = ? AND valid_time BETWEEN ? AND ? ORDER BY valid_time"
    static let runDaysSQL =
        "SELECT date, " + Variables.dailyNames.joined(separator: ", ") + " FROM daily_forecasts WHERE run_id = ?"
    static let observationValuesSQL =
        "SELECT recorded_at, " + Variables.hourlyNames.joined(separator: ", ")
        + " FROM observations WHERE location_id = ? AND time = ? AND source = ?"

    /// How many of `forecast`'s (ascending) hours the run holds, all with the same values; nil at
    /// the first disagreement.
    func sharedHours(_ forecast: ModelForecast, runID: Int64) throws -> Int? {
        let times = forecast.hourlyTimes
        guard let first = times.first, let last = times.last else { return 0 }
        let statement = try db.cachedStatement(Self.runHoursSQL)
        try statement.bind([.integer(runID), .integer(first), .integer(last)])
        defer { statement.reset() }
        // Both sides ascend in time (responses do; the key orders the stored rows): walk them
        // together, and stop at the first disagreement, which for a new model run is the first hour.
        var row = 0
        var shared = 0
        while let stored = try statement.step() {
            let time = stored.int64(0)
            while row < times.count && times[row] < time { row += 1 }
            guard row < times.count else { break }
            guard times[row] == time else { continue }
            for (index, column) in forecast.hourly.enumerated()
            where (column?[row] ?? nil) != stored.optionalDouble(index + 1) {
                return nil
            }
            shared += 1
        }
        return shared
    }

    /// How many of `forecast`'s dates the run holds, all with the same values; nil at the first disagreement.
    func sharedDates(_ forecast: ModelForecast, runID: Int64) throws -> Int? {
        var dayOf: [String: Int] = [:]
        for (row, date) in forecast.dailyDates.enumerated() where dayOf[date] == nil { dayOf[date] = row }
        let days = try db.cachedStatement(Self.runDaysSQL)
        try days.bind([.integer(runID)])
        defer { days.reset() }
        var shared = 0
        while let stored = try days.step() {
            guard let row = dayOf[stored.string(0)] else { continue }
            for (index, column) in forecast.daily.enumerated()
            where (column?[row] ?? nil) != stored.optionalDouble(index + 1) {
                return nil
            }
            shared += 1
        }
        return shared
    }

    /// Adds the hours (and, when `dailies`, the dates) `forecast` has that the run lacks, and takes
    /// its content hash, so the next identical response is recognised at once. Dates under another
    /// UTC offset are other days, so they are not mixed into the run. Returns the number of hours added.
    @discardableResult
    func extendRun(_ runID: Int64, with forecast: ModelForecast, hash: Int64, dailies: Bool) throws -> Int {
        let storedHours = Set(
            try db.rows("SELECT valid_time FROM hourly_forecasts WHERE run_id = ?", [.integer(runID)]) { $0.int64(0) })
        let storedDates = Set(
            try db.rows("SELECT date FROM daily_forecasts WHERE run_id = ?", [.integer(runID)]) { $0.string(0) })
        var extra = ModelForecast(model: forecast.model)
        let hourRows = forecast.hourlyTimes.indices.filter { !storedHours.contains(forecast.hourlyTimes[$0]) }
        extra.hourlyTimes = hourRows.map { forecast.hourlyTimes[$0] }
        extra.hourly = forecast.hourly.map { column in column.map { values in hourRows.map { values[$0] } } }
        let dayRows =
            dailies ? forecast.dailyDates.indices.filter { !storedDates.contains(forecast.dailyDates[$0]) } : []
        extra.dailyDates = dayRows.map { forecast.dailyDates[$0] }
        extra.daily = forecast.daily.map { column in column.map { values in dayRows.map { values[$0] } } }
        try insertRows(extra, runID: runID)
        // Only the new hours make new pairs; the run's other pairs are already summed.
        if !extra.hourlyTimes.isEmpty { try addSums(.run(runID, validTimes: Set(extra.hourlyTimes))) }
        try db.run(
            """
            UPDATE forecast_runs SET content_hash = ?2,
                hour_count = (SELECT count(*) FROM hourly_forecasts WHERE run_id = ?1),
                day_count = (SELECT count(*) FROM daily_forecasts WHERE run_id = ?1),
                first_valid_time = (SELECT min(valid_time) FROM hourly_forecasts WHERE run_id = ?1),
                last_valid_time = (SELECT max(valid_time) FROM hourly_forecasts WHERE run_id = ?1)
            WHERE id = ?1
            """,
            [.integer(runID), .integer(hash)])
        return extra.hourlyTimes.count
    }

    func insertRows(_ forecast: ModelForecast, runID: Int64) throws {
        if !forecast.hourlyTimes.isEmpty {
            let insert = try db.cachedStatement(Self.hourlyInsertSQL)
            let columns = forecast.hourly
            var seen = Set<Int64>()
            for (row, time) in forecast.hourlyTimes.enumerated() {
                // A repeated hour (DST artefacts in hand-edited files) keeps its first value.
                guard seen.insert(time).inserted else { continue }
                try insert.bind(runID, at: 1)
                try insert.bind(time, at: 2)
                for (index, column) in columns.enumerated() {
                    try insert.bind(column?[row] ?? nil, at: Int32(index + 3))
                }
                try insert.runToCompletion()
            }
        }
        if !forecast.dailyDates.isEmpty {
            let insert = try db.cachedStatement(Self.dailyInsertSQL)
            var seen = Set<String>()
            for (row, date) in forecast.dailyDates.enumerated() {
                guard seen.insert(date).inserted else { continue }
                try insert.bind(runID, at: 1)
                try insert.bind(.text(date), at: 2)
                for (index, column) in forecast.daily.enumerated() {
                    let value = column?[row] ?? nil
                    if Variables.daily[index].quantity == .instant, let value {
                        try insert.bind(Int64(value), at: Int32(index + 3))
                    } else {
                        try insert.bind(value, at: Int32(index + 3))
                    }
                }
                try insert.runToCompletion()
            }
        }
    }

    /// Inserts or updates one observation: a newer recording replaces the values it has and keeps
    /// those it lacks (a CSV of precipitation does not erase temperatures); an older one changes nothing.
    /// With `replacing`, the values replace the stored ones whenever they were recorded (the user's
    /// latest file is the correction, even when an earlier import carried a clock that ran ahead).
    public func upsertObservation(
        locationID: Int64, source: String, time: Int64, values: [Double?], recordedAt: Int64,
        replacing: Bool = false
    ) throws {
        func write() throws {
            let upsert = try db.cachedStatement(replacing ? Self.observationReplaceSQL : Self.observationUpsertSQL)
            try upsert.bind(locationID, at: 1)
            try upsert.bind(.text(source), at: 2)
            try upsert.bind(time, at: 3)
            for (index, value) in values.enumerated() { try upsert.bind(value, at: Int32(index + 4)) }
            try upsert.bind(recordedAt, at: Int32(values.count + 4))
            try upsert.runToCompletion()
        }
        // The same values again (a repeated fetch's past hours) change no pair: only the row is written.
        guard keepsSums, try observationChanges(locationID, source, time, values, recordedAt, replacing) else {
            return try write()
        }
        try keepingObservationSums(
            ObservationSpan(location: locationID, source: source, from: time, through: time), write)
    }

    /// Whether the upsert would change a stored value (or add the row), as its SQL decides: a value
    /// replaces the stored one unless NULL, and without `replacing` only when recorded no earlier.
    func observationChanges(
        _ locationID: Int64, _ source: String, _ time: Int64, _ values: [Double?], _ recordedAt: Int64,
        _ replacing: Bool
    ) throws -> Bool {
        let statement = try db.cachedStatement(Self.observationValuesSQL)
        try statement.bind([.integer(locationID), .integer(time), .text(source)])
        defer { statement.reset() }
        guard let row = try statement.step() else { return true }
        if !replacing, recordedAt < row.int64(0) { return false }
        for (index, value) in values.enumerated() {
            if let value, value != row.optionalDouble(index + 1) { return true }
        }
        return false
    }

    /// Like `upsertObservations`, in one transaction of its own.
    @discardableResult
    public func saveObservations(
        _ series: ModelForecast, through: Int64 = .max, locationID: Int64, source: String,
        recordedAt: Int64
    ) throws -> Int {
        try db.transaction {
            try upsertObservations(
                series, through: through, locationID: locationID, source: source, recordedAt: recordedAt)
        }
    }

    /// Upserts a series' hours (those valid at or before `through`) as observations of `source`;
    /// hours with no value at all are skipped. Returns how many hours were written.
    @discardableResult
    public func upsertObservations(
        _ series: ModelForecast, through: Int64 = .max, locationID: Int64, source: String,
        recordedAt: Int64
    ) throws -> Int {
        var rows: [(time: Int64, values: [Double?])] = []
        for (row, time) in series.hourlyTimes.enumerated() where time <= through {
            let values = series.hourly.map { $0?[row] ?? nil }
            if values.allSatisfy({ $0 == nil }) { continue }
            rows.append((time, values))
        }
        func write() throws {
            for row in rows {
                try upsertObservation(
                    locationID: locationID, source: source, time: row.time, values: row.values, recordedAt: recordedAt)
            }
        }
        // The sums of the pairs of every hour that changes are updated once for the whole series
        // (one subtraction and one addition over its changed span), not hour by hour: a fetch's past
        // hours or a backfill's year touch many of the same groups. Inside a batch that keeps the
        // sums of these hours itself (`storeAll`), nothing is to be done here.
        let keptOutside =
            rows.isEmpty
            || sumsKeptOutside.contains {
                $0.covers(
                    location: locationID, source: source, from: rows.map(\.time).min()!,
                    through: rows.map(\.time).max()!)
            }
        let changed =
            try keepsSums && !keptOutside
            ? rows.filter {
                try observationChanges(locationID, source, $0.time, $0.values, recordedAt, false)
            }.map(\.time) : []
        guard let first = changed.min(), let last = changed.max() else {
            try keeping(.enclosingWrite, write)
            return rows.count
        }
        try keepingObservationSums(ObservationSpan(location: locationID, source: source, from: first, through: last)) {
            try keeping(.enclosingWrite, write)
        }
        return rows.count
    }

    /// Records one attempt in the fetch log.
    public func logFetch(
        _ fetch: FetchRecord, locationID: Int64?, model: String?, outcome: String, runID: Int64?, error: String?
    ) throws {
        try db.run(
            """
            INSERT INTO fetch_log (attempted_at, location_id, model, origin, outcome, http_status, error, duration_ms, run_id, request, api_weight)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """,
            [
                .integer(fetch.fetchedAt), locationID.sqlValue, model.sqlValue, .text(fetch.origin.rawValue),
                .text(outcome),
                // A server's reason is quoted in the error; stored escaped, as it would be printed.
                fetch.httpStatus.sqlValue, error.map { $0.escapingControls() }.sqlValue,
                fetch.durationMilliseconds.sqlValue, runID.sqlValue,
                fetch.request.sqlValue,
                fetch.apiWeight.sqlValue
            ])
    }

    /// Records a failed attempt (its own small transaction, so it survives the failure it describes).
    public func logFailure(_ fetch: FetchRecord, locationID: Int64?, model: String?, error: String) throws {
        try logFailures(fetch, for: [(locationID, model)], error: error)
    }

    /// Records one failed attempt for several locations and models (a batched request) in one
    /// transaction of its own. A location removed meanwhile (by another command) has no log left
    /// to write to: only its own rows are skipped.
    public func logFailures(_ fetch: FetchRecord, for targets: [(locationID: Int64?, model: String?)], error: String)
        throws
    {
        try db.transaction {
            for target in targets {
                if let id = target.locationID, try !locationExists(id: id) { continue }
                try logFetch(
                    fetch, locationID: target.locationID, model: target.model, outcome: "failed", runID: nil,
                    error: error)
            }
        }
    }
}
