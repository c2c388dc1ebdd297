import WxCore

/// What kind of report a station sent; a lower kind wins the hour.
public enum ReportKind: Int, Sendable, Comparable {
    /// The scheduled report (METAR, SYNOP, an ISD-Lite or Meteostat hour).
    case routine = 0
    /// An unscheduled report (SPECI) sent because the weather changed.
    case special = 1
    /// The 5-minute reports (IEM's HFMETAR); never better than a routine report.
    case highFrequency = 2

    public static func < (a: Self, b: Self) -> Bool { a.rawValue < b.rawValue }
}

/// How a report's precipitation amount is defined.
public enum PrecipitationPeriod: Sendable {
    /// The hour ending at the report's hour (ISD-Lite, GHCNh, Meteostat).
    case pastHour
    /// Since the previous routine report (METAR's P group, IEM's p01i/p01m): the hour only when the
    /// previous hour has a routine report too.
    case sinceLastRoutine
}

/// One report as the station sent it, converted to wxdb's units (°C, %, hPa, km/h, mm, degrees).
public struct StationReport: Sendable {
    /// The report's instant (UTC seconds), to the minute.
    public var time: Int64
    public var kind: ReportKind
    /// The line of the file it came from, for messages.
    public var line: Int
    /// One slot per hourly variable (`Variables.hourly`).
    public var values: [Double?]
    /// Why a variable this report speaks of has no value (calm, variable wind, QC code, model).
    public var reasons: [Int: OfficialMissingReason] = [:]
    public var precipitationPeriod: PrecipitationPeriod = .pastHour
    /// The precipitation was a trace (stored as 0 mm, counted).
    public var trace = false

    public init(time: Int64, kind: ReportKind = .routine, line: Int) {
        self.time = time
        self.kind = kind
        self.line = line
        values = [Double?](repeating: nil, count: Variables.hourly.count)
    }
}

/// Why an hour of one variable has no value in an official station's import.
public enum OfficialMissingReason: String, Sendable, CaseIterable, Comparable {
    case noReport = "no report"
    case noValue = "no value"
    case calm = "calm"
    case variableWind = "variable wind"
    case partialHour = "not the whole hour"
    case erroneous = "QC erroneous"
    case modelFilled = "model-filled"

    /// What the reason means, for the report.
    public var explanation: String {
        switch self {
        case .noReport: return "no report within 15 minutes of the hour"
        case .noValue: return "the report chosen for the hour does not give it"
        case .calm: return "calm wind has no direction (speed stored as 0)"
        case .variableWind: return "variable wind (VRB) has no direction"
        case .partialHour: return "the reported precipitation does not cover exactly the hour before"
        case .erroneous: return "its quality code marks the value erroneous or suspect"
        case .modelFilled: return "the file filled it from a model; verifying a model against a model proves nothing"
        }
    }

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// A station's file that cannot be imported, with the line where that showed. Nothing is stored
/// when one is thrown.
public struct StationFormatError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public let line: Int?
    public init(_ message: String, line: Int? = nil) {
        self.message = message
        self.line = line
    }
    public var description: String { line.map { "line \($0): \(message)" } ?? message }
}

/// Where a station is, when its file says so.
public struct StationPlace: Sendable, Equatable {
    public var latitude: Double
    public var longitude: Double
    public var elevation: Double?
    public var name: String?
    public init(latitude: Double, longitude: Double, elevation: Double?, name: String? = nil) {
        self.latitude = latitude
        self.longitude = longitude
        self.elevation = elevation
        self.name = name
    }
}

