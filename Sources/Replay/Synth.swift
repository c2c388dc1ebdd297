// Deterministic synthetic Open-Meteo responses. The goal is not meteorology but data that has
// the API's exact shape (key order, fixed decimals, time formats, suffixes) and behaves like a
// real forecast over time: smooth in time and space, different per model, stable within a model
// run and different once the "run" changes, with errors that grow with lead time. Everything is a pure function of the query, the
// coordinates, the clock and the run number, so tests can compare bodies byte for byte.
// Foundation: TimeZone (ICU's copy of the tz data), so the server's local times check wxdb's own TZif reader.
import Foundation

/// Query parameters of one request. Repeated keys are joined with commas, which is how
/// Open-Meteo treats `hourly=a&hourly=b` and `hourly=a,b` alike.
struct Query {
    private var values: [String: String] = [:]

    init(_ items: [URLQueryItem]) {
        for item in items {
            let v = item.value ?? ""
            if let old = values[item.name], !old.isEmpty {
                values[item.name] = old + "," + v
            } else {
                values[item.name] = v
            }
        }
    }

    subscript(_ key: String) -> String? { values[key] }

    /// Comma-separated list; empty entries dropped.
    func list(_ key: String) -> [String] {
        (values[key] ?? "").split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
    }

    func int(_ key: String) -> Int? { values[key].flatMap { Int($0) } }

    /// This query with `key` set to `value`.
    func setting(_ key: String, to value: String) -> Query {
        var copy = self
        copy.values[key] = value
        return copy
    }
}

/// A 400 answer with the Open-Meteo error body.
struct APIError: Error {
    let status: Int
    let reason: String
}

/// The fixed UTC offset that applies to a whole response (Open-Meteo never switches offset
/// inside one response: Open-Meteo applies one fixed UTC offset per response).
struct Zone {
    let name: String
    let abbreviation: String
    let offset: Int

    static let gmt = Zone(name: "GMT", abbreviation: "GMT", offset: 0)

    /// Resolves `timezone=`: GMT/UTC, fixed offsets ("+02:00", "GMT+2", "UTC-05:30") or a
    /// tz-database name, which gets its offset *at request time* like the real API.
    /// `auto` falls back to GMT: the replay server has no coordinate-to-zone table.
    static func resolve(_ raw: String, now: Date) throws(APIError) -> Zone {
        let s = raw.trimmingCharacters(in: .whitespaces)
        let upper = s.uppercased()
        if s.isEmpty || upper == "GMT" || upper == "UTC" || upper == "Z" || upper == "AUTO" { return .gmt }
        var rest = Substring(s)
        if upper.hasPrefix("GMT") || upper.hasPrefix("UTC") { rest = rest.dropFirst(3) }
        if let sign = rest.first, sign == "+" || sign == "-", let secs = parseOffset(rest.dropFirst()) {
            let off = sign == "-" ? -secs : secs
            return Zone(name: s, abbreviation: abbreviation(off), offset: off)
        }
        if let tz = TimeZone(identifier: s) {
            let off = tz.secondsFromGMT(for: now)
            return Zone(name: s, abbreviation: abbreviation(off), offset: off)
        }
        throw APIError(status: 400, reason: "Invalid timezone")
    }

    /// "2", "02", "0530", "05:30" → seconds.
    private static func parseOffset(_ s: Substring) -> Int? {
        let digits = s.replacingOccurrences(of: ":", with: "")
        guard !digits.isEmpty, digits.allSatisfy(\.isNumber), digits.count <= 4 else { return nil }
        let (h, m): (Int, Int)
        if digits.count <= 2 {
            (h, m) = (Int(digits)!, 0)
        } else {
            (h, m) = (Int(digits.dropLast(2))!, Int(digits.suffix(2))!)
        }
        guard h <= 14, m < 60 else { return nil }
        return h * 3600 + m * 60
    }

    /// The modern Open-Meteo spelling: "GMT", "GMT+2", "GMT-5", "GMT+9:30".
    static func abbreviation(_ offset: Int) -> String {
        if offset == 0 { return "GMT" }
        let sign = offset < 0 ? "-" : "+"
        let a = abs(offset)
        let h = a / 3600, m = (a % 3600) / 60
        return m == 0 ? "GMT\(sign)\(h)" : "GMT\(sign)\(h):\(m < 10 ? "0" : "")\(m)"
    }
}

// MARK: - Calendar arithmetic without DateFormatter (thread-safe, fast, no locale surprises)

