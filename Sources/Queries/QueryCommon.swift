import WxCore
import WxStore

/// Why a query has nothing to show, worded so the user knows what is missing and what to do.
public enum QueryError: Error, CustomStringConvertible, Equatable {
    /// The location has no forecast runs (of `model`, when one was asked for).
    case noRuns(location: String, model: String?)
    /// The location has no observations at all, or none from `source`.
    case noObservations(location: String, source: String?, available: [String])
    /// Runs and observations exist, but no forecast hour lines up with an observation.
    case noPairs(location: String, variable: String, source: String, detail: String)
    /// No run holds a forecast for the hour asked for.
    case noForecastForHour(location: String, time: Int64, detail: String)
    /// A variable the query cannot score.
    case unsupportedVariable(String, reason: String)
    /// The database holds a column name this build does not know (never from user input).
    case unknownColumn(String)

    public var description: String {
        switch self {
        case .noRuns(let location, let model):
            let what =
                model.map { "no forecast runs of model \($0) stored for \(location)" }
                ?? "no forecast runs stored for \(location)"
            return
                "\(what); run 'wxdb ingest --location \(Self.quoted(location))' to fetch one, or 'wxdb import FILE --location \(Self.quoted(location)) --fetched-at TIME'"
        case .noObservations(let location, let source, let available):
            let fix =
                "run 'wxdb observe backfill --location \(Self.quoted(location)) --from DATE --to DATE' or 'wxdb observe import FILE.csv --location \(Self.quoted(location))'"
            guard let source else { return "no observations stored for \(location); \(fix)" }
            let others =
                available.isEmpty
                ? "" : " (stored sources: \(available.joined(separator: ", ")); pick one with --source)"
            return "no observations for \(location) from source \(source)\(others); \(fix)"
        case .noPairs(let location, let variable, let source, let detail):
            return
                "no \(variable) forecast for \(location) has an observation from source \(source) at its valid time\(detail.isEmpty ? "" : " (\(detail))"); widen --from/--to, pick another --source, or add observations for the forecast hours with 'wxdb observe backfill' or 'wxdb observe import'"
        case .noForecastForHour(let location, let time, let detail):
            return
                "no stored run forecasts \(location) at \(CivilTime.isoUTC(time))\(detail.isEmpty ? "" : " (\(detail))"); pick an hour inside the stored forecasts (see 'wxdb query runs --location \(Self.quoted(location))')"
        case .unsupportedVariable(let name, let reason):
            return "\(name) cannot be scored this way: \(reason)"
        case .unknownColumn(let name):
            return "internal error: \(name) is not a known variable column"
        }
    }

    static func quoted(_ name: String) -> String {
        name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" || $0 == "-" || $0 == "." } ? name : "\"\(name)\""
    }
}

/// A span of UTC instants: `from` inclusive, `to` exclusive; either end may be open.
public struct TimeRange: Sendable, Equatable {
    public var from: Int64?
    public var to: Int64?
    public init(from: Int64? = nil, to: Int64? = nil) {
        self.from = from
        self.to = to
    }
    /// "between A and B", for messages.
    var phrase: String {
        switch (from, to) {
        case (nil, nil): return ""
        case (let f?, nil): return "from \(CivilTime.isoUTC(f))"
        case (nil, let t?): return "before \(CivilTime.isoUTC(t))"
        case (let f?, let t?): return "from \(CivilTime.isoUTC(f)) to before \(CivilTime.isoUTC(t))"
        }
    }
}

/// Observation sources: which ones a location has, and which is best.
public enum ObservationSources {
    /// The location's sources, best first: measurements (any imported source, a station file)
    /// before model output: `era5`, then the analyses (`analysis:<model>`), then `current`.
    public static func ranked(_ store: any Store, locationID: Int64) throws -> [String] {
        try store.observationSources(locationID: locationID)
    }

