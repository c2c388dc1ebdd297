/// A physical quantity's unit family, so values can be converted to metric on the way in and to
/// imperial for display.
public enum Quantity: Sendable {
    case temperature, percent, precipitation, pressure, speed, direction, code, instant
}

/// How forecasts of a variable are scored against observations.
public enum Verification: Sendable, Hashable {
    /// A quantity: errors are differences (bias, MAE, RMSE, correlation).
    case continuous
    /// An angle in degrees: errors go the short way round the compass (350° against 10° is 20° off).
    case circular
    /// A probability in % that another variable (named) reaches the event threshold, scored against
    /// that variable's observation (Brier score).
    case probability(of: String)
    /// A category (a WMO code): not a quantity, so not scored.
    case categorical
}

/// A variable wxdb keeps, named as Open-Meteo names it.
public struct Variable: Sendable, Hashable, CustomStringConvertible {
    public let name: String
    public let quantity: Quantity
    /// Older spellings Open-Meteo still accepts and echoes (`weathercode`, `windspeed_10m`, ...).
    public let aliases: [String]
    /// How it is scored.
    public let verification: Verification
    /// Whether reaching the event threshold is also scored as a yes/no event (contingency table).
    public let hasEvent: Bool

    public init(
        name: String, quantity: Quantity, aliases: [String], verification: Verification = .continuous,
        hasEvent: Bool = false
    ) {
        self.name = name
        self.quantity = quantity
        self.aliases = aliases
        self.verification = verification
        self.hasEvent = hasEvent
    }

    public var description: String { name }

    /// The variable whose observation a forecast of this one is scored against (itself, except for
    /// a probability of another variable's event).
    public var observedVariable: Variable {
        guard case .probability(let other) = verification, let variable = Variables.hourlyVariable(named: other) else {
            return self
        }
        return variable
    }

    /// Whether it is a probability of another variable's event.
    public var isProbability: Bool {
        if case .probability = verification { return true }
        return false
    }

    /// The metric unit wxdb stores, as Open-Meteo writes it.
    public var unit: String {
        switch quantity {
        case .temperature: return "°C"
        case .percent: return "%"
        case .precipitation: return "mm"
        case .pressure: return "hPa"
        case .speed: return "km/h"
        case .direction: return "°"
        case .code: return "wmo code"
        case .instant: return "unixtime"
        }
    }
}

/// The variables wxdb keeps. Their order is the column order of the tables.
public enum Variables {
    /// Hourly variables; also the columns of observations.
    public static let hourly: [Variable] = [
        Variable(name: "temperature_2m", quantity: .temperature, aliases: [], verification: .continuous),
        Variable(
            name: "relative_humidity_2m", quantity: .percent, aliases: ["relativehumidity_2m"],
            verification: .continuous),
        Variable(name: "dew_point_2m", quantity: .temperature, aliases: ["dewpoint_2m"], verification: .continuous),
        Variable(name: "apparent_temperature", quantity: .temperature, aliases: [], verification: .continuous),
        Variable(
            name: "precipitation_probability", quantity: .percent, aliases: [],
            verification: .probability(of: "precipitation")),
        Variable(
            name: "precipitation", quantity: .precipitation, aliases: [], verification: .continuous, hasEvent: true),
        Variable(name: "weather_code", quantity: .code, aliases: ["weathercode"], verification: .categorical),
        Variable(name: "cloud_cover", quantity: .percent, aliases: ["cloudcover"], verification: .continuous),
        Variable(name: "pressure_msl", quantity: .pressure, aliases: [], verification: .continuous),
        Variable(name: "wind_speed_10m", quantity: .speed, aliases: ["windspeed_10m"], verification: .continuous),
        Variable(
            name: "wind_direction_10m", quantity: .direction, aliases: ["winddirection_10m"], verification: .circular),
        Variable(name: "wind_gusts_10m", quantity: .speed, aliases: ["windgusts_10m"], verification: .continuous)
    ]

    /// Daily variables; `sunrise` and `sunset` are instants.
    public static let daily: [Variable] = [
        Variable(name: "weather_code", quantity: .code, aliases: ["weathercode"], verification: .categorical),
        Variable(name: "temperature_2m_max", quantity: .temperature, aliases: []),
        Variable(name: "temperature_2m_min", quantity: .temperature, aliases: []),
        Variable(name: "precipitation_sum", quantity: .precipitation, aliases: []),
        Variable(name: "precipitation_probability_max", quantity: .percent, aliases: []),
        Variable(name: "wind_speed_10m_max", quantity: .speed, aliases: ["windspeed_10m_max"]),
        Variable(name: "sunrise", quantity: .instant, aliases: []),
        Variable(name: "sunset", quantity: .instant, aliases: [])
    ]