enum Civil {
    /// Days since 1970-01-01 → (year, month, day). Howard Hinnant's civil_from_days.
    static func date(fromDays z0: Int) -> (Int, Int, Int) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let d = doy - (153 * mp + 2) / 5 + 1
        let m = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (m <= 2 ? 1 : 0), m, d)
    }

    /// (year, month, day) → days since 1970-01-01. Hinnant's days_from_civil.
    static func days(year y0: Int, month m: Int, day d: Int) -> Int {
        let y = m <= 2 ? y0 - 1 : y0
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    /// "yyyy-MM-dd" → days since epoch.
    static func parseDate(_ s: String) -> Int? {
        let parts = s.split(separator: "-")
        guard parts.count == 3, let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
            (1...12).contains(m), (1...31).contains(d)
        else { return nil }
        return days(year: y, month: m, day: d)
    }

    private static func pad(_ v: Int, _ width: Int = 2) -> String {
        let s = String(v)
        return s.count >= width ? s : String(repeating: "0", count: width - s.count) + s
    }

    /// Seconds (already shifted to local wall time) → "yyyy-MM-dd".
    static func dayString(_ localSeconds: Int) -> String {
        let days = Int((Double(localSeconds) / 86400).rounded(.down))
        let (y, m, d) = date(fromDays: days)
        return "\(pad(y, 4))-\(pad(m))-\(pad(d))"
    }

    /// Seconds (already shifted to local wall time) → "yyyy-MM-ddTHH:mm", Open-Meteo's iso8601.
    static func minuteString(_ localSeconds: Int) -> String {
        let days = Int((Double(localSeconds) / 86400).rounded(.down))
        let secOfDay = localSeconds - days * 86400
        return dayString(localSeconds) + "T" + pad(secOfDay / 3600) + ":" + pad((secOfDay % 3600) / 60)
    }
}

// MARK: - Deterministic pseudo-randomness

/// splitmix64: a stable mixer. Swift's Hasher is seeded per process, so it cannot be used for
/// values that must be the same in every run of the test suite.
func mix(_ x: UInt64) -> UInt64 {
    var z = x &+ 0x9E37_79B9_7F4A_7C15
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
}

/// FNV-1a of a string, then mixed: a stable per-name seed.
func seed(_ s: String) -> UInt64 {
    var h: UInt64 = 0xCBF2_9CE4_8422_2325
    for b in s.utf8 { h = (h ^ UInt64(b)) &* 0x100_0000_01B3 }
    return mix(h)
}

/// Uniform in [0, 1) from a seed.
func unit(_ x: UInt64) -> Double { Double(mix(x) >> 11) / Double(1 << 53) }

// MARK: - The weather field

/// What makes one value series differ from another besides place and time.
enum Variation {
    /// A forecast from the model run initialised at `initTime` (Unix seconds): a smooth
    /// run-specific error on top of the "truth". Keyed by the initialisation time, not by a run
    /// counter, so the live endpoint and the single-runs endpoint give one run the same values.
    case forecast(initTime: Int)
    /// Observations (archive API): the truth plus hour-by-hour noise that never changes.
    case observed
}

/// All quantities at one place and instant, in SI-ish Open-Meteo default units
/// (°C, %, mm, hPa, km/h). Variables read from one sample stay mutually consistent.
struct Sample {
    var temperature = 0.0, apparent = 0.0, dewPoint = 0.0, humidity = 0.0, cloud = 0.0
    var precipitation = 0.0, precipitationProbability = 0.0, pressure = 0.0, surfacePressure = 0.0
    var windSpeed = 0.0, windDirection = 0.0, gusts = 0.0, isDay = 0.0, weatherCode = 0.0, uvIndex = 0.0
    var snowfall = 0.0, visibility = 0.0
}

struct Field {
    let latitude: Double
    let longitude: Double
    let elevation: Double
    let model: String
    let variation: Variation

    private var latRad: Double { latitude * .pi / 180 }

