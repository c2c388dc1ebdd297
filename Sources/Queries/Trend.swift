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
    /// The level of the intervals of each day's mean error and of the overall bias; nil for none.
    public var confidence: Double?

    public init(
        variable: Variable, leadHours: Double, toleranceHours: Double = 3, range: TimeRange = TimeRange(),
        every: TrendInterval = .hour, source: String? = nil, model: String? = nil, units: UnitSystem = .metric,
        confidence: Double? = 0.95
    ) {
        self.confidence = confidence
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
    /// Per day: the interval of the day's mean error (a HAC interval over its hours, which share
    /// the day's weather; `DailyDifferenceTest` with hours as the units); nil hour by hour and for a
    /// day of fewer than 8 hours.
    public var errorInterval: ScoreInterval?
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
    /// The interval of the overall bias, with days as the units (errors persist with the weather);
    /// nil without intervals or with fewer than 8 days.
    public var biasInterval: ScoreInterval?
    /// The first and last valid hour behind the points (also when they are per day), so hourly and
    /// daily trends of the same hours speak of the same period.
    public var firstValidTime: Int64 = 0
    public var lastValidTime: Int64 = 0
}

/// `wxdb query trend`: observed against the forecast issued a given lead ahead.
public enum TrendQuery {
    /// For each valid hour with an observation, the run of the chosen model whose lead is closest to
    /// `leadHours` among those within `toleranceHours` (the earlier run on a tie), with the error and
    /// the running bias; with `.day`, hours are averaged per local day of the location's time zone.
    public static func trend(_ store: any Store, location: Location, options: TrendOptions) throws -> TrendResult {
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
            let error = SummarySums.difference(
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
        let points =
            options.every == .hour
            ? hourly
            : daily(
                hourly, timezone: location.timezone, sum: variable.quantity == .precipitation,
                confidence: options.confidence)
        var result = TrendResult(
            location: location.name, variable: variable, source: source, model: model,
            leadHours: options.leadHours, toleranceHours: options.toleranceHours, every: options.every,
            units: options.units, points: points, overall: overall, firstValidTime: hourly[0].time,
            lastValidTime: hourly[hourly.count - 1].time)
        if let confidence = options.confidence {
            result.biasInterval = biasInterval(hourly, timezone: location.timezone, confidence: confidence)
        }
        return result
    }

    /// The overall bias's interval: the HAC test of `DailyDifferenceTest` on each local day's sum of errors.
    static func biasInterval(_ hourly: [TrendPoint], timezone: String, confidence: Double) -> ScoreInterval? {
        var days: [DailyDifference] = []
        var lastDate: String?
        for point in hourly {
            let date = ZoneTime.date(of: point.time, timezone: timezone)
            if date == lastDate {
                days[days.count - 1].sum += point.error
                days[days.count - 1].hours += 1
            } else {
                // Calendar days by the hour's UTC day: close enough to number the gaps between local days.
                days.append(DailyDifference(day: point.time / 86_400, sum: point.error, hours: 1))
                lastDate = date
            }
        }
        var unique: [DailyDifference] = []
        for day in days {
            if unique.last?.day == day.day {
                unique[unique.count - 1].sum += day.sum
                unique[unique.count - 1].hours += day.hours
            } else {
                unique.append(day)
            }
        }
        return DailyDifferenceTest(daily: unique, confidence: confidence).confidenceInterval.map {
            ScoreInterval(low: $0.low, high: $0.high)
        }
    }

    /// Every model with runs at the location: the location's own models first, in its order, then
    /// the others by run count.
    public static func models(_ store: any Store, location: Location) throws -> [String] {
        let stored = try store.runCountsByModel(locationID: location.id).map(\.model)
        return location.models.filter(stored.contains) + stored.filter { !location.models.contains($0) }
    }

    /// The location's first model when it has runs, else the model with the most runs.
    static func defaultModel(_ store: any Store, location: Location) throws -> String {
        let counts = try store.runCountsByModel(locationID: location.id)
        if counts.contains(where: { $0.model == location.defaultModel }) { return location.defaultModel }
        guard let first = counts.first else { throw QueryError.noRuns(location: location.name, model: nil) }
        return first.model
    }

    /// Hourly points averaged per local day (summed with `sum`: a day of hourly precipitation is
    /// its total, not a mean of hourly mm); the running bias stays the mean over hours. With
    /// `confidence`, each day's error gets its interval from its hours.
    public static func daily(
        _ hourly: [TrendPoint], timezone: String, sum: Bool = false, confidence: Double? = nil
    ) -> [TrendPoint] {
        var days: [TrendPoint] = []
        var sumErrors = 0.0
        var count = 0
        var hours: [DailyDifference] = []
        func close() {
            guard let confidence, !days.isEmpty else { return }
            // The interval is of the day's mean error; a summed day's error is that mean times its hours.
            let scale = sum ? Double(days[days.count - 1].hours) : 1
            days[days.count - 1].errorInterval = DailyDifferenceTest(daily: hours, confidence: confidence)
                .confidenceInterval.map { ScoreInterval(low: $0.low * scale, high: $0.high * scale) }
            hours.removeAll(keepingCapacity: true)
        }
        for point in hourly {
            let date = ZoneTime.date(of: point.time, timezone: timezone)
            if days.last?.date != date { close() }
            // Hours are the units of a day's interval: a missing hour is a gap.
            if confidence != nil { hours.append(DailyDifference(day: point.time / 3600, sum: point.error, hours: 1)) }
            sumErrors += point.error
            count += 1
            if var last = days.last, last.date == date {
                let n = Double(last.hours), weight = sum ? 1 : n + 1, kept = sum ? 1 : n
                last.forecast = (last.forecast * kept + point.forecast) / weight
                last.observed = (last.observed * kept + point.observed) / weight
                last.error = (last.error * kept + point.error) / weight
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
        close()
        return days
    }
}
