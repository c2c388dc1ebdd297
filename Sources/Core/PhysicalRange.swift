/// The values each variable can physically have, in wxdb's metric units. A number outside is not a
/// reading (a sensor fault, a unit mix-up, a corrupt answer): every door that brings values in nulls
/// it and counts it, and scores, sums and charts leave it out, so one 1e19 cannot overflow the sums
/// or break a chart.
///
/// The limits are the observed world extremes, widened by a margin so a new record is not refused
/// (WMO Weather and Climate Extremes Archive, https://wce.asu.edu, and the sensors' own ranges):
///
/// | variable | range | source |
/// |---|---|---|
/// | temperature_2m, *_max, *_min | −95 … 65 °C | WMO: −89.2 °C Vostok 1983, 56.7 °C Death Valley 1913 |
/// | dew_point_2m | −110 … 40 °C | below the air temperature; highest reported 35 °C (Dhahran 2003) |
/// | apparent_temperature | −120 … 90 °C | wind chill at −89 °C and 100 km/h ≈ −115; heat index at 35 °C dew point ≈ 80 |
/// | relative_humidity_2m | 0 … 100 % | definition; hygrometers' range (e.g. Vaisala HMP155 0–100 %RH) |
/// | cloud_cover, precipitation_probability(_max) | 0 … 100 % | definition |
/// | precipitation (one hour) | 0 … 400 mm | WMO: 305 mm in 42 min, Holt (Missouri) 1947 |
/// | precipitation (15 minutes) | 0 … 400 mm | bounded by the hour's |
/// | precipitation_sum (one day) | 0 … 2500 mm | WMO: 1825 mm in 24 h, Foc-Foc (La Réunion) 1966 |
/// | pressure_msl | 850 … 1100 hPa | WMO: 870 hPa Typhoon Tip 1979, 1084.8 hPa Tosontsengel 2001 |
/// | wind_speed_10m, wind_gusts_10m, wind_speed_10m_max | 0 … 450 km/h | WMO: 408 km/h gust, Barrow Island 1996 |
/// | wind_direction_10m | 0 … 360 ° | definition (360 is north, as some stations write it) |
/// | weather_code | 0 … 99, whole | WMO code table 4677 |
public enum PhysicalRange {
    /// The closed range of `variable`'s values in metric units; nil for instants (sunrise, sunset),
    /// which the decoder bounds as times.
    public static func range(of variable: Variable) -> ClosedRange<Double>? {
        switch variable.name {
        case "temperature_2m", "temperature_2m_max", "temperature_2m_min": return -95...65
        case "dew_point_2m": return -110...40
        case "apparent_temperature": return -120...90
        case "precipitation": return 0...400
        case "precipitation_sum": return 0...2500
        case "pressure_msl": return 850...1100
        default: break
        }
        switch variable.quantity {
        case .temperature: return -120...90
        case .percent: return 0...100
        case .precipitation: return 0...2500
        case .pressure: return 850...1100
        case .speed: return 0...450
        case .direction: return 0...360
        case .code: return 0...99
        case .instant: return nil
        }
    }

    /// Whether `value` is one `variable` can have (finite, inside its range, a whole code).
    public static func contains(_ value: Double, _ variable: Variable) -> Bool {
        guard value.isFinite else { return false }
        guard let range = range(of: variable) else { return true }
        guard range.contains(value) else { return false }
        return variable.quantity != .code || value == value.rounded()
    }

    /// `value` when `variable` can have it, else nil.
    public static func check(_ value: Double, _ variable: Variable) -> Double? {
        contains(value, variable) ? value : nil
    }

    /// A sentence for a count of refused values, or nil when there were none:
    /// `3 value(s) outside what weather can have were left empty (temperature_2m 2, pressure_msl 1)`.
    public static func note(_ counts: [String: Int]) -> String? {
        let total = counts.values.reduce(0, +)
        guard total > 0 else { return nil }
        let each = counts.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
        return "\(total) value(s) outside what weather can have were left empty (\(each))"
    }
}

/// Counts values refused by `PhysicalRange`, per variable name, as a door reads them.
public struct RangeFilter: Sendable, Equatable {
    /// Refused values per variable name.
    public var refused: [String: Int] = [:]

    public init(refused: [String: Int] = [:]) { self.refused = refused }

    /// `value` when `variable` can have it; else nil, counted.
    public mutating func check(_ value: Double, _ variable: Variable) -> Double? {
        if PhysicalRange.contains(value, variable) { return value }
        refused[variable.name, default: 0] += 1
        return nil
    }

    /// Adds another filter's counts.
    public mutating func merge(_ other: RangeFilter) {
        for (name, count) in other.refused { refused[name, default: 0] += count }
    }

    /// The note `PhysicalRange.note` writes for these counts; nil when nothing was refused.
    public var note: String? { PhysicalRange.note(refused) }
}