    /// The per-variable deviation that distinguishes runs (smooth in time, seeded by the run)
    /// or observations (independent per hour, fixed forever).
    ///
    /// A run's error behaves like a real forecast's: it grows with lead time (the valid hour minus
    /// the run's initialisation), so successive runs close in on the hour they forecast, and part
    /// of it is shared by every run of the model (the model's own view of that weather), so runs
    /// agree more the closer they are. Models differ in skill (`Field.skill`) and in a small bias.
    private func deviation(_ name: String, _ t: Double, amplitude: Double) -> Double {
        let key =
            seed(name) ^ UInt64(bitPattern: Int64((latitude * 1000).rounded()))
            ^ (UInt64(bitPattern: Int64((longitude * 1000).rounded())) << 21)
        switch variation {
        case .forecast(let run):
            let modelKey = key ^ seed(model)
            let runKey = modelKey ^ mix(UInt64(bitPattern: Int64(run)))
            func wave(_ k: UInt64) -> Double {
                let phase = 2 * .pi * unit(k), phase2 = 2 * .pi * unit(k &+ 77)
                return 0.7 * sin(2 * .pi * t / (1.7 * 86400) + phase) + 0.3 * sin(2 * .pi * t / (0.6 * 86400) + phase2)
            }
            let leadDays = max(0, t - Double(run)) / 86400
            let growth = 0.3 + 0.7 * leadDays.squareRoot()
            let bias = 0.3 * (2 * unit(modelKey &+ 5) - 1)
            return amplitude * Field.skill(model) * growth * (bias + 0.6 * wave(modelKey) + 0.8 * wave(runKey))
        case .observed:
            // Small next to a forecast's error, so short leads score well, as they do against real stations.
            let hour = UInt64(bitPattern: Int64((t / 3600).rounded(.down)))
            return 0.3 * amplitude * (2 * unit(key ^ mix(hour)) - 1)
        }
    }

    /// How large a model's errors are next to the others' (1: icon_seamless). Known models get a
    /// fixed place, so the demo's ranking reads the same everywhere; others one from their name.
    static func skill(_ model: String) -> Double {
        let known: [String: Double] = [
            "ecmwf_ifs": 0.7, "ecmwf_ifs025": 0.75, "ecmwf_aifs025_single": 0.8, "best_match": 0.85,
            "icon_seamless": 1, "icon_global": 1, "icon_eu": 0.9, "icon_d2": 0.85, "gfs_seamless": 1.25,
            "gfs_global": 1.25, "gem_seamless": 1.15, "jma_seamless": 1.2
        ]
        return known[model] ?? 0.8 + 0.5 * unit(seed(model))
    }

    /// Sine of solar elevation (no equation of time: good enough for is_day and sunrise).
    func sunHeight(_ t: Double) -> Double {
        let dayOfYear = (t / 86400).truncatingRemainder(dividingBy: 365.2425)
        let decl = 23.44 * .pi / 180 * sin(2 * .pi * (dayOfYear + 284 - 365 + 1) / 365)
        let solarHour = (t / 3600 + longitude / 15).truncatingRemainder(dividingBy: 24)
        let hourAngle = (solarHour - 12) * 15 * .pi / 180
        return sin(latRad) * sin(decl) + cos(latRad) * cos(decl) * cos(hourAngle)
    }

    /// Maps any real onto (lo, hi) smoothly, so "realistic ranges" hold without kinks.
    private func squash(_ x: Double, _ lo: Double, _ hi: Double) -> Double {
        let mid = (lo + hi) / 2, half = (hi - lo) / 2
        return mid + half * tanh((x - mid) / half)
    }

    func sample(_ t: Double) -> Sample {
        let day = 86400.0
        // Phases vary smoothly with position so nearby points have similar weather. The weather
        // itself is the same for every model: models differ only in their errors (`deviation`).
        let p1 = latitude * 0.11 + longitude * 0.07
        let p2 = latitude * 0.05 - longitude * 0.13
        let hemisphere: Double = latitude >= 0 ? 1 : -1
        let seasonal = -cos(2 * .pi * (t / day - 15) / 365.2425) * hemisphere * min(1, abs(latitude) / 45)
        let solarHour = (t / 3600 + longitude / 15).truncatingRemainder(dividingBy: 24)
        let diurnal = cos(2 * .pi * (solarHour - 15) / 24)
        let s1 = sin(2 * .pi * t / (4.3 * day) + p1)
        let s2 = sin(2 * .pi * t / (2.1 * day) + p2)
        let s3 = sin(2 * .pi * t / (1.3 * day) + p1 * 1.7)
        let s4 = sin(2 * .pi * t / (1.9 * day) + p2 * 2.3)

        var s = Sample()
        let mean = 14 - 0.35 * (abs(latitude) - 40) + 9 * seasonal - elevation / 160
        s.temperature = squash(
            mean + 4.5 * diurnal + 4 * s1 + 1.5 * s2 + deviation("temperature", t, amplitude: 1.5), -5, 30)
        s.humidity = squash(68 - 15 * diurnal + 12 * s2 + deviation("humidity", t, amplitude: 6), 0, 100)
        s.cloud = squash(50 + 55 * s3 + deviation("cloud", t, amplitude: 15), 0, 100)
        let wet = 0.55 * s4 - 0.3 * s1 + 0.15 * s3 + deviation("wet", t, amplitude: 0.25)
        // Only the top of the "wet" signal rains, so most hours have exactly 0.00 mm.
        s.precipitation = max(0, wet - 0.5) * 6
        s.precipitationProbability = squash((wet + 0.6) * 65, 0, 100)
        s.pressure = 1013 - 10 * s1 + 3 * s2 + deviation("pressure", t, amplitude: 1.5)
        s.surfacePressure = s.pressure - elevation / 8.3
        s.windSpeed = max(0, 12 + 7 * s2 + 3 * s3 + deviation("wind", t, amplitude: 3))
        s.gusts = s.windSpeed * 1.5 + 2
        var dir = (200 + 150 * sin(2 * .pi * t / (3.1 * day) + p2) + deviation("direction", t, amplitude: 20))
            .truncatingRemainder(dividingBy: 360)
        if dir < 0 { dir += 360 }
        s.windDirection = min(359, dir.rounded(.down))
        s.dewPoint = s.temperature - (100 - s.humidity) / 5
        s.apparent = s.temperature - s.windSpeed * 0.08 + (s.humidity - 50) * 0.03
        let sun = sunHeight(t)
        s.isDay = sun > -0.0145 ? 1 : 0
        s.uvIndex = max(0, sun) * 9 * (1 - s.cloud / 150)
        s.snowfall = s.temperature < 0.5 ? s.precipitation * 0.7 : 0
        s.visibility = 24000 - 200 * max(0, s.humidity - 80) * 5 - s.precipitation * 3000
        s.weatherCode = Double(weatherCode(s))
        return s
    }

