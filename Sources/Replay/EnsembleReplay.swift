// The replay server's Ensemble API (`/v1/ensemble`): every member of an ensemble model's latest run,
// drawn around the weather field's truth so that tests and the demo have ensembles whose properties
// are known.
//
// For each hour and variable the truth y is what the archive endpoint serves (the `.observed` field).
// A run's ensemble centre is c = y − σ·z₀ and member k is c + d·σ·zₖ, with z₀, zₖ independent
// standard normals seeded by (location, model, initialisation, valid hour, variable, member) and σ
// growing with lead time. With d = 1 the observation and the members are drawn alike (exchangeable),
// so the ensemble is calibrated: a flat rank histogram, and a spread–skill ratio of 1. d < 1 is
// under-dispersive (a U-shaped histogram), d > 1 over-dispersive. Bounded quantities are clipped to
// their range (precipitation at 0), which keeps them only roughly calibrated where the bound binds.
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One ensemble model as the replay server serves it: members, run cadence, delay and horizon.
public struct ReplayEnsembleModel: Sendable, Equatable {
    public let members: Int
    public let cadence: Int
    public let delay: Int
    public let horizon: Int
}

/// The Ensemble API's models (members and cadence as Open-Meteo's docs table gives them, the same as
/// wxdb's `EnsembleModels`), and the synthesis of their answers.
public enum EnsembleReplay {
    public static let path = "/v1/ensemble"

    private static func model(_ members: Int, every hours: Int, delay: Int, days: Double) -> ReplayEnsembleModel {
        ReplayEnsembleModel(
            members: members, cadence: hours * 3600, delay: delay * 3600, horizon: Int(days * 86400))
    }

    public static let models: [String: ReplayEnsembleModel] = [
        "icon_seamless_eps": model(40, every: 6, delay: 4, days: 7.5),
        "icon_global_eps": model(40, every: 12, delay: 4, days: 7.5),
        "icon_eu_eps": model(40, every: 6, delay: 3, days: 5),
        "icon_d2_eps": model(20, every: 3, delay: 2, days: 2),
        "ncep_gefs_seamless": model(31, every: 6, delay: 5, days: 35),
        "ncep_gefs025": model(31, every: 6, delay: 5, days: 10),
        "ncep_gefs05": model(31, every: 6, delay: 5, days: 35),
        "ncep_aigefs025": model(31, every: 6, delay: 5, days: 16),
        "ecmwf_ifs025_ensemble": model(51, every: 6, delay: 7, days: 15),
        "ecmwf_aifs025_ensemble": model(51, every: 6, delay: 7, days: 15),
        "ecmwf_ifs_europe_ensemble": model(51, every: 6, delay: 7, days: 15),
        "ecmwf_aifs_europe_ensemble": model(51, every: 6, delay: 7, days: 15),
        "gem_global_ensemble": model(21, every: 12, delay: 5, days: 16),
        "bom_access_global_ensemble": model(18, every: 6, delay: 6, days: 10),
        "ukmo_global_ensemble_20km": model(18, every: 6, delay: 5, days: 8),
        "ukmo_uk_ensemble_2km": model(3, every: 1, delay: 2, days: 5),
        "meteoswiss_icon_ch1_ensemble": model(11, every: 3, delay: 2, days: 33.0 / 24),
        "meteoswiss_icon_ch2_ensemble": model(21, every: 6, delay: 2, days: 5),
        "google_weathernext2_ensemble": model(64, every: 12, delay: 6, days: 15)
    ]

    /// The ensemble model whose runs `/data/<domain>/static/meta.json` describes (the domains of
    /// wxdb's `EnsembleModels.domains`), so meta.json names the run `/v1/ensemble` serves.
    public static let domains: [String: String] = [
        "dwd_icon_eps": "icon_global_eps", "dwd_icon_eu_eps": "icon_eu_eps", "dwd_icon_d2_eps": "icon_d2_eps",
        "ncep_gefs025": "ncep_gefs025", "ncep_gefs05": "ncep_gefs05",
        "ecmwf_ifs025_ensemble": "ecmwf_ifs025_ensemble", "ecmwf_aifs025_ensemble": "ecmwf_aifs025_ensemble",
        "cmc_gem_geps": "gem_global_ensemble", "bom_access_global_ensemble": "bom_access_global_ensemble",
        "ukmo_global_ensemble_20km": "ukmo_global_ensemble_20km", "ukmo_uk_ensemble_2km": "ukmo_uk_ensemble_2km",
        "meteoswiss_icon_ch1_ensemble": "meteoswiss_icon_ch1_ensemble",
        "meteoswiss_icon_ch2_ensemble": "meteoswiss_icon_ch2_ensemble"
    ]

