// Open-Meteo's ensemble models, beside the deterministic ones, and the decoding of their members.
//
// Facts from Open-Meteo's Ensemble API page (open-meteo/open-meteo-website
// src/routes/en/docs/ensemble-api/+page.svelte, its model table, and static/docs/openapi/ensemble.yml for
// the `models=` names), as summarised in ../shared/reference/round3.md §2.1–2.3.

/// One ensemble model of Open-Meteo's Ensemble API.
public struct EnsembleModel: Sendable, Equatable {
    /// The `models=` value.
    public var name: String
    /// Members served, the control included (the number of series: IFS's control plus 50 perturbed runs is 51).
    public var members: Int
    /// Hours between runs.
    public var cadenceHours: Int
    /// How far a run reaches, in hours.
    public var horizonHours: Int
    /// What the table says beyond the numbers (a blend, only some runs).
    public var note: String

    public init(name: String, members: Int, cadenceHours: Int, horizonHours: Int, note: String = "") {
        self.name = name
        self.members = members
        self.cadenceHours = cadenceHours
        self.horizonHours = horizonHours
        self.note = note
    }
}

/// The ensemble models wxdb knows.
public enum EnsembleModels {
    /// Open-Meteo's docs table (members, horizon, update interval); the `_seamless` blends take the
    /// member count of their parts (all of a blend's parts have it, except ICON-D2-EPS's 20 inside
    /// icon_seamless_eps) and the cadence of their most frequent global part.
    public static let table: [EnsembleModel] = [
        EnsembleModel(name: "icon_seamless_eps", members: 40, cadenceHours: 6, horizonHours: 180, note: "blend"),
        EnsembleModel(name: "icon_global_eps", members: 40, cadenceHours: 12, horizonHours: 180),
        EnsembleModel(name: "icon_eu_eps", members: 40, cadenceHours: 6, horizonHours: 120),
        EnsembleModel(name: "icon_d2_eps", members: 20, cadenceHours: 3, horizonHours: 48),
        EnsembleModel(name: "ncep_gefs_seamless", members: 31, cadenceHours: 6, horizonHours: 840, note: "blend"),
        EnsembleModel(name: "ncep_gefs025", members: 31, cadenceHours: 6, horizonHours: 240),
        EnsembleModel(name: "ncep_gefs05", members: 31, cadenceHours: 6, horizonHours: 840),
        EnsembleModel(name: "ncep_aigefs025", members: 31, cadenceHours: 6, horizonHours: 384),
        EnsembleModel(name: "ecmwf_ifs025_ensemble", members: 51, cadenceHours: 6, horizonHours: 360),
        EnsembleModel(name: "ecmwf_aifs025_ensemble", members: 51, cadenceHours: 6, horizonHours: 360),
        EnsembleModel(
            name: "ecmwf_ifs_europe_ensemble", members: 51, cadenceHours: 6, horizonHours: 360,
            note: "only the 0z and 6z runs"),
        EnsembleModel(name: "ecmwf_aifs_europe_ensemble", members: 51, cadenceHours: 6, horizonHours: 360),
        EnsembleModel(name: "gem_global_ensemble", members: 21, cadenceHours: 12, horizonHours: 384),
        EnsembleModel(name: "bom_access_global_ensemble", members: 18, cadenceHours: 6, horizonHours: 240),
        EnsembleModel(name: "ukmo_global_ensemble_20km", members: 18, cadenceHours: 6, horizonHours: 192),
        EnsembleModel(name: "ukmo_uk_ensemble_2km", members: 3, cadenceHours: 1, horizonHours: 120),
        EnsembleModel(name: "meteoswiss_icon_ch1_ensemble", members: 11, cadenceHours: 3, horizonHours: 33),
        EnsembleModel(name: "meteoswiss_icon_ch2_ensemble", members: 21, cadenceHours: 6, horizonHours: 120),
        EnsembleModel(name: "google_weathernext2_ensemble", members: 64, cadenceHours: 12, horizonHours: 360)
    ]

