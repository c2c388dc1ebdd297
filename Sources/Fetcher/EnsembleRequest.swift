import FoundationEssentials
import WxCore
import WxStore

/// One Ensemble API request: locations that share options and ensemble models, in one URL.
///
/// The Ensemble API takes the Forecast API's location lists and units (round3.md §2.1), but has no
/// `current`, and wxdb asks only for the continuous hourly variables per member
/// (``EnsembleModels/variables``).
public struct EnsembleRequest: Sendable {
    /// Open-Meteo refuses one request weighing more than this (400 "Your API call requests too much
    /// data", openmeteo-api.md §rate limits); batches stay under it.
    public static let maxWeight = 5000.0

    public var locations: [Location]
    public var models: [String]
    public var forecastDays: Int
    public var pastDays: Int

    public init(locations: [Location], models: [String], forecastDays: Int, pastDays: Int = 0) {
        self.locations = locations
        self.models = models
        self.forecastDays = forecastDays
        self.pastDays = pastDays
    }

    /// The query: per-member continuous hourly variables, metric units, unix times, each location's zone.
    public var query: [(String, String)] {
        ForecastRequest(locations: locations, models: models, forecastDays: forecastDays, pastDays: pastDays)
            .place(hourly: EnsembleModels.variables.map(\.name))
    }

    /// The members the weight counts per model: the table's count, or the largest of any model for
    /// an ensemble wxdb does not know (counting high rather than low).
    static func countedMembers(_ model: String) -> Int {
        EnsembleModels.model(named: model)?.members ?? EnsembleModels.maxMembers
    }

    /// Open-Meteo's weighted call count: per location `max(1, v/10 × max(1, days/14))` with v =
    /// variables × models × ensemble members (openmeteo-api.md, "Weighted counting", from the
    /// server's `apiWeight`). Whether the server counts the control as a member is not documented;
    /// the table's member counts include it, which counts one member more if it does not.
    public var weight: Double {
        Double(locations.count) * Self.weightPerLocation(models: models, days: forecastDays + pastDays)
    }

    public static func weightPerLocation(models: [String], days: Int) -> Double {
        let members = models.reduce(0) { $0 + countedMembers($1) }
        return ForecastRequest.weightPerLocation(
            variables: EnsembleModels.variables.count * members, models: 1, days: days)
    }

    /// The locations split into requests of at most ``ForecastRequest/maxLocations`` that each weigh
    /// at most ``maxWeight`` (one 51-member model over 16 days weighs 52.5 per location, so 95 fit).
    public static func batches(locations: [Location], models: [String], forecastDays: Int, pastDays: Int = 0)
        -> [EnsembleRequest]
    {
        let perLocation = weightPerLocation(models: models, days: forecastDays + pastDays)
        let size = max(1, min(ForecastRequest.maxLocations, Int((maxWeight / perLocation).rounded(.down))))
        return stride(from: 0, to: locations.count, by: size).map { start in
            EnsembleRequest(
                locations: Array(locations[start..<min(start + size, locations.count)]), models: models,
                forecastDays: forecastDays, pastDays: pastDays)
        }
    }
}