    /// The initialisation time of the run the endpoint serves for `model` at `now` (Unix seconds).
    public static func latestRun(model name: String, at now: Int) -> Int? {
        guard let m = models[name] else { return nil }
        return ReplayModel.floor(now - m.delay, m.cadence)
    }

    /// The error scale per quantity, as the deterministic field's (`Field.deviation`) amplitudes.
    static func amplitude(_ kind: Kind) -> Double? {
        switch kind {
        case .temperature: 1.5
        case .percent: 8
        case .precipitation: 0.4
        case .wind: 3
        case .pressure: 1.5
        case .degree: 20
        default: nil
        }
    }

    /// A standard normal from a seed (Box–Muller).
    static func normal(_ key: UInt64) -> Double {
        let u = max(unit(key), 1e-300)
        let v = unit(key ^ 0x5DEE_CE66_D1CE_4E5B)
        return (-2 * log(u)).squareRoot() * cos(2 * .pi * v)
    }

    /// Member `member` (0 = control; −1 is the truth's own draw) of `variable` at `hour`: a pure function
    /// of (location, model, initialisation, valid hour, variable, member) and the dispersion.
    static func value(
        truth y: Double, kind: Kind, latitude: Double, longitude: Double, model: String, initTime: Int, hour: Int,
        variable: String, member: Int, dispersion: Double
    ) -> Double {
        guard let amplitude = amplitude(kind) else { return y }
        let key =
            seed("ensemble") ^ UInt64(bitPattern: Int64((latitude * 1000).rounded()))
            ^ (UInt64(bitPattern: Int64((longitude * 1000).rounded())) << 21) ^ seed(model)
            ^ mix(UInt64(bitPattern: Int64(initTime))) ^ mix(UInt64(bitPattern: Int64(hour)) &+ 0x1234)
            ^ seed(Variables.canonical(variable))
        let leadDays = Double(max(0, hour - initTime)) / 86400
        let sigma = amplitude * (0.3 + 0.7 * leadDays.squareRoot())
        let centre = y - sigma * normal(key ^ mix(0))
        let x = centre + dispersion * sigma * normal(key ^ mix(UInt64(member + 1)))
        switch kind {
        case .percent: return min(100, max(0, x))
        case .precipitation, .wind: return max(0, x)
        case .degree:
            let d = x.truncatingRemainder(dividingBy: 360)
            return d < 0 ? d + 360 : d
        default: return x
        }
    }

    /// The answer to one request: status and JSON body (an object for one location, an array for several).
    static func answer(query q: Query, now: Date, dispersion: Double) -> (status: Int, body: Data) {
        func bad(_ reason: String) -> (Int, Data) { (400, ReplayServer.errorBody(reason)) }
        let names = q.list("models").isEmpty ? ["ncep_gefs_seamless"] : q.list("models")
        for name in names where models[name] == nil {
            return bad("Cannot initialize EnsembleMultiDomains from invalid String value \(name) for key models")
        }
        let lats = q.list("latitude").map { Double($0) }
        let lons = q.list("longitude").map { Double($0) }
        guard !lats.isEmpty, lats.count == lons.count else {
            return bad("Parameter 'latitude' and 'longitude' must have the same number of elements")
        }
        let days = q.int("forecast_days") ?? 7
        let past = q.int("past_days") ?? 0
        guard (0...35).contains(days) else { return bad("Forecast days is invalid. Allowed range 0 to 35.") }
        guard (0...92).contains(past) else { return bad("Past days is invalid. Allowed range 0 to 92.") }
        let zones = q.list("timezone")
        var objects: [String] = []
        for (i, (la, lo)) in zip(lats, lons).enumerated() {
            guard let la, let lo, (-90...90).contains(la), (-180...180).contains(lo) else {
                return bad("Latitude must be in range of -90 to 90°. Longitude must be in range of -180 to 180°.")
            }
            let zoneName = zones.isEmpty ? "GMT" : zones[zones.count == 1 ? 0 : min(i, zones.count - 1)]
            do {
                objects.append(
                    try location(
                        query: q, latitude: la, longitude: lo, index: i, zoneName: zoneName, models: names, days: days,
                        past: past, now: now, dispersion: dispersion))
            } catch {
                return (error.status, ReplayServer.errorBody(error.reason))
            }
        }
        let text = objects.count == 1 ? objects[0] : "[" + objects.joined(separator: ",") + "]"
        return (200, Data(text.utf8))
    }

