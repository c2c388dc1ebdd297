import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Hour by hour, or averaged per local day.
public enum TrendInterval: String, Sendable, CaseIterable {
    case hour, day
}

/// What `wxdb query trend` follows.
public struct TrendOptions: Sendable {
    public var variable: Variable
    /// The lead wanted, in hours.
    public var leadHours: Double
    /// How far a run's lead may be from `leadHours` and still count. The default of 3 h means a
    /// location fetched every 6 hours always has a run to pick.
    public var toleranceHours: Double
    public var range: TimeRange
    public var every: TrendInterval
    public var source: String?
    /// The model to follow; nil means the location's first model when it has runs, else the model
    /// with the most runs (one series never mixes models).
    public var model: String?
    public var units: UnitSystem

    public init(
        variable: Variable, leadHours: Double, toleranceHours: Double = 3, range: TimeRange = TimeRange(),
        every: TrendInterval = .hour, source: String? = nil, model: String? = nil, units: UnitSystem = .metric
    ) {
        self.variable = variable
        self.leadHours = leadHours
        self.toleranceHours = toleranceHours
        self.range = range
        self.every = every
        self.source = source
        self.model = model
        self.units = units
    }
}

/// One hour (or local day) of a trend.
public struct TrendPoint: Sendable, Equatable {
    /// The valid hour, or the first hour of the local day that had pairs.
    public var time: Int64
    /// The local date (`YYYY-MM-DD`) when averaging per day.
    public var date: String?
    /// The chosen run, hour by hour (nil for daily points).
    public var runID: Int64?
    public var issuedAt: Int64?
    public var leadHours: Double?
    /// Forecast and observed value (daily: means), error = forecast − observed, in the display unit.
    public var forecast: Double
    public var observed: Double
    public var error: Double
    /// Mean error of every hour up to and including this point.
    public var runningBias: Double
    /// Hours behind the point (1 hour by hour).
    public var hours: Int
}

/// The result of `wxdb query trend`.
public struct TrendResult: Sendable, Equatable {
    public var location: String
    public var variable: Variable
    public var source: String
    public var model: String
    public var leadHours: Double
    public var toleranceHours: Double
    public var every: TrendInterval
    public var units: UnitSystem
    public var points: [TrendPoint]
    /// Scores over every hour of the trend.
    public var overall: ContinuousScores
}

/// `wxdb query trend`: observed against the forecast issued a given lead ahead.
public enum TrendQuery {
    /// For each valid hour with an observation, the run of the chosen model whose lead is closest to
    /// `leadHours` among those within `toleranceHours` (the earlier run on a tie), with the error and
    /// the running bias; with `.day`, hours are averaged per local day of the location's time zone.
    public static func trend(_ store: Store, location: Location, options: TrendOptions) throws -> TrendResult {
        let variable = options.variable
        if variable.verification == .categorical || variable.isProbability {
            throw QueryError.unsupportedVariable(
                variable.name,
                reason: variable.verification == .categorical
                    ? "it is a category (a WMO code), not a quantity; see 'wxdb query forecast --var \(variable.name)'"
                    : "a probability has no observed counterpart to subtract; see its Brier score with 'wxdb query verify --var \(variable.name)'"
            )
        }
        _ = try QuerySupport.column(variable)
        try QuerySupport.requireRuns(store, location: location, model: options.model)
        let model = try options.model ?? defaultModel(store, location: location)
        let target = options.leadHours * 3600
        let tolerance = options.toleranceHours * 3600
        let source = try ObservationSources.resolve(
            store, location: location, requested: options.source,
            pairing: .init(
                variable: variable, range: options.range, model: model,
                leadSeconds: Int64((target - tolerance).rounded(.up))..<(Int64((target + tolerance).rounded(.down)) + 1)
            ))
        let rows = try store.trendPairs(
            variable,
            PairFilter(locationID: location.id, source: source, from: options.range.from, to: options.range.to),
            model: model, minLead: target - tolerance, maxLead: target + tolerance, targetLead: target)

        // The first row of each valid hour is the chosen run (the ORDER BY ranks them).
        var hourly: [TrendPoint] = []
        var overall = ContinuousScores()
        var lastValid: Int64?
        for row in rows where row.valid != lastValid {
            lastValid = row.valid
            let observed = options.units.convert(row.observed, variable.quantity)
            let error = QuerySupport.difference(
                options.units.convert(row.forecast, variable.quantity), observed, variable)
            overall.add(forecast: observed + error, observed: observed)
            hourly.append(
                TrendPoint(
                    time: row.valid, date: nil, runID: row.run, issuedAt: row.issued,
                    leadHours: Double(row.valid - row.issued) / 3600,
                    forecast: observed + error, observed: observed, error: error, runningBias: overall.bias ?? 0,
                    hours: 1))
        }
        guard !hourly.isEmpty else {
            var detail =
                "model \(model), lead \(JSON.numberText(options.leadHours)) ± \(JSON.numberText(options.toleranceHours)) h"
            if !options.range.phrase.isEmpty { detail += ", valid \(options.range.phrase)" }
            detail += "; " + (try QuerySupport.coverage(store, location: location, source: source))
            throw QueryError.noPairs(location: location.name, variable: variable.name, source: source, detail: detail)
        }
        let points = options.every == .hour ? hourly : daily(hourly, timezone: location.timezone)
        return TrendResult(
            location: location.name, variable: variable, source: source, model: model,
            leadHours: options.leadHours, toleranceHours: options.toleranceHours, every: options.every,
            units: options.units, points: points, overall: overall)
    }

    /// The location's first model when it has runs, else the model with the most runs.
    static func defaultModel(_ store: Store, location: Location) throws -> String {
        let counts = try store.runCountsByModel(locationID: location.id)
        if counts.contains(where: { $0.model == location.defaultModel }) { return location.defaultModel }
        guard let first = counts.first else { throw QueryError.noRuns(location: location.name, model: nil) }
        return first.model
    }

    /// Hourly points averaged per local day; the running bias stays weighted by hours.
    public static func daily(_ hourly: [TrendPoint], timezone: String) -> [TrendPoint] {
        var days: [TrendPoint] = []
        var sumErrors = 0.0
        var count = 0
        for point in hourly {
            let date = ZoneTime.date(of: point.time, timezone: timezone)
            sumErrors += point.error
            count += 1
            if var last = days.last, last.date == date {
                let n = Double(last.hours)
                last.forecast = (last.forecast * n + point.forecast) / (n + 1)
                last.observed = (last.observed * n + point.observed) / (n + 1)
                last.error = (last.error * n + point.error) / (n + 1)
                last.hours += 1
                last.runningBias = sumErrors / Double(count)
                days[days.count - 1] = last
            } else {
                days.append(
                    TrendPoint(
                        time: point.time, date: date, runID: nil, issuedAt: nil, leadHours: nil,
                        forecast: point.forecast, observed: point.observed, error: point.error,
                        runningBias: sumErrors / Double(count), hours: 1))
            }
        }
        return days
    }
}