    /// `requested` when the location has it; else the best-ranked source that pairs with the
    /// forecasts asked for (`pairing`), else the best-ranked one; by default never the analysis of one
    /// of `models` (the models compared: a model is not scored against its own output). Throws when there is none.
    public static func resolve(
        _ store: any Store, location: Location, requested: String?, pairing: Pairing? = nil, models: [String] = []
    ) throws -> String {
        let stored = try ranked(store, locationID: location.id)
        let sources =
            requested != nil
            ? stored
            : stored.filter { source in !models.contains { SourceNames.isOwnAnalysis(source: source, model: $0) } }
        if let requested {
            guard sources.contains(requested) else {
                throw QueryError.noObservations(location: location.name, source: requested, available: sources)
            }
            return requested
        }
        guard let best = sources.first else {
            guard stored.isEmpty else {
                throw QueryError.noPairs(
                    location: location.name, variable: pairing?.variable.name ?? "forecast",
                    source: stored.joined(separator: ", "),
                    detail:
                        "those are the analyses of the models asked about, and a model is not scored against its own output"
                )
            }
            throw QueryError.noObservations(location: location.name, source: nil, available: stored)
        }
        if let pairing {
            for source in sources where try pairing.pairs(store, locationID: location.id, source: source) {
                return source
            }
        }
        return best
    }

    /// The forecasts a default source must pair with: one variable, valid in a range, of one model
    /// or all, with leads (seconds) in a range inside the lead rule's [0, 384 h).
    public struct Pairing: Sendable {
        public var variable: Variable
        public var range: TimeRange
        public var model: String?
        /// Models that must each pair (compare's two); when given, `model` is not used.
        public var models: [String]
        public var leadSeconds: Range<Int64>

        public init(
            variable: Variable, range: TimeRange = TimeRange(), model: String? = nil, models: [String] = [],
            leadSeconds: Range<Int64> = 0..<LeadRule.maxSeconds
        ) {
            self.variable = variable
            self.range = range
            self.model = model
            self.models = models
            self.leadSeconds = leadSeconds.clamped(to: 0..<LeadRule.maxSeconds)
        }

        func pairs(_ store: any Store, locationID: Int64, source: String) throws -> Bool {
            for model in models.isEmpty ? [model] : models.map(Optional.some) {
                // A probability of precipitation is checked against observed precipitation.
                let pairs = try store.sourcePairs(
                    locationID: locationID, source: source, forecast: variable, observed: variable.observedVariable,
                    from: range.from, to: range.to, model: model, leadSeconds: leadSeconds)
                if !pairs { return false }
            }
            return true
        }
    }
}

/// Checks shared by the queries.
enum QuerySupport {
    /// The SQL column of an hourly variable, taken from the fixed whitelist only.
    static func column(_ variable: Variable) throws -> String {
        guard let name = Variables.hourlyNames.first(where: { $0 == variable.name }) else {
            throw QueryError.unknownColumn(variable.name)
        }
        return name
    }

    /// Throws `noRuns` when the location has no runs (of `model`, when given).
    static func requireRuns(_ store: any Store, location: Location, model: String?) throws {
        if try store.runCount(locationID: location.id, model: model) == 0 {
            throw QueryError.noRuns(location: location.name, model: model)
        }
    }

    /// What the location's forecasts and one source's observations cover, for a "no pairs" message.
    static func coverage(_ store: any Store, location: Location, source: String) throws -> String {
        let forecasts = try store.forecastSpan(locationID: location.id)
        let observations = try store.observationSpan(locationID: location.id, source: source)
        func span(_ pair: (first: Int64?, last: Int64?)) -> String {
            guard let a = pair.first, let b = pair.last else { return "nothing" }
            return "\(CivilTime.isoUTC(a)) to \(CivilTime.isoUTC(b))"
        }
        return "forecasts cover \(span(forecasts)); \(source) observations cover \(span(observations))"
    }

    /// Whether a variable is a temperature (so a bias reads warm/cold).
    static func isTemperature(_ variable: Variable) -> Bool { variable.quantity == .temperature }
}