    /// A valid WMO code that agrees with the other quantities.
    private func weatherCode(_ s: Sample) -> Int {
        let p = (s.precipitation * 100).rounded() / 100
        if p > 0 {
            if s.temperature < 0.5 { return p > 1.5 ? 75 : p > 0.5 ? 73 : 71 }
            if p > 4, s.temperature > 18 { return 95 }
            if p > 2.5 { return 65 }
            if p > 1 { return 63 }
            if p > 0.3 { return 61 }
            return 51
        }
        if s.humidity > 96, s.cloud > 90 { return 45 }
        return s.cloud < 20 ? 0 : s.cloud < 50 ? 1 : s.cloud < 80 ? 2 : 3
    }

    /// Sunrise and sunset (epoch seconds) for the fixed-offset local day starting at `dayStart`.
    func sunTimes(dayStart: Int, offset: Int) -> (Int, Int) {
        let noon = Double(dayStart + offset + 43200) - longitude * 240
        let dayOfYear = (noon / 86400).truncatingRemainder(dividingBy: 365.2425)
        let decl = 23.44 * .pi / 180 * sin(2 * .pi * (dayOfYear + 284 - 365 + 1) / 365)
        let cosH = (sin(-0.833 * .pi / 180) - sin(latRad) * sin(decl)) / (cos(latRad) * cos(decl))
        let h = acos(max(-1, min(1, cosH)))  // polar day → ±12 h, polar night → 0
        let half = h / (2 * .pi) * 86400
        return (Int((noon - half).rounded()), Int((noon + half).rounded()))
    }
}

// MARK: - Variables: which sample field, unit and decimals

struct UnitSettings {
    var fahrenheit = false
    var wind = "kmh"  // kmh | ms | mph | kn
    var inch = false

    init(_ q: Query) {
        fahrenheit = q["temperature_unit"] == "fahrenheit"
        wind = q["wind_speed_unit"] ?? q["windspeed_unit"] ?? "kmh"
        inch = q["precipitation_unit"] == "inch"
    }
}

enum Kind: Sendable {
    case temperature, percent, precipitation, snow, wind, degree, pressure, code, plain, meters, seconds, hours
}

/// One output column: unit string, decimals and how to get the number.
struct Column: Sendable {
    let kind: Kind
    let value: @Sendable (Sample) -> Double

    func unit(_ u: UnitSettings) -> String {
        switch kind {
        case .temperature: return u.fahrenheit ? "°F" : "°C"
        case .percent: return "%"
        case .precipitation: return u.inch ? "inch" : "mm"
        case .snow: return u.inch ? "inch" : "cm"
        case .wind: return ["ms": "m/s", "mph": "mp/h", "kn": "kn"][u.wind] ?? "km/h"
        case .degree: return "°"
        case .pressure: return "hPa"
        case .code: return "wmo code"
        case .plain: return ""
        case .meters: return "m"
        case .seconds: return "s"
        case .hours: return "h"
        }
    }