    /// The internal domain whose `/data/<domain>/static/meta.json` names a model's latest run
    /// (`last_run_initialisation_time`), as Open-Meteo's `DomainRegistry` spells them
    /// (open-meteo/open-meteo Sources/App/Helper/DomainRegistry.swift: `dwd_icon_eps`, `dwd_icon_eu_eps`,
    /// `dwd_icon_d2_eps`, `ncep_gefs025`, `ncep_gefs05`, `ecmwf_ifs025_ensemble`, `cmc_gem_geps`,
    /// `bom_access_global_ensemble`; EcmwfDomain.ifs025_ensemble.domainRegistry). The AIFS, UKMO and
    /// MeteoSwiss ensembles are named as their `models=` value is, which the registry's other
    /// ensemble entries follow (not checked against a live server). The blends (`icon_seamless_eps`,
    /// `ncep_gefs_seamless`) have no single run, and models not listed have no known domain: their
    /// initialisation time is estimated from the cadence.
    public static let domains: [String: String] = [
        "icon_global_eps": "dwd_icon_eps", "icon_eu_eps": "dwd_icon_eu_eps", "icon_d2_eps": "dwd_icon_d2_eps",
        "ncep_gefs025": "ncep_gefs025", "ncep_gefs05": "ncep_gefs05",
        "ecmwf_ifs025_ensemble": "ecmwf_ifs025_ensemble", "ecmwf_aifs025_ensemble": "ecmwf_aifs025_ensemble",
        "gem_global_ensemble": "cmc_gem_geps", "bom_access_global_ensemble": "bom_access_global_ensemble",
        "ukmo_global_ensemble_20km": "ukmo_global_ensemble_20km", "ukmo_uk_ensemble_2km": "ukmo_uk_ensemble_2km",
        "meteoswiss_icon_ch1_ensemble": "meteoswiss_icon_ch1_ensemble",
        "meteoswiss_icon_ch2_ensemble": "meteoswiss_icon_ch2_ensemble"
    ]

    /// The largest member count of any model: what an unknown ensemble is counted as in the budget.
    public static let maxMembers = table.map(\.members).max() ?? 64

    /// The model named `name`, or nil when it is not an ensemble wxdb knows.
    public static func model(named name: String) -> EnsembleModel? { table.first { $0.name == name } }

    /// Whether `name` is an ensemble model (one of the table).
    public static func isEnsemble(_ name: String) -> Bool { model(named: name) != nil }

    /// Every ensemble `models=` name, sorted.
    public static let names: [String] = table.map(\.name).sorted()

    /// The hourly variables asked for per member: the continuous ones, which ensemble scores are for
    /// (not `precipitation_probability`, which the Forecast API derives from an ensemble, nor
    /// weather codes or directions).
    public static let variables: [Variable] = Variables.hourly.filter { $0.verification == .continuous }
}

/// One ensemble model's members at one location: `values[v][member][hour]`, NaN where a member has no
/// value (a null, an all-null member or a member the response left out).
public struct EnsembleForecast: Sendable, Equatable {
    public var model: String
    public var hourlyTimes: [Int64]
    /// Per variable of ``EnsembleModels/variables``: nil when the response has none of its members.
    public var values: [[[Double]]?]

    public init(model: String, hourlyTimes: [Int64], values: [[[Double]]?]) {
        self.model = model
        self.hourlyTimes = hourlyTimes
        self.values = values
    }

    /// The member count: the widest variable.
    public var memberCount: Int { values.compactMap { $0?.count }.max() ?? 0 }
}

/// An Ensemble API answer for one location.
public struct EnsembleResponse: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var elevation: Double?
    public var utcOffsetSeconds: Int
    public var locationID: Int?
    public var models: [EnsembleForecast]
}

/// Decodes the Ensemble API's JSON by Open-Meteo's naming (ForecastApiResult.swift:327-332): member 0
/// (the control) is the bare variable name, members above 0 get `_memberNN`, and when several models
/// were asked `_<model>` follows the member part (`temperature_2m_member01_ecmwf_ifs025_ensemble`).
public enum EnsembleDecoder {
    /// A key split into its variable, member and model suffix (nil when no model suffix).
    static func split(_ key: String, names: [(name: String, variable: Int)]) -> Key? {
        guard let match = names.first(where: { key == $0.name || key.hasPrefix($0.name + "_") }) else { return nil }
        var rest = Substring(key.dropFirst(match.name.count))
        if rest.isEmpty { return Key(variable: match.variable, member: 0, model: nil, suffix: nil) }
        rest = rest.dropFirst()  // the "_"
        let suffix = String(rest)
        var member = 0
        if rest.hasPrefix("member") {
            let digits = rest.dropFirst(6).prefix { $0.isASCII && $0.isNumber }
            guard !digits.isEmpty, let number = Int(digits) else { return nil }
            member = number
            rest = rest.dropFirst(6 + digits.count)
            if rest.isEmpty { return Key(variable: match.variable, member: member, model: nil, suffix: suffix) }
            guard rest.first == "_" else { return nil }
            rest = rest.dropFirst()
        }
        return rest.isEmpty ? nil : Key(variable: match.variable, member: member, model: String(rest), suffix: suffix)
    }

