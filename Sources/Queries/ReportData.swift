import WxCore
import WxStore

/// One bin of a reliability diagram: forecasts whose probability fell in `[from, to)` percent.
public struct ReliabilityBin: Sendable, Equatable {
    public var from: Int
    public var to: Int
    public var n: Int
    /// Mean forecast probability in the bin, in %.
    public var meanForecast: Double
    /// How often the event happened after those forecasts, in %.
    public var observedFrequency: Double
}

/// How probability forecasts compared with what happened, bin by bin.
public struct Reliability: Sendable, Equatable {
    public var variable: Variable
    public var source: String
    public var thresholdMillimetres: Double
    /// Non-empty bins of 10 percentage points (the last, 90–100, includes 100).
    public var bins: [ReliabilityBin]
    /// Pruned runs forecasting hours of the range: their pairs survive only as sums, so they are in
    /// `query verify`'s scores but not in these bins (another population, said on the chart).
    public var prunedRuns = 0
    public var n: Int { bins.reduce(0) { $0 + $1.n } }
}

/// Reliability of probability forecasts (`precipitation_probability` against observed precipitation).
public enum ReliabilityQuery {
    /// Every stored pair with a lead of 0 up to 384 h, the pairs `wxdb query verify` scores (pruned
    /// runs' pairs survive only as sums, so they are not in the bins), binned by forecast probability.
    public static func reliability(
        _ store: any Store, location: Location, variable: Variable, source: String? = nil,
        range: TimeRange = TimeRange(), model: String? = nil, thresholdMillimetres: Double = 0.1
    ) throws -> Reliability {
        guard variable.isProbability else {
            throw QueryError.unsupportedVariable(variable.name, reason: "it is not a probability")
        }
        try QuerySupport.requireRuns(store, location: location, model: model)
        let source = try ObservationSources.resolve(
            store, location: location, requested: source,
            pairing: .init(variable: variable, range: range, model: model))
        var counts = [Int](repeating: 0, count: 10)
        var forecastSums = [Double](repeating: 0, count: 10)
        var events = [Int](repeating: 0, count: 10)
        let filter = PairFilter(locationID: location.id, source: source, from: range.from, to: range.to, model: model)
        try store.forEachVerificationPair(forecast: variable, observed: variable.observedVariable, filter) { row in
            let lead = row.validTime - row.issuedAt
            guard lead >= 0, lead < Int64(LeadBuckets.maxLeadHours) * 3600 else { return }
            let probability = row.forecast
            let observed = row.observed
            guard probability.isFinite, observed.isFinite else { return }
            let bin = min(9, max(0, Int((probability / 10).rounded(.down))))
            counts[bin] += 1
            forecastSums[bin] += probability
            if observed >= thresholdMillimetres { events[bin] += 1 }
        }
        let bins = (0..<10).filter { counts[$0] > 0 }.map { (index: Int) -> ReliabilityBin in
            ReliabilityBin(
                from: index * 10, to: index * 10 + 10, n: counts[index],
                meanForecast: forecastSums[index] / Double(counts[index]),
                observedFrequency: 100 * Double(events[index]) / Double(counts[index]))
        }
        guard !bins.isEmpty else {
            let detail = try QuerySupport.coverage(store, location: location, source: source)
            throw QueryError.noPairs(location: location.name, variable: variable.name, source: source, detail: detail)
        }
        var result = Reliability(
            variable: variable, source: source, thresholdMillimetres: thresholdMillimetres, bins: bins)
        result.prunedRuns = try store.prunedRuns(
            validBetween: range.from ?? Int64.min / 2, and: range.to ?? Int64.max / 2, locationID: location.id,
            model: model)
        return result
    }
}

/// Which hours had a fetch, and which should have had one and did not.
public struct FetchCoverage: Sendable, Equatable {
    public enum State: String, Sendable {
        /// At least one fetch stored a new run.
        case fetched
        /// Fetches only returned content already stored.
        case repeated
        /// No successful fetch where the usual interval expected one, or only failed attempts.
        case missed
    }

    /// Hours (Unix seconds at their start) with their state, oldest first.
    public var hours: [(hour: Int64, state: State)]
    /// The usual interval between successful fetches, in hours (the most common gap).
    public var cadenceHours: Int

    public static func == (a: FetchCoverage, b: FetchCoverage) -> Bool {
        a.cadenceHours == b.cadenceHours && a.hours.map(\.hour) == b.hours.map(\.hour)
            && a.hours.map(\.state) == b.hours.map(\.state)
    }

    public func count(_ state: State) -> Int { hours.filter { $0.state == state }.count }
}

/// The fetch log as a calendar of hours.
public enum CoverageQuery {
    /// Hours with a successful fetch are fetched or repeated; an hour with only failed attempts, and
    /// every hour of a gap between successful fetches longer than the usual interval (beyond that
    /// interval), is missed.
    public static func coverage(_ store: any Store, location: Location, range: TimeRange = TimeRange()) throws
        -> FetchCoverage
    {
        let log = try store.fetchHours(locationID: location.id, from: range.from, to: range.to)
        let successful = log.filter { $0.stored + $0.repeated > 0 }.map(\.hour)
        var gaps: [Int64: Int] = [:]
        for (a, b) in zip(successful, successful.dropFirst()) { gaps[(b - a) / 3600, default: 0] += 1 }
        let cadence = Int(gaps.max { x, y in x.value != y.value ? x.value < y.value : x.key > y.key }?.key ?? 1)
        let cadenceHours = min(24, max(1, cadence))
        var states: [Int64: FetchCoverage.State] = [:]
        for hour in log {
            states[hour.hour] = hour.stored > 0 ? .fetched : hour.repeated > 0 ? .repeated : .missed
        }
        let step = Int64(cadenceHours) * 3600
        for (a, b) in zip(successful, successful.dropFirst()) where b - a > step {
            var hour = a + step
            while hour < b {
                if states[hour] == nil { states[hour] = .missed }
                hour += 3600
            }
        }
        return FetchCoverage(
            hours: states.keys.sorted().map { ($0, states[$0]!) }, cadenceHours: cadenceHours)
    }
}
