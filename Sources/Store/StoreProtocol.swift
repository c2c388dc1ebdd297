import WxCore

// What wxdb stores and asks for, in domain types: the one boundary between the commands (Fetcher,
// Queries, CLI) and an engine. `SQLiteStore` fills it today; a second engine (PostgreSQL, issue #30)
// fills the same requirements with its own SQL, reusing the engine-neutral arithmetic in Core
// (`SummarySums`, `PairScore`) and here (`SummedPairs`). Nothing in it names a connection, a
// statement or SQL. A store is used from one thread at a time, like the connection under it.

/// A wxdb database, whatever engine keeps it. Every engine keeps ensemble members too (`EnsembleStore`),
/// so no command needs an engine without them.
public protocol Store: EnsembleStore {
    /// Where the store is, as the user named it (a file path, or a URL with its password redacted).
    var path: String { get }
    /// Why the store was opened read-only (a reading command on a store the user cannot write), or nil.
    var readOnlyReason: String? { get }
    /// The name of the newest migration applied.
    func schemaVersion() throws -> String?

    // MARK: Locations

    /// Saves a new location; a name already used is refused (`LocationError`).
    func addLocation(
        name: String, latitude: Double, longitude: Double, elevation: Double?,
        timezone: String, models: [String], now: Int64
    ) throws -> Location
    /// The location of exactly that name (as saved: "Berlin" is not "berlin"), or nil.
    func location(named name: String) throws -> Location?
    /// The location of that name, or `LocationError.unknown` with the names there are.
    func requireLocation(named name: String) throws -> Location
    /// The location of that id, or nil.
    func location(id: Int64) throws -> Location?
    /// Every saved location, by name.
    func locations() throws -> [Location]
    /// Every location's id and name (or only `only`'s), for the doctor and exports.
    func locationsByID(only id: Int64?) throws -> [(id: Int64, name: String)]
    /// Changes a location's time zone and/or models.
    func updateLocation(named name: String, timezone: String?, models: [String]?) throws -> Location
    /// Removes a location; with `purge`, its runs and observations too (counts returned).
    func removeLocation(named name: String, purge: Bool) throws -> (runs: Int, observations: Int)
    /// Whether `location` is still saved as it was read (not removed or re-added meanwhile).
    func isStillSaved(_ location: Location) throws -> Bool
    /// Takes the time zone of a response for a location saved with `auto`.
    func adoptTimezoneIfAuto(_ location: Location, from response: ForecastResponse) throws

    // MARK: Writes (each whole or not at all, keeping the verification sums current)