/// A file's reports read and matched to wxdb's hours, with an account of every hour.
public struct OfficialImport: Sendable {
    /// What the file was (e.g. "ISD-Lite", "IEM ASOS CSV").
    public var format: String
    /// The station id the file speaks of (`EDDH`, `101470-99999`, `10147`), nil when it does not say.
    public var station: String?
    public var place: StationPlace?
    /// The hourly variables this import sets (indices into `Variables.hourly`).
    public var variables: [Int]
    /// Hours with at least one value, ascending; each row has a slot per hourly variable.
    public var hours: [(time: Int64, values: [Double?])] = []
    public var firstHour: Int64?
    public var lastHour: Int64?
    /// Per variable index: hours with a value.
    public var stored: [Int: Int] = [:]
    /// Per variable index: hours without a value, by reason.
    public var missing: [Int: [OfficialMissingReason: Int]] = [:]
    /// Reports (lines or rows) read.
    public var reportsRead = 0
    /// Reports that were chosen for an hour.
    public var reportsUsed = 0
    /// Reports more than 15 minutes from any whole hour.
    public var reportsOffHour = 0
    /// Reports that lost their hour to a better one (a routine report over a special, a nearer one).
    public var reportsOutranked = 0
    /// Hours whose precipitation was a trace, stored as 0 mm.
    public var traceHours = 0
    /// Rows or values the file filled from a model, left out.
    public var modelFilledValues = 0
    public var modelFilledRows = 0
    /// Values whose quality code marks them erroneous, left out.
    public var erroneousValues = 0
    /// Notes about the file worth saying (legacy format, units seen).
    public var notes: [String] = []

    public init(format: String, variables: [Int]) {
        self.format = format
        self.variables = variables
    }

    /// The number of hours considered.
    public var hoursConsidered: Int {
        guard let firstHour, let lastHour else { return 0 }
        return Int((lastHour - firstHour) / 3600) + 1
    }
}

/// The one rule every import maps reports to wxdb's hourly instants by:
///
/// - For valid hour H, the report chosen is the one within 15 minutes of H (|t − H| ≤ 15 min) of the
///   best kind: a routine report before a special before a high-frequency one; among those the
///   nearest to H; on a tie the earlier one (what was known at H); on the same minute the later
///   line (a correction).
/// - Temperature, dew point, humidity, pressure, wind and gusts come from that report alone.
/// - Precipitation is stored only where the chosen report's amount covers exactly the hour before
///   H: a past-hour amount (ISD-Lite, GHCNh, Meteostat), or a METAR amount since the last routine
///   report when that report is routine and H − 1 h has a routine report too.
/// - The hours considered run from the first to the last hour any report is near (within
///   `from`/`to` when given); each hour of each variable is either stored or counted under a reason.
public enum HourRule {
    /// Reports more than this many seconds from a whole hour match no hour.
    public static let window: Int64 = 15 * 60

    /// Matches `reports` (any order) to hours; `from`/`to` limit the valid hours (inclusive from,
    /// exclusive to).
    public static func match(
        _ reports: [StationReport], into result: inout OfficialImport, from: Int64? = nil, to: Int64? = nil
    ) {
        result.reportsRead = max(result.reportsRead, reports.count)
        let first = from.map { ceilHour($0) } ?? Int64.min / 2
        let last = to.map { floorHour($0 - 1) } ?? Int64.max / 2
        // The best report per hour, and whether each hour has a routine report at all.
        var best: [Int64: Int] = [:]
        var routineHours = Set<Int64>()
        for (index, report) in reports.enumerated() {
            let hour = floorHour(report.time + 1800)
            let offset = report.time - hour
            guard abs(offset) <= window else {
                result.reportsOffHour += 1
                continue
            }
            if report.kind == .routine { routineHours.insert(hour) }
            guard hour >= first, hour <= last else { continue }
            if let current = best[hour] {
                if better(report, than: reports[current], hour: hour) { best[hour] = index }
                result.reportsOutranked += 1
            } else {
                best[hour] = index
            }
        }
        guard let firstSeen = best.keys.min(), let lastSeen = best.keys.max() else { return }
        let start = from != nil ? max(first, firstSeen) : firstSeen
        let end = to != nil ? min(last, lastSeen) : lastSeen
        result.firstHour = result.firstHour.map { min($0, start) } ?? start
        result.lastHour = result.lastHour.map { max($0, end) } ?? end
        let precipitation = Variables.hourlyIndex(of: "precipitation")!
        var hour = start
        while hour <= end {
            defer { hour += 3600 }
            guard let index = best[hour] else {
                for variable in result.variables {
                    result.missing[variable, default: [:]][.noReport, default: 0] += 1
                }
                continue
            }
            let report = reports[index]
            result.reportsUsed += 1
            var row = [Double?](repeating: nil, count: Variables.hourly.count)
            var any = false
            for variable in result.variables {
                var value = report.values[variable]
                var reason = report.reasons[variable] ?? .noValue
                if variable == precipitation, value != nil, report.precipitationPeriod == .sinceLastRoutine,
                    report.kind != .routine || !routineHours.contains(hour - 3600)
                {
                    value = nil
                    reason = .partialHour
                }
                if let value {
                    row[variable] = value
                    result.stored[variable, default: 0] += 1
                    any = true
                    if variable == precipitation && report.trace { result.traceHours += 1 }
                } else {
                    result.missing[variable, default: [:]][reason, default: 0] += 1
                }
            }
            if any { result.hours.append((hour, row)) }
        }
    }

