import WxCore

/// Units station software writes (weewx's unit names and Home Assistant's symbols), converted to
/// wxdb's metric units: °C, %, hPa, km/h, mm, degrees.
public enum StationUnits {
    /// weewx's `usUnits` values (`weewx.US`, `weewx.METRIC`, `weewx.METRICWX`).
    public static let weewxSystems: [Int: String] = [1: "US", 16: "METRIC", 17: "METRICWX"]

    /// The unit weewx's `units.py` gives `quantity`'s group in unit system `usUnits`, or nil
    /// for a system weewx does not define. METRICWX differs from METRIC in rain (mm, not cm) and
    /// speed (m/s, not km/h).
    public static func weewxUnit(usUnits: Int, quantity: Quantity) -> String? {
        let us = usUnits == 1
        guard us || usUnits == 16 || usUnits == 17 else { return nil }
        switch quantity {
        case .temperature: return us ? "degree_F" : "degree_C"
        case .percent: return "percent"
        case .pressure: return us ? "inHg" : "mbar"
        case .direction: return "degree_compass"
        case .precipitation: return us ? "inch" : usUnits == 16 ? "cm" : "mm"
        case .speed: return us ? "mile_per_hour" : usUnits == 16 ? "km_per_hour" : "meter_per_second"
        case .code, .instant: return nil
        }
    }

    /// Converts `value` in `unit` to wxdb's unit for `quantity`, unrounded; nil when wxdb does not
    /// know `unit` as a unit of that quantity.
    public static func toMetric(_ value: Double, unit: String, quantity: Quantity) -> Double? {
        guard let factor = factors[quantity]?[unit] else {
            guard quantity == .temperature else { return nil }
            switch unit {
            case "°F", "degree_F", "F": return (value - 32) * 5 / 9
            case "K": return value - 273.15
            default: return nil
            }
        }
        return value * factor
    }

    /// Whether `unit` converts for `quantity`.
    public static func knows(_ unit: String, quantity: Quantity) -> Bool {
        toMetric(0, unit: unit, quantity: quantity) != nil
    }

    /// The units each quantity accepts, for error messages.
    public static func accepted(_ quantity: Quantity) -> [String] {
        let temperature = quantity == .temperature ? ["°F", "K"] : []
        return (factors[quantity]?.keys.filter { !$0.contains("_") && $0 != "percent" }.sorted() ?? []) + temperature
    }

    /// Rounds a converted value to 2 decimals, as wxdb stores converted values.
    public static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }

    /// Multipliers to wxdb's unit: weewx's own factors (`units.py`: 1 inHg = 1/0.0295299875 mbar,
    /// 1 mph = 1.609344 km/h, 1 inch = 25.4 mm) and Home Assistant's symbols.
    public static let factors: [Quantity: [String: Double]] = [
        .temperature: ["°C": 1, "degree_C": 1, "C": 1],
        .percent: ["%": 1, "percent": 1],
        .pressure: [
            "hPa": 1, "mbar": 1, "inHg": 1 / 0.0295299875, "mmHg": 1.33322387415, "kPa": 10, "Pa": 0.01,
            "bar": 1000, "cbar": 10, "psi": 68.9475729318
        ],
        .speed: [
            "km/h": 1, "km_per_hour": 1, "m/s": 3.6, "meter_per_second": 3.6, "mph": 1.609344,
            "mile_per_hour": 1.609344,
            "kn": 1.852, "knot": 1.852, "ft/s": 1.09728
        ],
        .precipitation: ["mm": 1, "cm": 10, "in": 25.4, "inch": 25.4],
        .direction: ["°": 1, "degree_compass": 1]
    ]
}