    /// Stores one fetched response: a new run per model, or a repeat of a run already stored.
    func store(_ response: ForecastResponse, for location: Location, fetch: FetchRecord) throws -> [StoreOutcome]
    /// Stores many responses in one write (all or none), made one chunk at a time by `make`;
    /// `stored` hears about each as it is stored. `make` is called in the items' order, one call
    /// at a time, but an engine may call it on another thread while it stores the chunk before
    /// (PostgreSQL does), so it must not use the store.
    func storeAll<Item>(
        _ items: [Item], for location: Location,
        make: (Item) throws -> (response: ForecastResponse, fetch: FetchRecord),
        stored: (Item, [StoreOutcome]) -> Void
    ) throws -> [StoreOutcome]
    /// Stores (or with `replacing`, replaces) one hour of observations, values in `Variables.hourly` order.
    func upsertObservation(
        locationID: Int64, source: String, time: Int64, values: [Double?], recordedAt: Int64, replacing: Bool
    ) throws
    /// Keeps a model's past hours as observations of `source` (an analysis), first write wins.
    func saveObservations(
        _ series: ModelForecast, through: Int64, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int
    /// Keeps a series' hours as observations of `source`, replacing what was there.
    func upsertObservations(
        _ series: ModelForecast, through: Int64, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int
    /// Imports a parsed observation CSV in one write; returns the hours stored.
    func importObservations(_ csv: StationCSV, locationID: Int64, source: String, recordedAt: Int64) throws -> Int
    /// Replaces a station's observations over the span of `result` in one write; returns the hours stored.
    func replaceStationObservations(
        _ result: StationImport, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int
    /// Records one fetch in the fetch log.
    func logFetch(
        _ fetch: FetchRecord, locationID: Int64?, model: String?, outcome: String, runID: Int64?, error: String?
    ) throws
    /// Records a failed fetch.
    func logFailure(_ fetch: FetchRecord, locationID: Int64?, model: String?, error: String) throws
    /// Records one failed fetch for several targets in one write.
    func logFailures(_ fetch: FetchRecord, for targets: [(locationID: Int64?, model: String?)], error: String) throws
    /// Prunes up to `limit` runs issued before `cutoff` (their sums are kept); nil when none is left.
    func pruneBatch(issuedBefore cutoff: Int64, now: Int64, limit: Int) throws -> PruneBatch?

    // MARK: Reads of runs, observations and fetches

    /// The issue times of the model's runs issued in [from, to] at the location.
    func knownRunTimes(locationID: Int64, model: String, from: Int64, to: Int64) throws -> Set<Int64>
    /// The observation sources of the location, by name.
    func observationSources(locationID: Int64) throws -> [String]
    /// How many runs the location has (of `model`, when given).
    func runCount(locationID: Int64, model: String?) throws -> Int
    /// The first and last valid time of the location's stored forecasts.
    func forecastSpan(locationID: Int64, model: String?) throws -> (first: Int64?, last: Int64?)
    /// The first and last time of a source's observations.
    func observationSpan(locationID: Int64, source: String) throws -> (first: Int64?, last: Int64?)
    /// One observed value, or nil.
    func observedValue(_ variable: Variable, locationID: Int64, source: String, time: Int64) throws -> Double?
    /// The runs issued in [issuedFrom, issuedTo], by issue time.
    func runSummaries(locationID: Int64, model: String?, issuedFrom: Int64, issuedTo: Int64) throws -> [RunSummary]
    /// Every stored forecast of `variable` for one valid time, by issue time.
    func forecasts(of variable: Variable, locationID: Int64, validTime: Int64, model: String?) throws
        -> [HourForecast]
    /// How many runs each model has at the location.
    func runCountsByModel(locationID: Int64) throws -> [(model: String, runs: Int)]
    /// Each hour's fetch counts (stored, repeated, failed) in [from, to).
    func fetchHours(locationID: Int64, from: Int64?, to: Int64?) throws -> [FetchHour]
    /// Rows per table, for `stats`.
    func tableCounts() throws -> [(table: String, rows: Int64)]
    /// The bytes the database takes on disk, for `stats`: the file and its write-ahead log on
    /// SQLite, the database on a PostgreSQL server.
    func databaseBytes() throws -> Int64
    /// The tables `tableCounts` counts from the runs rather than row by row.
    var tablesCountedFromRuns: [String] { get }
    /// Each location's runs, fetches and observations.
    func activities() throws -> [Int64: LocationActivity]
    /// One location's runs, fetches and observations.
    func activity(locationID: Int64) throws -> LocationActivity
    /// The hours with a stored fetch since `since`.
    func fetchedHours(locationID: Int64, since: Int64) throws -> [Int64]
    /// The API weight the fetches in [from, to) used.
    func apiWeightUsed(from: Int64, to: Int64) throws -> Double
    /// Runs that `pruneBatch` would prune, oldest first.
    func prunableRuns(before cutoff: Int64, limit: Int) throws -> [PrunableRun]
    /// What pruning before `cutoff` would remove.
    func prunableTotals(before cutoff: Int64) throws -> (runs: Int, hours: Int, days: Int)
    /// How many pruned runs had a forecast valid at `validTime`.
    func prunedRunsCovering(_ validTime: Int64, locationID: Int64, model: String?) throws -> Int
    /// How many pruned runs had forecasts valid in [start, end].
    func prunedRuns(validBetween start: Int64, and end: Int64, locationID: Int64, model: String?) throws -> Int

    // MARK: Pairs and kept sums (for verify, compare, trend, exports)

    /// Whether `source` pairs with any stored forecast of `forecast` under these bounds (or with kept sums).
    func sourcePairs(
        locationID: Int64, source: String, forecast: Variable, observed: Variable,
        from: Int64?, to: Int64?, model: String?, leadSeconds: Range<Int64>
    ) throws -> Bool
    /// Streams every forecast/observation pair of `forecast` with `observed`'s observation at its valid time.
    func forEachVerificationPair(
        forecast: Variable, observed: Variable, _ filter: PairFilter, _ visit: (VerificationPair) throws -> Void
    ) throws
    /// The pairs of one model nearest `targetLead`, for trends.
    func trendPairs(
        _ variable: Variable, _ filter: PairFilter, model: String, minLead: Double, maxLead: Double,
        targetLead: Double
    ) throws -> [(valid: Int64, run: Int64, issued: Int64, forecast: Double, observed: Double)]
    /// Streams pairs for `export pairs`, oldest run first.
    func forEachExportPair(_ variable: Variable, _ filter: PairFilter, _ visit: (ExportPair) throws -> Void) throws
    /// Streams pairs for `export verif` (`filter.model` required), by issue and valid time.
    func forEachVerifPair(_ variable: Variable, _ filter: PairFilter, _ visit: (VerifPair) throws -> Void) throws
    /// The persistence reference of each issue time (see `SQLiteStore.persistenceReferences`).
    func persistenceReferences(locationID: Int64, source: String, observed: Variable, model: String?) throws
        -> [Int64: Double]
    /// Streams one model's forecasts of a variable at leads in [leadFromHours, leadToHours], by valid time.
    func forEachForecastSequence(
        locationID: Int64, model: String, variable: String, leadFromHours: Double, leadToHours: Double,
        from: Int64?, to: Int64?, _ visit: (ForecastValue) throws -> Void
    ) throws
    /// Streams the kept sums of one source and variable (cut to whole days of `range` when given).
    func forEachSummary(
        locationID: Int64, source: String, variable: String, model: String?,
        cutBy range: (from: Int64, to: Int64)?, _ visit: (StoredSummary) throws -> Void
    ) throws
    /// The kept sums of one source and variable added up per model and lead band over [from, to).
    func summaryTotals(
        locationID: Int64, source: String, variable: String, model: String?, from: Int64, to: Int64
    ) throws -> [SummaryTotal]
    /// The days the kept sums cover, per source and variable.
    func summaryDays(locationID: Int64) throws -> [(source: String, variable: String, from: Int64, to: Int64)]
    /// Whether kept sums still wait for a rebuild.
    func sumsPending() throws -> Bool
    /// Recomputes the kept sums from the pairs and compares (and with `repair`, rewrites) them.
    func checkSums(repair: Bool) throws -> SumsCheck

    // MARK: Exports

    /// Streams hourly forecast rows, by location, issue time and valid time.
    func forEachHourlyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (HourlyForecastRow) throws -> Void
    ) throws
    /// Streams daily forecast rows, by location, issue time and date.
    func forEachDailyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (DailyForecastRow) throws -> Void
    ) throws
    /// Streams observation rows, by location, time and source.
    func forEachObservation(_ variables: [Variable], _ filter: ExportFilter, _ visit: (ObservationRow) throws -> Void)
        throws
}

// The requirements' usual arguments (a protocol requirement cannot carry defaults).
extension Store {
    public func locationsByID() throws -> [(id: Int64, name: String)] { try locationsByID(only: nil) }
    public func runCount(locationID: Int64) throws -> Int { try runCount(locationID: locationID, model: nil) }
    public func forecastSpan(locationID: Int64) throws -> (first: Int64?, last: Int64?) {
        try forecastSpan(locationID: locationID, model: nil)
    }
    public func storeAll<Item>(
        _ items: [Item], for location: Location,
        make: (Item) throws -> (response: ForecastResponse, fetch: FetchRecord)
    ) throws -> [StoreOutcome] {
        try storeAll(items, for: location, make: make, stored: { _, _ in })
    }
    public func upsertObservation(
        locationID: Int64, source: String, time: Int64, values: [Double?], recordedAt: Int64
    ) throws {
        try upsertObservation(
            locationID: locationID, source: source, time: time, values: values, recordedAt: recordedAt,
            replacing: false)
    }
    public func saveObservations(_ series: ModelForecast, locationID: Int64, source: String, recordedAt: Int64)
        throws -> Int
    {
        try saveObservations(series, through: .max, locationID: locationID, source: source, recordedAt: recordedAt)
    }
    public func upsertObservations(_ series: ModelForecast, locationID: Int64, source: String, recordedAt: Int64)
        throws -> Int
    {
        try upsertObservations(series, through: .max, locationID: locationID, source: source, recordedAt: recordedAt)
    }
    public func forEachSummary(
        locationID: Int64, source: String, variable: String, model: String?,
        _ visit: (StoredSummary) throws -> Void
    ) throws {
        try forEachSummary(locationID: locationID, source: source, variable: variable, model: model, cutBy: nil, visit)
    }
    public func summaryTotals(locationID: Int64, source: String, variable: String, model: String?) throws
        -> [SummaryTotal]
    {
        try summaryTotals(
            locationID: locationID, source: source, variable: variable, model: model, from: .min, to: .max)
    }
    public func checkSums() throws -> SumsCheck { try checkSums(repair: false) }
}

/// How a command will use the store.
public enum StoreAccess: Sendable { case write, read }

/// Which pairs the kept sums hold, shared by every engine.
public enum SummedPairs {
    /// The variables whose pairs are summed: every one that is scored (weather codes are categories).
    public static let variables = Variables.hourly.filter { $0.verification != .categorical }
    /// The threshold (mm) at which the 2x2 and Brier sums are kept.
    public static let threshold = 0.1
}