    static func location(
        query q: Query, latitude: Double, longitude: Double, index: Int, zoneName: String, models names: [String],
        days: Int, past: Int, now: Date, dispersion: Double
    ) throws(APIError) -> String {
        let zone = try Zone.resolve(zoneName, now: now)
        let units = UnitSettings(q)
        let iso = (q["timeformat"] ?? "iso8601").lowercased() != "unixtime"
        let readOffset = (zone.offset / 3600) * 3600
        let seconds = Int(now.timeIntervalSince1970.rounded(.down))
        let firstDay = Int((Double(seconds + readOffset) / 86400).rounded(.down)) - past
        let start = firstDay * 86400 - readOffset
        let hours = (past + days) * 24
        // The same elevation and the same truth as the archive endpoint's for this point.
        let elevation = (max(0, 120 + 110 * sin(latitude * 0.9) * cos(longitude * 0.7)) * 1).rounded()
        let truth = Field(
            latitude: latitude, longitude: longitude, elevation: elevation, model: "", variation: .observed)
        let samples = (0..<hours).map { truth.sample(Double(start + $0 * 3600)) }
        let columns = try q.list("hourly").map { name throws(APIError) -> (String, Column) in
            guard let c = Variables.hourly[Variables.canonical(name)] else {
                throw APIError(
                    status: 400,
                    reason: "Cannot initialize EnsembleVariableWithoutMember from invalid String value \(name)")
            }
            return (name, c)
        }
        let grid = 0.025
        let gridLat = ((latitude / grid).rounded() * grid * 1e6).rounded() / 1e6
        let gridLon = ((longitude / grid).rounded() * grid * 1e6).rounded() / 1e6
        var o = "{\"latitude\":\(JSONText.plain(gridLat)),\"longitude\":\(JSONText.plain(gridLon))"
        o +=
            ",\"generationtime_ms\":0.31,\"utc_offset_seconds\":\(zone.offset),\"timezone\":\(JSONText.quote(zone.name))"
        o +=
            ",\"timezone_abbreviation\":\(JSONText.quote(zone.abbreviation)),\"elevation\":\(JSONText.plain(elevation))"
        if index != 0 { o += ",\"location_id\":\(index)" }
        func key(_ name: String, member: Int, model: String) -> String {
            name + (member == 0 ? "" : member < 10 ? "_member0\(member)" : "_member\(member)")
                + (names.count > 1 ? "_" + model : "")
        }
        let timeUnit = iso ? "\"iso8601\"" : "\"unixtime\""
        o += ",\"hourly_units\":{\"time\":\(timeUnit)"
        for model in names {
            for (name, c) in columns {
                for member in 0..<(models[model]?.members ?? 1) {
                    o += ",\(JSONText.quote(key(name, member: member, model: model))):\(JSONText.quote(c.unit(units)))"
                }
            }
        }
        o += "},\"hourly\":{\"time\":["
        o += (0..<hours).map { h in
            let t = start + h * 3600
            return iso ? JSONText.quote(Civil.minuteString(t + readOffset)) : String(t)
        }.joined(separator: ",")
        o += "]"
        for model in names {
            guard let m = models[model] else { continue }
            let latest = ReplayModel.floor(seconds - m.delay, m.cadence)
            for (name, c) in columns {
                let decimals = c.decimals(units)
                for member in 0..<m.members {
                    o += ",\(JSONText.quote(key(name, member: member, model: model))):["
                    o += (0..<hours).map { h in
                        let t = start + h * 3600
                        // Hours before the run are the first hours of earlier runs, as for deterministic models.
                        let initTime = t < latest ? ReplayModel.floor(t, m.cadence) : latest
                        guard t <= initTime + m.horizon else { return "null" }
                        let v = value(
                            truth: c.value(samples[h]), kind: c.kind, latitude: latitude, longitude: longitude,
                            model: model, initTime: initTime, hour: t, variable: name, member: member,
                            dispersion: dispersion)
                        return JSONText.number(c.convert(v, units), decimals: decimals)
                    }.joined(separator: ",")
                    o += "]"
                }
            }
        }
        return o + "}}"
    }
}