    /// Fixed decimals per unit, as Open-Meteo's JSON writer prints them.
    func decimals(_ u: UnitSettings) -> Int {
        switch kind {
        case .temperature, .pressure, .hours: return 1
        case .precipitation, .snow: return u.inch ? 3 : 2
        case .wind: return u.wind == "ms" ? 2 : 1
        case .percent, .degree, .code: return 0
        case .plain: return 2
        case .meters, .seconds: return 2
        }
    }

    func convert(_ v: Double, _ u: UnitSettings) -> Double {
        switch kind {
        case .temperature: return u.fahrenheit ? v * 9 / 5 + 32 : v
        case .precipitation: return u.inch ? v / 25.4 : v
        case .snow: return u.inch ? v / 2.54 : v
        case .wind:
            switch u.wind {
            case "ms": return v / 3.6
            case "mph": return v / 1.609344
            case "kn": return v / 1.852
            default: return v
            }
        default: return v
        }
    }
}

enum Variables {
    /// Names are matched without underscores so the old spellings (`weathercode`,
    /// `relativehumidity_2m`, `windspeed_10m`) work and are echoed as requested, like the API.
    static func canonical(_ name: String) -> String { name.replacingOccurrences(of: "_", with: "").lowercased() }

    static let hourly: [String: Column] = {
        let list: [(String, Column)] = [
            ("temperature_2m", Column(kind: .temperature) { $0.temperature }),
            ("apparent_temperature", Column(kind: .temperature) { $0.apparent }),
            ("dew_point_2m", Column(kind: .temperature) { $0.dewPoint }),
            ("relative_humidity_2m", Column(kind: .percent) { $0.humidity }),
            ("cloud_cover", Column(kind: .percent) { $0.cloud }),
            ("precipitation", Column(kind: .precipitation) { $0.precipitation }),
            ("rain", Column(kind: .precipitation) { $0.snowfall > 0 ? 0 : $0.precipitation }),
            ("showers", Column(kind: .precipitation) { _ in 0 }),
            ("snowfall", Column(kind: .snow) { $0.snowfall }),
            ("precipitation_probability", Column(kind: .percent) { $0.precipitationProbability }),
            ("weather_code", Column(kind: .code) { $0.weatherCode }),
            ("pressure_msl", Column(kind: .pressure) { $0.pressure }),
            ("surface_pressure", Column(kind: .pressure) { $0.surfacePressure }),
            ("wind_speed_10m", Column(kind: .wind) { $0.windSpeed }),
            ("wind_direction_10m", Column(kind: .degree) { $0.windDirection }),
            ("wind_gusts_10m", Column(kind: .wind) { $0.gusts }),
            ("is_day", Column(kind: .code) { $0.isDay }),
            ("uv_index", Column(kind: .plain) { $0.uvIndex }),
            ("visibility", Column(kind: .meters) { $0.visibility })
        ]
        return Dictionary(uniqueKeysWithValues: list.map { (canonical($0.0), $0.1) })
    }()

    /// `is_day` prints as a unitless integer, not a "wmo code".
    static func unitOverride(_ name: String) -> String? { canonical(name) == "isday" ? "" : nil }

    /// Daily aggregates over the 24 hourly samples of a fixed-offset local day.
    enum Daily: Sendable {
        case column(Kind, @Sendable ([Sample]) -> Double)
        case sunrise, sunset
    }

    static let daily: [String: Daily] = {
        func maxOf(_ f: @escaping @Sendable (Sample) -> Double) -> @Sendable ([Sample]) -> Double {
            { $0.map(f).max() ?? .nan }
        }
        func minOf(_ f: @escaping @Sendable (Sample) -> Double) -> @Sendable ([Sample]) -> Double {
            { $0.map(f).min() ?? .nan }
        }
        func sumOf(_ f: @escaping @Sendable (Sample) -> Double) -> @Sendable ([Sample]) -> Double {
            // Sum of the already-rounded hourly values, so daily sums match the hourly column.
            { $0.map { (f($0) * 100).rounded() / 100 }.reduce(0, +) }
        }
        let list: [(String, Daily)] = [
            ("weather_code", .column(.code, maxOf { $0.weatherCode })),
            ("temperature_2m_max", .column(.temperature, maxOf { $0.temperature })),
            ("temperature_2m_min", .column(.temperature, minOf { $0.temperature })),
            (
                "temperature_2m_mean",
                .column(.temperature) { $0.map(\.temperature).reduce(0, +) / Double(max(1, $0.count)) }
            ),
            ("apparent_temperature_max", .column(.temperature, maxOf { $0.apparent })),
            ("apparent_temperature_min", .column(.temperature, minOf { $0.apparent })),
            ("precipitation_sum", .column(.precipitation, sumOf { $0.precipitation })),
            ("rain_sum", .column(.precipitation, sumOf { $0.snowfall > 0 ? 0 : $0.precipitation })),
            ("snowfall_sum", .column(.snow, sumOf { $0.snowfall })),
            (
                "precipitation_hours",
                .column(.hours) { Double($0.filter { ($0.precipitation * 100).rounded() > 0 }.count) }
            ),
            ("precipitation_probability_max", .column(.percent, maxOf { $0.precipitationProbability })),
            ("wind_speed_10m_max", .column(.wind, maxOf { $0.windSpeed })),
            ("wind_gusts_10m_max", .column(.wind, maxOf { $0.gusts })),
            ("wind_direction_10m_dominant", .column(.degree) { $0.first?.windDirection ?? .nan }),
            ("uv_index_max", .column(.plain, maxOf { $0.uvIndex })),
            ("daylight_duration", .column(.seconds) { Double($0.filter { $0.isDay > 0 }.count * 3600) }),
            ("sunrise", .sunrise),
            ("sunset", .sunset)
        ]
        return Dictionary(uniqueKeysWithValues: list.map { (canonical($0.0), $0.1) })
    }()
}