    static func better(_ a: StationReport, than b: StationReport, hour: Int64) -> Bool {
        if a.kind != b.kind { return a.kind < b.kind }
        let da = abs(a.time - hour)
        let db = abs(b.time - hour)
        if da != db { return da < db }
        if a.time != b.time { return a.time < b.time }
        return a.line > b.line
    }

    static func floorHour(_ t: Int64) -> Int64 { t - ((t % 3600) + 3600) % 3600 }
    static func ceilHour(_ t: Int64) -> Int64 { floorHour(t + 3599) }
}

/// Physical limits a reading must be within; anything outside is a broken file, not weather.
enum Plausible {
    /// Per hourly variable slot: the range and unit, nil where wxdb does not check.
    static let limits: [(range: ClosedRange<Double>, unit: String)?] = Variables.hourly.map { variable in
        switch variable.name {
        case "temperature_2m": return (-90...60, "°C")
        case "dew_point_2m": return (-100...40, "°C")
        case "relative_humidity_2m": return (0...100.5, "%")
        case "precipitation": return (0...400, "mm")
        case "pressure_msl": return (850...1090, "hPa")
        case "wind_speed_10m", "wind_gusts_10m": return (0...450, "km/h")
        case "wind_direction_10m": return (0...360, "°")
        default: return nil
        }
    }

    static func check(_ report: StationReport) throws {
        for index in report.values.indices {
            guard let value = report.values[index], let (range, unit) = limits[index] else { continue }
            guard value.isFinite, range.contains(value) else {
                let shown = (value * 100).rounded() / 100
                throw StationFormatError(
                    "\(Variables.hourly[index].name) of \(shown) \(unit) is impossible (expected \(range.lowerBound) to \(range.upperBound) \(unit)); the file is damaged or not in the units it claims",
                    line: report.line)
            }
        }
    }
}

/// Unit factors the station formats use, to wxdb's units.
enum Convert {
    static let knot = 1.852
    static let mph = 1.609344
    static let metresPerSecond = 3.6
    static let inch = 25.4
    static func fahrenheit(_ f: Double) -> Double { (f - 32) * 5 / 9 }
    /// Rounds a converted value to 2 decimals, as wxdb stores converted values.
    static func rounded(_ value: Double) -> Double { (value * 100).rounded() / 100 }
}

/// Variable slots by name, looked up once.
enum Slot {
    static let temperature = Variables.hourlyIndex(of: "temperature_2m")!
    static let humidity = Variables.hourlyIndex(of: "relative_humidity_2m")!
    static let dewPoint = Variables.hourlyIndex(of: "dew_point_2m")!
    static let precipitation = Variables.hourlyIndex(of: "precipitation")!
    static let pressure = Variables.hourlyIndex(of: "pressure_msl")!
    static let windSpeed = Variables.hourlyIndex(of: "wind_speed_10m")!
    static let windDirection = Variables.hourlyIndex(of: "wind_direction_10m")!
    static let gusts = Variables.hourlyIndex(of: "wind_gusts_10m")!
}

extension String {
    /// Lines split on the newline byte: splitting by `Character` (grapheme clusters) cost most of
    /// a year of high-frequency reports' import.
    func byteLines() -> [Substring] {
        utf8.split(separator: 10, omittingEmptySubsequences: false).map { Substring($0) }
    }
}

extension Substring {
    /// Fields split on one ASCII byte, empty fields kept.
    func byteFields(_ separator: UInt8) -> [Substring] {
        utf8.split(separator: separator, omittingEmptySubsequences: false).map { Substring($0) }
    }

    /// Words split on spaces, tabs and carriage returns.
    func byteWords() -> [Substring] {
        utf8.split(whereSeparator: { $0 == 32 || $0 == 9 || $0 == 13 }).map { Substring($0) }
    }
}
