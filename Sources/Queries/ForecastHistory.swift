import WxCore
import WxStore

/// What every stored run forecast for one hour: how the forecast converged.
public struct ForecastHistory: Sendable, Equatable {
    /// One run's forecast for the hour.
    public struct Entry: Sendable, Equatable {
        public var runID: Int64
        public var model: String
        public var issuedAt: Int64
        /// (valid time − issued at) / 3600.
        public var leadHours: Double
        /// The forecast value in the display unit; nil when the run did not have the variable.
        public var value: Double?
        /// Change from the previous run of the same model that had a value; nil for the first.
        public var change: Double?
    }

    public var location: String
    public var variable: Variable
    public var units: UnitSystem
    public var validTime: Int64
    /// Runs with a lead ≥ 0 for the hour, by issue time.
    public var entries: [Entry]
    /// Runs holding the hour as a past hour (issued after it): not forecasts, so not listed.
    public var laterRuns: Int
    /// Runs that forecast the hour but were pruned (their hourly rows are gone), so not listed.
    public var prunedRuns: Int
    /// The observation at the hour from `observedSource`, in the display unit.
    public var observed: Double?
    public var observedSource: String?
}

/// `wxdb query forecast`.
public enum ForecastHistoryQuery {
    /// Every run's forecast of `variable` for the hour `validTime`, oldest run first, with the
    /// observation from `source` (default: the best source holding a value for that hour).
    public static func history(
        _ store: any Store, location: Location, validTime: Int64, variable: Variable,
        source: String? = nil, model: String? = nil, units: UnitSystem = .metric
    ) throws -> ForecastHistory {
        _ = try QuerySupport.column(variable)
        try QuerySupport.requireRuns(store, location: location, model: model)
        let rows = try store.forecasts(of: variable, locationID: location.id, validTime: validTime, model: model)

        let forecasts = rows.filter { $0.issuedAt <= validTime }
        let pruned = try store.prunedRunsCovering(validTime, locationID: location.id, model: model)
        guard !forecasts.isEmpty else {
            let span = try store.forecastSpan(locationID: location.id, model: model)
            var detail = ""
            if pruned > 0 {
                detail =
                    "the \(pruned) run(s) that forecast it were pruned: their hourly rows are gone, their scores are kept for 'wxdb query verify'"
            } else if !rows.isEmpty {
                detail = "\(rows.count) run(s) hold it only as a past hour, issued after it"
            } else if let a = span.first, let b = span.last {
                detail = "stored forecasts cover \(CivilTime.isoUTC(a)) to \(CivilTime.isoUTC(b))"
                if validTime % 3600 != 0 { detail += "; forecasts are hourly, give a whole hour" }
            }
            throw QueryError.noForecastForHour(location: location.name, time: validTime, detail: detail)
        }

        var previous: [String: Double] = [:]
        var entries: [ForecastHistory.Entry] = []
        for row in forecasts {
            let value = row.value.map { units.convert($0, variable.quantity) }
            var change: Double?
            if let value, let before = previous[row.model] { change = SummarySums.difference(value, before, variable) }
            if let value { previous[row.model] = value }
            entries.append(
                ForecastHistory.Entry(
                    runID: row.runID, model: row.model, issuedAt: row.issuedAt,
                    leadHours: Double(validTime - row.issuedAt) / 3600, value: value, change: change))
        }

        // The observation: the requested source, else the best-ranked source with a value then.
        let sources = try ObservationSources.ranked(store, locationID: location.id)
        if let source, !sources.contains(source) {
            throw QueryError.noObservations(location: location.name, source: source, available: sources)
        }
        var observed: Double?
        var observedSource: String?
        for candidate in source.map({ [$0] }) ?? sources {
            if let value = try store.observedValue(
                variable, locationID: location.id, source: candidate, time: validTime)
            {
                observed = units.convert(value, variable.quantity)
                observedSource = candidate
                break
            }
        }
        return ForecastHistory(
            location: location.name, variable: variable, units: units, validTime: validTime,
            entries: entries, laterRuns: rows.count - forecasts.count, prunedRuns: pruned,
            observed: observed, observedSource: observedSource)
    }
}