    /// Names of the hourly variables, in column order.
    public static let hourlyNames: [String] = hourly.map(\.name)
    public static let dailyNames: [String] = daily.map(\.name)

    /// The hourly variable named `name` (or an alias of it).
    public static func hourlyVariable(named name: String) -> Variable? {
        hourly.first { $0.name == name || $0.aliases.contains(name) }
    }

    /// The column index of an hourly variable.
    public static func hourlyIndex(of name: String) -> Int? {
        hourly.firstIndex { $0.name == name || $0.aliases.contains(name) }
    }

    /// Keys of the legacy `current_weather` block and the hourly variable each one is.
    public static let legacyCurrentWeather: [String: String] = [
        "temperature": "temperature_2m",
        "windspeed": "wind_speed_10m",
        "winddirection": "wind_direction_10m",
        "weathercode": "weather_code"
    ]

    /// Converts a value in `unit` (as Open-Meteo writes units) to wxdb's metric unit for `quantity`.
    /// Returns nil when the unit is not one Open-Meteo uses for that quantity.
    public static func toMetric(_ value: Double, unit: String, quantity: Quantity) -> Double? {
        switch (quantity, unit) {
        case (.temperature, "°C"), (.temperature, "\u{00B0}C"): return value
        case (.temperature, "°F"): return rounded((value - 32) * 5 / 9, places: 2)
        case (.precipitation, "mm"): return value
        case (.precipitation, "inch"): return rounded(value * 25.4, places: 2)
        case (.speed, "km/h"): return value
        case (.speed, "m/s"): return rounded(value * 3.6, places: 2)
        case (.speed, "mp/h"), (.speed, "mph"): return rounded(value * 1.609344, places: 2)
        case (.speed, "kn"): return rounded(value * 1.852, places: 2)
        case (.percent, "%"), (.pressure, "hPa"), (.direction, "°"), (.code, "wmo code"): return value
        default: return nil
        }
    }

    /// Metric to imperial for display (`--units imperial`): °F, mph, inch. Other quantities unchanged.
    public static func toImperial(_ value: Double, quantity: Quantity) -> Double {
        switch quantity {
        case .temperature: return value * 9 / 5 + 32
        case .speed: return value / 1.609344
        case .precipitation: return value / 25.4
        default: return value
        }
    }

    /// The unit shown for `quantity` in the given unit system.
    public static func displayUnit(_ quantity: Quantity, imperial: Bool) -> String {
        guard imperial else { return Variable(name: "", quantity: quantity, aliases: []).unit }
        switch quantity {
        case .temperature: return "°F"
        case .speed: return "mph"
        case .precipitation: return "in"
        default: return Variable(name: "", quantity: quantity, aliases: []).unit
        }
    }

    static func rounded(_ value: Double, places: Int) -> Double {
        let scale = places == 2 ? 100.0 : 10.0
        return (value * scale).rounded() / scale
    }
}

/// WMO weather interpretation codes as Open-Meteo documents them.
public enum WeatherCode {
    public static func label(_ code: Int) -> String {
        switch code {
        case 0: return "Clear sky"
        case 1: return "Mainly clear"
        case 2: return "Partly cloudy"
        case 3: return "Overcast"
        case 45: return "Fog"
        case 48: return "Depositing rime fog"
        case 51: return "Light drizzle"
        case 53: return "Moderate drizzle"
        case 55: return "Dense drizzle"
        case 56: return "Light freezing drizzle"
        case 57: return "Dense freezing drizzle"
        case 61: return "Slight rain"
        case 63: return "Moderate rain"
        case 65: return "Heavy rain"
        case 66: return "Light freezing rain"
        case 67: return "Heavy freezing rain"
        case 71: return "Slight snow fall"
        case 73: return "Moderate snow fall"
        case 75: return "Heavy snow fall"
        case 77: return "Snow grains"
        case 80: return "Slight rain showers"
        case 81: return "Moderate rain showers"
        case 82: return "Violent rain showers"
        case 85: return "Slight snow showers"
        case 86: return "Heavy snow showers"
        case 95: return "Thunderstorm"
        case 96: return "Thunderstorm, slight hail"
        case 99: return "Thunderstorm, heavy hail"
        default: return "Code \(code)"
        }
    }

    /// The 16-point compass name of a wind direction in degrees.
    public static func compass(_ degrees: Double) -> String {
        let points = [
            "N", "NNE", "NE", "ENE", "E", "ESE", "SE", "SSE", "S", "SSW", "SW", "WSW", "W", "WNW", "NW", "NNW"
        ]
        let normalized = (degrees.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360)
        return points[Int((normalized / 22.5).rounded()) % 16]
    }
}