    /// A response key read: the variable (index in ``EnsembleModels/variables``), the member, the
    /// model suffix, and everything after the variable's name (what ``ForecastDecoder`` appends).
    struct Key {
        var variable: Int
        var member: Int
        var model: String?
        var suffix: String?
    }

    /// Decodes one location (an object) or several (an array), in request order. `models` are the
    /// requested names: with one, keys carry no model suffix; members beyond those found up to the
    /// table's count are kept as missing.
    public static func decode(_ body: some Collection<UInt8>, models: [String]) throws -> [EnsembleResponse] {
        let json = try ForecastDecoder.parse(body)
        if case .array(let elements) = json { return try elements.map { try decode($0, models: models) } }
        return [try decode(json, models: models)]
    }

    static func decode(_ json: JSON, models: [String]) throws -> EnsembleResponse {
        guard case .object(let root) = json else { throw DecodeError.notAnObject(found: json.typeName) }
        if root["error"]?.boolValue == true {
            throw DecodeError.apiError(reason: root["reason"]?.stringValue ?? "no reason given")
        }
        let latitude = try ForecastDecoder.number(root, "latitude")
        let longitude = try ForecastDecoder.number(root, "longitude")
        // A regional model outside its domain answers 200 with NaN coordinates (round3.md §2.2).
        guard latitude.isFinite, longitude.isFinite else { throw DecodeError.noForecast }
        guard let offsetNumber = root["utc_offset_seconds"]?.numberValue, offsetNumber == offsetNumber.rounded(),
            abs(offsetNumber) <= 18 * 3600
        else { throw DecodeError.missingField("utc_offset_seconds") }
        let offset = Int(offsetNumber)
        guard let hourly = try ForecastDecoder.section(root, "hourly") else { throw DecodeError.noForecast }
        let units = root["hourly_units"]?.objectValue
        let times = try ForecastDecoder.hourlyTimes(hourly, section: "hourly", offset: offset)
        let names = EnsembleModels.variables.enumerated().flatMap { index, variable in
            ([variable.name] + variable.aliases).map { (name: $0, variable: index) }
        }.sorted { $0.name.count > $1.name.count }
        // Which members of which variable of which model the answer has, and under which key.
        var keys: [String: [Int: [Int: String?]]] = [:]
        for key in hourly.keys where key != "time" {
            guard let parts = split(key, names: names) else { continue }
            let model: String
            if models.count == 1 {
                // One model: no suffix; a suffix then is another variable's name (`precipitation_hours`).
                guard parts.model == nil, let only = models.first else { continue }
                model = only
            } else {
                guard let suffix = parts.model, models.contains(suffix) else { continue }
                model = suffix
            }
            keys[model, default: [:]][parts.variable, default: [:]][parts.member] = .some(parts.suffix)
        }
        var filter = RangeFilter()
        var forecasts: [EnsembleForecast] = []
        for model in models {
            guard let found = keys[model] else { continue }
            let highest = found.values.flatMap(\.keys).max() ?? 0
            let count = max(highest + 1, EnsembleModels.model(named: model)?.members ?? 0)
            var values: [[[Double]]?] = Array(repeating: nil, count: EnsembleModels.variables.count)
            for (index, variable) in EnsembleModels.variables.enumerated() {
                guard let byMember = found[index] else { continue }
                var rows = [[Double]](repeating: [Double](repeating: .nan, count: times.count), count: count)
                for (member, suffix) in byMember {
                    let column = try ForecastDecoder.column(
                        hourly, units: units, variable: variable, suffix: suffix, section: "hourly",
                        count: times.count, offset: offset, filter: &filter)
                    rows[member] = column?.map { $0 ?? .nan } ?? rows[member]
                }
                values[index] = rows
            }
            forecasts.append(EnsembleForecast(model: model, hourlyTimes: times, values: values))
        }
        if forecasts.isEmpty { throw DecodeError.noForecast }
        var locationID: Int?
        if let id = root["location_id"]?.numberValue { locationID = Int(exactly: id) }
        return EnsembleResponse(
            latitude: latitude, longitude: longitude, elevation: root["elevation"]?.numberValue,
            utcOffsetSeconds: offset, locationID: locationID, models: forecasts)
    }
}