// MARK: - JSON text, written by hand to control key order and fixed decimals

struct JSONText {
    var s = ""

    static func quote(_ v: String) -> String {
        var out = "\""
        for c in v.unicodeScalars {
            switch c {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if c.value < 0x20 { out += String(format: "\\u%04x", c.value) } else { out.unicodeScalars.append(c) }
            }
        }
        return out + "\""
    }

    /// Non-finite → null; 0 decimals → integer; otherwise fixed decimals without "-0.0".
    static func number(_ v: Double, decimals: Int) -> String {
        guard v.isFinite else { return "null" }
        if decimals == 0 {
            let i = Int(v.rounded())
            return String(i)
        }
        let scale = pow(10, Double(decimals))
        let scaled = (v * scale).rounded()
        // The digits of the rounded value, written from the integer: what "%.Nf" prints for it,
        // without Foundation's formatter (it was most of a batch answer's time, and the client
        // spins while it waits).
        if decimals <= 6, abs(scaled) < 1e15 {
            let units = Int64(scaled)
            let magnitude = units.magnitude
            let divisor = UInt64(scale)
            let fraction = String(magnitude % divisor)
            return (units < 0 ? "-" : "") + String(magnitude / divisor) + "."
                + String(repeating: "0", count: decimals - fraction.count) + fraction
        }
        var r = scaled / scale
        if r == 0 { r = 0 }  // turns -0.0 into 0.0
        return String(format: "%.\(decimals)f", r)
    }

    /// Shortest representation with at least one fractional digit ("52.5", "38.0").
    static func plain(_ v: Double) -> String {
        let d = "\(v)"
        return d.contains(".") || d.contains("e") ? d : d + ".0"
    }
}

// MARK: - Building a response object

/// Everything the synthesizer needs besides the query.
struct SynthContext {
    /// The clock: "today" (the window's first day), `current` and tz-database offsets.
    let now: Date
    /// The initialisation time (Unix seconds) of the run a model's forecast comes from. The live
    /// endpoint passes each model's latest available run; the single-runs endpoint the requested one.
    let runInit: (String) -> Int
    /// A model's seconds between runs, for the live endpoint's hours before its run's
    /// initialisation: Open-Meteo stitches those from the first hours of the earlier runs ("Past
    /// data is therefore assembled from the first 3 hours of each weather model run", open-meteo
    /// #654), so they stay as they were when a new run arrives. nil: every hour from `runInit`'s run.
    let cadence: ((String) -> Int)?

    init(now: Date, runInit: @escaping (String) -> Int, cadence: ((String) -> Int)? = nil) {
        self.now = now
        self.runInit = runInit
        self.cadence = cadence
    }

    /// Every model from the same run.
    init(now: Date, run: Int) {
        self.init(now: now, runInit: { _ in run })
    }
}

enum Synth {
    enum API { case forecast, archive }

