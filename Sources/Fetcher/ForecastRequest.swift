import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One forecast request: locations that share options, in one URL.
public struct ForecastRequest: Sendable {
    /// Open-Meteo's limit is 1,000 per request; wxdb keeps batches smaller so one failure costs less.
    public static let maxLocations = 100

    public var locations: [Location]
    public var models: [String]
    public var forecastDays: Int
    public var pastDays: Int

    public init(locations: [Location], models: [String], forecastDays: Int, pastDays: Int) {
        self.locations = locations
        self.models = models
        self.forecastDays = forecastDays
        self.pastDays = pastDays
    }

    /// Variables asked for in `current`: every hourly variable wxdb keeps.
    static let currentVariables = Variables.hourlyNames

    /// The query: exactly the variables the store keeps, metric units, unix times, each
    /// location's own time zone.
    public var query: [(String, String)] {
        place(
            hourly: Variables.hourlyNames,
            extra: [
                ("daily", Variables.dailyNames.joined(separator: ",")),
                ("current", Self.currentVariables.joined(separator: ","))
            ])
    }

    /// What the Forecast and Ensemble APIs are asked alike: the locations, the hourly variables (then
    /// `extra`), the models, each location's own time zone, unix times, the days, metric units, elevations.
    func place(hourly: [String], extra: [(String, String)] = []) -> [(String, String)] {
        [
            ("latitude", locations.map { coordinate($0.latitude) }.joined(separator: ",")),
            ("longitude", locations.map { coordinate($0.longitude) }.joined(separator: ",")),
            ("hourly", hourly.joined(separator: ","))
        ] + extra + [
            ("models", models.joined(separator: ",")),
            ("timezone", locations.map { $0.timezone == "auto" ? "auto" : $0.timezone }.joined(separator: ",")),
            ("timeformat", "unixtime"),
            ("forecast_days", String(forecastDays)),
            ("past_days", String(pastDays)),
            ("temperature_unit", "celsius"),
            ("wind_speed_unit", "kmh"),
            ("precipitation_unit", "mm")
        ] + elevationQuery
    }

    var elevationQuery: [(String, String)] {
        guard locations.contains(where: { $0.elevation != nil }) else { return [] }
        return [("elevation", locations.map { $0.elevation.map(coordinate) ?? "nan" }.joined(separator: ","))]
    }

    func coordinate(_ value: Double) -> String {
        var text = String(printf: "%.5f", value)
        while text.hasSuffix("0") { text.removeLast() }
        if text.hasSuffix(".") { text.removeLast() }
        return text
    }

    /// Open-Meteo's weighted call count for this request: per location
    /// `max(1, v/10 × max(1, days/14))`, v = variables × models (Open-Meteo's free-tier weighting).
    public var weight: Double {
        Double(locations.count)
            * Self.weightPerLocation(
                variables: Variables.hourly.count + Variables.daily.count + Self.currentVariables.count,
                models: models.count, days: forecastDays + pastDays)
    }

    /// A generous upper bound on the size of this request's answer in bytes: every hourly and
    /// daily value of every model written in 24 bytes (real ones take 4-8), plus 64 KiB per
    /// location for keys and units: six to seven times the real size (a 16-day, 100-location batch
    /// of one model is 2.7 MB from the replay server, the bound 19.6 MB). The body limit is this or
    /// `HTTPClient.defaultMaxBodyBytes`, whichever is larger.
    public var responseByteBound: Int {
        let days = Double(forecastDays + pastDays)
        let values = days * Double(24 * (Variables.hourly.count + 1) + Variables.daily.count + 1)
        return Int(Double(locations.count) * (Double(models.count) * values * 24 + 65536))
    }

    public static func weightPerLocation(variables: Int, models: Int, days: Int) -> Double {
        let v = Double(variables * models)
        return max(1, max(v / 10, v / 10 * Double(days) / 14))
    }
}

/// The free API's limits, in weighted calls, over fixed UTC windows.
public struct RateLimits: Sendable {
    public var perMinute: Double = 600
    public var perHour: Double = 5000
    public var perDay: Double = 10000
    public init() {}
}

/// How much of the free API's budget the fetch log says wxdb used in the current UTC minute,
/// hour and day.
public struct BudgetUse: Sendable, Equatable {
    public var minute: Double
    public var hour: Double
    public var day: Double

    public static func read(_ store: any Store, now: Int64) throws -> BudgetUse {
        // Only rows up to now count: rows from a clock that ran ahead lie in the future, and
        // counting them would refuse every ingest until the clock caught up with them.
        func used(window: Int64) throws -> Double {
            try store.apiWeightUsed(from: now - now % window, to: now + 1)
        }
        return BudgetUse(minute: try used(window: 60), hour: try used(window: 3600), day: try used(window: 86400))
    }

    /// Why sending `weight` more now would break a limit, or nil when it fits.
    public func refusal(adding weight: Double, limits: RateLimits) -> String? {
        if day + weight > limits.perDay {
            return String(
                printf:
                    "would exceed Open-Meteo's free daily limit (%.0f of %.0f weighted calls used today, this request is %.1f); fewer locations, models or --forecast-days, or an API key, fit",
                day, limits.perDay, weight)
        }
        if hour + weight > limits.perHour {
            return String(
                printf:
                    "would exceed Open-Meteo's free hourly limit (%.0f of %.0f weighted calls used this hour, this request is %.1f); try again next hour",
                hour, limits.perHour, weight)
        }
        return nil
    }
}

/// Maps Open-Meteo `models=` names to the internal domain whose `meta.json` tells the run's
/// initialisation time. Blends such as `best_match` have no single run, so they are absent.
public enum ModelDomains {
    public static let domains: [String: String] = [
        "icon_seamless": "dwd_icon", "icon_global": "dwd_icon", "dwd_icon_seamless": "dwd_icon",
        "icon_eu": "dwd_icon_eu", "icon_d2": "dwd_icon_d2",
        "gfs_seamless": "ncep_gfs013", "gfs_global": "ncep_gfs013", "ncep_gfs_seamless": "ncep_gfs013",
        "gfs025": "ncep_gfs025", "ncep_hrrr_conus": "ncep_hrrr_conus", "gfs_hrrr": "ncep_hrrr_conus",
        "ecmwf_ifs": "ecmwf_ifs", "ecmwf_ifs025": "ecmwf_ifs025", "ecmwf_aifs025_single": "ecmwf_aifs025_single",
        "gem_seamless": "cmc_gem_gdps", "gem_global": "cmc_gem_gdps",
        "jma_seamless": "jma_gsm", "jma_msm": "jma_msm", "jma_gsm": "jma_gsm",
        "metno_nordic": "metno_nordic_pp", "metno_seamless": "metno_nordic_pp",
        "meteofrance_arpege_world": "meteofrance_arpege_world025",
        "meteofrance_arome_france": "meteofrance_arome_france0025",
        "ukmo_global_deterministic_10km": "ukmo_global_deterministic_10km"
    ]

    /// Open-Meteo's blends and seamless mixes: valid `models=` names with no single run of their own.
    public static let blends = ["best_match", "meteofrance_seamless", "ukmo_seamless", "knmi_seamless", "dmi_seamless"]

    /// Every `models=` name wxdb knows (the ensembles of `EnsembleModels` too), sorted: what `locations add|set --models` accept without
    /// `--force`, and what shell completion offers.
    public static let known: [String] = (blends + domains.keys + EnsembleModels.names).sorted()
}
