// The Store requirements for reads, pairs, kept sums and exports that the PostgreSQL engine does not fill yet.
// NOT BUILT YET on PostgreSQL: each stub below throws `PostgresStoreGap`, a clear `Error:` that names
// the operation, so a command that needs one refuses before writing anything. Each is replaced by
// its implementation (in a file of its own beside this one) as the engine grows; this file goes
// when the last one has.
import WxCore
import WxStore

extension PostgresEngine {
    public func knownRunTimes(locationID: Int64, model: String, from: Int64, to: Int64) throws -> Set<Int64> {
        throw PostgresStoreGap(operation: "knownRunTimes")
    }

    public func observationSources(locationID: Int64) throws -> [String] {
        throw PostgresStoreGap(operation: "observationSources")
    }

    public func runCount(locationID: Int64, model: String?) throws -> Int {
        throw PostgresStoreGap(operation: "runCount")
    }

    public func forecastSpan(locationID: Int64, model: String?) throws -> (first: Int64?, last: Int64?) {
        throw PostgresStoreGap(operation: "forecastSpan")
    }

    public func observationSpan(locationID: Int64, source: String) throws -> (first: Int64?, last: Int64?) {
        throw PostgresStoreGap(operation: "observationSpan")
    }

    public func observedValue(_ variable: Variable, locationID: Int64, source: String, time: Int64) throws -> Double? {
        throw PostgresStoreGap(operation: "observedValue")
    }

    public func runSummaries(locationID: Int64, model: String?, issuedFrom: Int64, issuedTo: Int64) throws
        -> [RunSummary]
    {
        throw PostgresStoreGap(operation: "runSummaries")
    }

    public func forecasts(of variable: Variable, locationID: Int64, validTime: Int64, model: String?) throws
        -> [HourForecast]
    {
        throw PostgresStoreGap(operation: "forecasts")
    }

    public func runCountsByModel(locationID: Int64) throws -> [(model: String, runs: Int)] {
        throw PostgresStoreGap(operation: "runCountsByModel")
    }

    public func fetchHours(locationID: Int64, from: Int64?, to: Int64?) throws -> [FetchHour] {
        throw PostgresStoreGap(operation: "fetchHours")
    }

    public func tableCounts() throws -> [(table: String, rows: Int64)] {
        throw PostgresStoreGap(operation: "tableCounts")
    }

    public func activities() throws -> [Int64: LocationActivity] {
        throw PostgresStoreGap(operation: "activities")
    }

    public func activity(locationID: Int64) throws -> LocationActivity {
        throw PostgresStoreGap(operation: "activity")
    }

    public func fetchedHours(locationID: Int64, since: Int64) throws -> [Int64] {
        throw PostgresStoreGap(operation: "fetchedHours")
    }

    public func apiWeightUsed(from: Int64, to: Int64) throws -> Double {
        throw PostgresStoreGap(operation: "apiWeightUsed")
    }

    public func prunableRuns(before cutoff: Int64, limit: Int) throws -> [PrunableRun] {
        throw PostgresStoreGap(operation: "prunableRuns")
    }

    public func prunableTotals(before cutoff: Int64) throws -> (runs: Int, hours: Int, days: Int) {
        throw PostgresStoreGap(operation: "prunableTotals")
    }

    public func prunedRunsCovering(_ validTime: Int64, locationID: Int64, model: String?) throws -> Int {
        throw PostgresStoreGap(operation: "prunedRunsCovering")
    }

    public func prunedRuns(validBetween start: Int64, and end: Int64, locationID: Int64, model: String?) throws -> Int {
        throw PostgresStoreGap(operation: "prunedRuns")
    }

    public func sourcePairs(
        locationID: Int64, source: String, forecast: Variable, observed: Variable,
        from: Int64?, to: Int64?, model: String?, leadSeconds: Range<Int64>
    ) throws -> Bool {
        throw PostgresStoreGap(operation: "sourcePairs")
    }

    public func forEachVerificationPair(
        forecast: Variable, observed: Variable, _ filter: PairFilter, _ visit: (VerificationPair) throws -> Void
    ) throws {
        throw PostgresStoreGap(operation: "forEachVerificationPair")
    }

    public func trendPairs(
        _ variable: Variable, _ filter: PairFilter, model: String, minLead: Double, maxLead: Double,
        targetLead: Double
    ) throws -> [(valid: Int64, run: Int64, issued: Int64, forecast: Double, observed: Double)] {
        throw PostgresStoreGap(operation: "trendPairs")
    }

    public func forEachExportPair(_ variable: Variable, _ filter: PairFilter, _ visit: (ExportPair) throws -> Void)
        throws
    {
        throw PostgresStoreGap(operation: "forEachExportPair")
    }

    public func forEachVerifPair(_ variable: Variable, _ filter: PairFilter, _ visit: (VerifPair) throws -> Void) throws
    {
        throw PostgresStoreGap(operation: "forEachVerifPair")
    }

    public func persistenceReferences(locationID: Int64, source: String, observed: Variable, model: String?) throws
        -> [Int64: Double]
    {
        throw PostgresStoreGap(operation: "persistenceReferences")
    }

    public func forEachForecastSequence(
        locationID: Int64, model: String, variable: String, leadFromHours: Double, leadToHours: Double,
        from: Int64?, to: Int64?, _ visit: (ForecastValue) throws -> Void
    ) throws {
        throw PostgresStoreGap(operation: "forEachForecastSequence")
    }

    public func forEachSummary(
        locationID: Int64, source: String, variable: String, model: String?,
        cutBy range: (from: Int64, to: Int64)?, _ visit: (StoredSummary) throws -> Void
    ) throws {
        throw PostgresStoreGap(operation: "forEachSummary")
    }

    public func summaryTotals(
        locationID: Int64, source: String, variable: String, model: String?, from: Int64, to: Int64
    ) throws -> [SummaryTotal] {
        throw PostgresStoreGap(operation: "summaryTotals")
    }

    public func summaryDays(locationID: Int64) throws -> [(source: String, variable: String, from: Int64, to: Int64)] {
        throw PostgresStoreGap(operation: "summaryDays")
    }

    public func sumsPending() throws -> Bool {
        throw PostgresStoreGap(operation: "sumsPending")
    }

    public func checkSums(repair: Bool) throws -> SumsCheck {
        throw PostgresStoreGap(operation: "checkSums")
    }

    public func forEachHourlyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (HourlyForecastRow) throws -> Void
    ) throws {
        throw PostgresStoreGap(operation: "forEachHourlyForecast")
    }

    public func forEachDailyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (DailyForecastRow) throws -> Void
    ) throws {
        throw PostgresStoreGap(operation: "forEachDailyForecast")
    }

    public func forEachObservation(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (ObservationRow) throws -> Void
    )
        throws
    {
        throw PostgresStoreGap(operation: "forEachObservation")
    }
}