    /// Builds the JSON object text for location `index` of a forecast or archive request.
    static func location(
        api: API, query q: Query, latitude: Double, longitude: Double, index: Int,
        zoneName: String, context: SynthContext
    ) throws(APIError) -> String {
        let zone = try Zone.resolve(zoneName, now: context.now)
        let units = UnitSettings(q)
        let iso = (q["timeformat"] ?? "iso8601").lowercased() != "unixtime"

        // Real responses report the grid cell centre, not the requested point; archive (ERA5-ish)
        // and forecast grids differ. Snap so clients cannot rely on an exact echo.
        let grid = api == .forecast ? 0.025 : 0.1
        // The final rounding removes binary noise such as 52.525000000000006.
        let gridLat = ((latitude / grid).rounded() * grid * 1e6).rounded() / 1e6
        let gridLon = ((longitude / grid).rounded() * grid * 1e6).rounded() / 1e6
        let elevation = (max(0, 120 + 110 * sin(latitude * 0.9) * cos(longitude * 0.7)) * 1).rounded()

        // Time range: forecast = local 00:00 today − past_days, forecast_days × 24 hours (or an
        // explicit start/end date); archive = start_date … end_date, both inclusive.
        // Open-Meteo reads data under the offset truncated to whole hours (+05:45 reads as +05:00).
        let readOffset = (zone.offset / 3600) * 3600
        let firstDay: Int, dayCount: Int
        if let start = q["start_date"], let end = q["end_date"] {
            guard let a = Civil.parseDate(start), let b = Civil.parseDate(end), b >= a else {
                throw APIError(
                    status: 400,
                    reason:
                        "Parameter 'start_date' and 'end_date' must be valid dates (yyyy-mm-dd) with end_date >= start_date"
                )
            }
            guard b - a < 366 * 5 else {
                throw APIError(status: 400, reason: "Date range too long for the replay server")
            }
            firstDay = a
            dayCount = b - a + 1
        } else if api == .archive {
            throw APIError(status: 400, reason: "Parameter 'start_date' and 'end_date' are required")
        } else {
            let past = q.int("past_days") ?? 0
            let days = q.int("forecast_days") ?? 7
            guard (0...16).contains(days) else {
                throw APIError(status: 400, reason: "Forecast days is invalid. Allowed range 0 to 16. Given \(days).")
            }
            guard (0...92).contains(past) else {
                throw APIError(status: 400, reason: "Past days is invalid. Allowed range 0 to 92. Given \(past).")
            }
            let localNow = Int(context.now.timeIntervalSince1970.rounded(.down)) + readOffset
            firstDay = Int((Double(localNow) / 86400).rounded(.down)) - past
            dayCount = past + days
        }
        // Local midnight of the first day under the read offset: the whole UTC hour the data is read at.
        let start = firstDay * 86400 - readOffset

        let models = q.list("models").isEmpty ? ["best_match"] : q.list("models")
        let suffix = models.count > 1
        func field(_ model: String, at time: Int = .max) -> Field {
            var initTime = context.runInit(model)
            if let cadence = context.cadence?(model), cadence > 0, time < initTime {
                initTime = Int((Double(time) / Double(cadence)).rounded(.down)) * cadence
            }
            return Field(
                latitude: latitude, longitude: longitude, elevation: elevation, model: model,
                variation: api == .forecast ? .forecast(initTime: initTime) : .observed)
        }

        var o = "{"
        o += "\"latitude\":\(JSONText.plain(gridLat)),\"longitude\":\(JSONText.plain(gridLon))"
        o += ",\"generationtime_ms\":0.0421\(index % 10)"
        o += ",\"utc_offset_seconds\":\(zone.offset),\"timezone\":\(JSONText.quote(zone.name))"
        o +=
            ",\"timezone_abbreviation\":\(JSONText.quote(zone.abbreviation)),\"elevation\":\(JSONText.plain(elevation))"
        if index != 0 { o += ",\"location_id\":\(index)" }

        // `t` is the instant read; the label is the local hour under the read offset (Open-Meteo's
        // `hourlyDisplay`), and a unixtime stamp is that label less the actual offset. `current` (a
        // true instant, `read: false`) is labelled with the actual offset.
        func timeValue(_ t: Int, daily: Bool, read: Bool = true) -> String {
            let label = t + (read ? readOffset : zone.offset)
            if !iso { return String(label - zone.offset) }
            return JSONText.quote(daily ? Civil.dayString(label) : Civil.minuteString(label))
        }
        let timeUnit = iso ? "\"iso8601\"" : "\"unixtime\""

        // current: now floored to 15 minutes, unsuffixed, first model only, as Open-Meteo sends it.
        let currentVars = q.list("current")
        if !currentVars.isEmpty {
            let columns = try currentVars.map { name throws(APIError) in (name, try hourlyColumn(name, key: "current"))
            }
            let t = Int(context.now.timeIntervalSince1970 / 900) * 900
            let sample = field(models[0]).sample(Double(t))
            o += ",\"current_units\":{\"time\":\(timeUnit),\"interval\":\"seconds\""
            for (name, c) in columns {
                o += ",\(JSONText.quote(name)):\(JSONText.quote(Variables.unitOverride(name) ?? c.unit(units)))"
            }
            o += "},\"current\":{\"time\":\(timeValue(t, daily: false, read: false)),\"interval\":900"
            for (name, c) in columns {
                o +=
                    ",\(JSONText.quote(name)):\(JSONText.number(c.convert(c.value(sample), units), decimals: c.decimals(units)))"
            }
            o += "}"
        }

        let hourlyVars = q.list("hourly")
        let dailyVars = q.list("daily")
        // Samples are shared between the hourly and daily sections so daily max/min/sum agree
        // with the hourly columns.
        var samples: [String: [Sample]] = [:]
        func samplesFor(_ model: String) -> [Sample] {
            if let s = samples[model] { return s }
            let s = (0..<(dayCount * 24)).map { hour in
                let time = start + hour * 3600
                return field(model, at: time).sample(Double(time))
            }
            samples[model] = s
            return s
        }

        if !hourlyVars.isEmpty {
            let columns = try hourlyVars.map { name throws(APIError) in (name, try hourlyColumn(name, key: "hourly")) }
            o += ",\"hourly_units\":{\"time\":\(timeUnit)"
            for model in models {
                for (name, c) in columns {
                    let key = suffix ? "\(name)_\(model)" : name
                    o += ",\(JSONText.quote(key)):\(JSONText.quote(Variables.unitOverride(name) ?? c.unit(units)))"
                }
            }
            o += "},\"hourly\":{\"time\":["
            o += (0..<(dayCount * 24)).map { timeValue(start + $0 * 3600, daily: false) }.joined(separator: ",")
            o += "]"
            for model in models {
                let series = samplesFor(model)
                for (name, c) in columns {
                    let key = suffix ? "\(name)_\(model)" : name
                    let d = c.decimals(units)
                    o +=
                        ",\(JSONText.quote(key)):["
                        + series.map { JSONText.number(c.convert(c.value($0), units), decimals: d) }.joined(
                            separator: ",") + "]"
                }
            }
            o += "}"
        }

        if !dailyVars.isEmpty {
            let columns = try dailyVars.map { name throws(APIError) -> (String, Variables.Daily) in
                guard let d = Variables.daily[Variables.canonical(name)] else {
                    throw APIError(
                        status: 400,
                        reason:
                            "Cannot initialize ForecastVariableDaily from invalid String value \(name) for key daily")
                }
                return (name, d)
            }
            o += ",\"daily_units\":{\"time\":\(timeUnit)"
            for model in models {
                for (name, d) in columns {
                    let key = suffix ? "\(name)_\(model)" : name
                    let unit: String
                    switch d {
                    case .sunrise, .sunset: unit = iso ? "iso8601" : "unixtime"
                    case .column(let kind, let fn):
                        unit = Column(kind: kind, value: { _ in 0 }).unit(units)
                        _ = fn
                    }
                    o += ",\(JSONText.quote(key)):\(JSONText.quote(unit))"
                }
            }
            o += "},\"daily\":{\"time\":["
            o += (0..<dayCount).map { timeValue(start + $0 * 86400, daily: true) }.joined(separator: ",")
            o += "]"
            for model in models {
                let series = samplesFor(model)
                let f = field(model)
                for (name, d) in columns {
                    let key = suffix ? "\(name)_\(model)" : name
                    let values: [String] = (0..<dayCount).map { day in
                        let dayStart = start + day * 86400
                        switch d {
                        case .sunrise, .sunset:
                            let (rise, set) = f.sunTimes(
                                dayStart: dayStart + readOffset - zone.offset, offset: zone.offset)
                            let v = d.isSunrise ? rise : set
                            return iso ? JSONText.quote(Civil.minuteString(v + zone.offset)) : String(v)
                        case .column(let kind, let fn):
                            let c = Column(kind: kind) { _ in 0 }
                            let slice = Array(series[(day * 24)..<(day * 24 + 24)])
                            return JSONText.number(c.convert(fn(slice), units), decimals: c.decimals(units))
                        }
                    }
                    o += ",\(JSONText.quote(key)):[" + values.joined(separator: ",") + "]"
                }
            }
            o += "}"
        }
        o += "}"
        return o
    }

    private static func hourlyColumn(_ name: String, key: String) throws(APIError) -> Column {
        guard let c = Variables.hourly[Variables.canonical(name)] else {
            // Same wording pattern as Open-Meteo's error bodies; clients must not parse it.
            throw APIError(
                status: 400,
                reason:
                    "Cannot initialize SurfaceAndPressureVariable<ForecastSurfaceVariable, ForecastPressureVariable> from invalid String value \(name) for key \(key)"
            )
        }
        return c
    }
}

extension Variables.Daily {
    var isSunrise: Bool { if case .sunrise = self { return true } else { return false } }
}
