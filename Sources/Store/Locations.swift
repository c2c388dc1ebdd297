import WxCore

/// A saved place wxdb fetches forecasts for.
public struct Location: Sendable, Equatable {
    public var id: Int64
    public var name: String
    public var latitude: Double
    public var longitude: Double
    public var elevation: Double?
    public var timezone: String
    /// Open-Meteo model names; the first is the default.
    public var models: [String]
    public var createdAt: Int64

    public var defaultModel: String { models.first ?? "best_match" }

    /// A value with every field given (engines build these from their rows).
    public init(
        id: Int64, name: String, latitude: Double, longitude: Double, elevation: Double? = nil, timezone: String,
        models: [String], createdAt: Int64
    ) {
        self.id = id
        self.name = name
        self.latitude = latitude
        self.longitude = longitude
        self.elevation = elevation
        self.timezone = timezone
        self.models = models
        self.createdAt = createdAt
    }
}

extension Location {
    /// Checks a new location's name and coordinates, as every engine does before saving it
    /// (`LocationError` says what is wrong).
    public static func checkNew(name: String, latitude: Double, longitude: Double) throws {
        guard !name.trimmed().isEmpty else { throw LocationError.invalidName("it is empty") }
        guard (-90...90).contains(latitude) else {
            throw LocationError.invalidCoordinate("latitude \(latitude) is outside -90...90")
        }
        guard (-180...180).contains(longitude) else {
            throw LocationError.invalidCoordinate("longitude \(longitude) is outside -180...180")
        }
    }

    /// Refuses a name already saved (`existing` is the engine's look-up of it).
    public static func checkUnused(_ name: String, existing: Location?) throws {
        if existing != nil { throw LocationError.duplicate(name) }
    }

    /// The models a new location is saved with: those given, or `best_match`.
    public static func savedModels(_ models: [String]) -> [String] { models.isEmpty ? ["best_match"] : models }
}

/// Errors about locations, worded for the user.
public enum LocationError: Error, CustomStringConvertible, Equatable {
    case unknown(String)
    case duplicate(String)
    case invalidName(String)
    case invalidCoordinate(String)

    public var description: String {
        switch self {
        case .unknown(let name):
            return "no location named \"\(name)\". See 'wxdb locations list', or add it with 'wxdb locations add'"
        case .duplicate(let name):
            return "a location named \"\(name)\" already exists. Pick another name, or remove it first"
        case .invalidName(let why):
            return "invalid location name: \(why); pick another name"
        case .invalidCoordinate(let why):
            return why
        }
    }
}

/// Store errors a user can act on.
public enum StoreError: Error, CustomStringConvertible {
    case wouldDeleteHistory(name: String, runs: Int, observations: Int)
    /// A column name that is not one of the variables wxdb keeps (never from user input).
    case unknownColumn(String)
    /// The location was removed (by another command) after this one looked it up.
    case locationRemoved(name: String)

    public var description: String {
        switch self {
        case .wouldDeleteHistory(let name, let runs, let observations):
            return
                "\"\(name)\" has \(runs) forecast runs and \(observations) observations stored; add --purge to delete them with the location"
        case .unknownColumn(let name):
            return "internal error: \(name) is not a known variable column"
        case .locationRemoved(let name):
            return "the location \"\(name)\" was removed while this command ran; nothing was stored for it"
        }
    }
}
