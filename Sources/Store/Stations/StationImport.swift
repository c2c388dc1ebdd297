import FoundationEssentials
import WxCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Why an hour of one variable has no value.
public enum StationMissingReason: String, Sendable, CaseIterable, Comparable {
    case gap = "gap"
    case partialHour = "partial hour"
    case overlappingRecords = "overlapping records"
    case noValue = "no value"
    case unknownUnit = "unknown unit"
    case noPreviousSum = "no sum the hour before"
    case sumDecreased = "sum decreased"
    case outOfRange = "out of range"

    /// What the reason means, for the report.
    public var explanation: String {
        switch self {
        case .gap:
            return "no reading for the hour; for weewx's instant values none at the hour or in the 10 minutes before it"
        case .partialHour: return "the records cover less than the 60 minutes"
        case .overlappingRecords: return "the records' intervals add up to more than 60 minutes"
        case .noValue: return "the reading is empty (NULL)"
        case .unknownUnit: return "a unit system (usUnits) wxdb does not know"
        case .noPreviousSum: return "the increase needs the hour before, which has no row"
        case .sumDecreased: return "the total went down (a reset)"
        case .outOfRange: return "a number no weather can have (see PhysicalRange: the world records, widened)"
        }
    }

    public static func < (a: Self, b: Self) -> Bool {
        allCases.firstIndex(of: a)! < allCases.firstIndex(of: b)!
    }
}

/// Hourly observations read from a station's own database, with an account of every hour.
public struct StationImport: Sendable {
    /// The hourly variables this import sets (indices into `Variables.hourly`), in column order.
    public var variables: [Int]
    /// Hours with at least one value, ascending; each row has a slot per hourly variable.
    public var hours: [(time: Int64, values: [Double?])] = []
    /// The valid hours considered, inclusive; nil when the file had nothing in range.
    public var firstHour: Int64?
    public var lastHour: Int64?
    /// Per variable index: hours with a value.
    public var stored: [Int: Int] = [:]
    /// Per variable index: hours without a value, counted by reason.
    public var missing: [Int: [StationMissingReason: Int]] = [:]
    /// Rows read from the file.
    public var recordsRead = 0
    /// What the file said about units (weewx unit systems seen, or each statistic's unit).
    public var units: [String] = []

    public init(variables: [Int]) { self.variables = variables }

    /// The number of valid hours considered.
    public var hoursConsidered: Int {
        guard let firstHour, let lastHour else { return 0 }
        return Int((lastHour - firstHour) / 3600) + 1
    }

    /// Counts `hours` hours without a reading of any variable (a stretch no record falls in).
    public mutating func recordGaps(_ hours: Int64) {
        guard hours > 0 else { return }
        for variable in variables { missing[variable, default: [:]][.gap, default: 0] += Int(hours) }
    }

    /// Fills `hours`, `stored` and `missing` from one outcome per variable per hour.
    public mutating func record(hour: Int64, outcomes: [Int: Result<Double, StationMissingMark>]) {
        var row = [Double?](repeating: nil, count: Variables.hourly.count)
        var any = false
        for variable in variables {
            switch outcomes[variable] ?? .failure(StationMissingMark(.gap)) {
            case .success(let value) where !PhysicalRange.contains(value, Variables.hourly[variable]):
                missing[variable, default: [:]][.outOfRange, default: 0] += 1
            case .success(let value):
                row[variable] = value
                stored[variable, default: 0] += 1
                any = true
            case .failure(let mark):
                missing[variable, default: [:]][mark.reason, default: 0] += 1
            }
        }
        if any { hours.append((hour, row)) }
    }
}

/// A missing value's reason, as a `Result` failure.
public struct StationMissingMark: Error {
    public let reason: StationMissingReason
    public init(_ reason: StationMissingReason) { self.reason = reason }
}

/// Why a station file cannot be imported. Nothing is stored when one of these is thrown.
public struct StationFileError: Error, CustomStringConvertible, Sendable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

/// The valid times a station file's rows may have, 1900-01-01 to 2200-01-01 UTC: a row outside is
/// not a reading (a hostile or broken file may hold `Int64.min` or 4e18), and no hour arithmetic
/// on a time within can overflow.
public let stationTimes: ClosedRange<Int64> = -2_208_988_800...7_258_118_400

/// Valid hours (multiples of 3600) from the first at or after `from` to the last before `to`,
/// within `stationTimes`.
public func hourBounds(from: Int64?, to: Int64?) -> (first: Int64, last: Int64) {
    let clamp = { (t: Int64) in min(max(t, stationTimes.lowerBound), stationTimes.upperBound) }
    let first = ceilHour(clamp(from ?? stationTimes.lowerBound))
    let last = floorHour(clamp(to ?? stationTimes.upperBound) - 1)
    return (first, last)
}

/// Hour arithmetic on times within `stationTimes` (callers clamp first).
public func ceilHour(_ t: Int64) -> Int64 { floorHour(t + 3599) }
public func floorHour(_ t: Int64) -> Int64 { t - ((t % 3600) + 3600) % 3600 }
