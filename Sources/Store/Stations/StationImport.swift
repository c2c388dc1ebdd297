import FoundationEssentials
import WxCore
import WxSQLite

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
    mutating func recordGaps(_ hours: Int64) {
        guard hours > 0 else { return }
        for variable in variables { missing[variable, default: [:]][.gap, default: 0] += Int(hours) }
    }

    /// Fills `hours`, `stored` and `missing` from one outcome per variable per hour.
    mutating func record(hour: Int64, outcomes: [Int: Result<Double, StationMissingMark>]) {
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
struct StationMissingMark: Error {
    let reason: StationMissingReason
    init(_ reason: StationMissingReason) { self.reason = reason }
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
func hourBounds(from: Int64?, to: Int64?) -> (first: Int64, last: Int64) {
    let clamp = { (t: Int64) in min(max(t, stationTimes.lowerBound), stationTimes.upperBound) }
    let first = ceilHour(clamp(from ?? stationTimes.lowerBound))
    let last = floorHour(clamp(to ?? stationTimes.upperBound) - 1)
    return (first, last)
}

/// Hour arithmetic on times within `stationTimes` (callers clamp first).
func ceilHour(_ t: Int64) -> Int64 { floorHour(t + 3599) }
func floorHour(_ t: Int64) -> Int64 { t - ((t % 3600) + 3600) % 3600 }

/// Runs `body` on a station's database opened strictly read-only (`mode=ro`, never created, journal
/// untouched) inside one read transaction, released on return. SQLite's errors become messages
/// naming the file: damage found halfway through the read is the station file's, not wxdb's.
///
/// The file is someone else's and may be hostile: only a regular file is opened (a fifo would block
/// forever), its schema is not trusted (no functions with side effects in its views), and the
/// work of the whole read is capped by the file's size, so a view over an endless recursive query
/// ends with a message instead of never.
func readStationFile<T>(_ path: String, kind: String, _ body: (Database) throws -> T) throws -> T {
    var info = stat()
    if stat(path, &info) == 0 {
        switch info.st_mode & S_IFMT {
        case S_IFREG: break
        case S_IFDIR:
            throw StationFileError(
                "\(path) is a folder, not a \(kind); nothing was stored. Pass the database file inside it")
        default:
            throw StationFileError(
                "\(path) is not a regular file (a fifo, device or socket), so it cannot be read as a \(kind); nothing was stored. Pass the database file itself"
            )
        }
    }
    // What the file can really hold: the database and its WAL.
    var wal = stat()
    let bytes = Int64(info.st_size) + (stat(path + "-wal", &wal) == 0 ? Int64(wal.st_size) : 0)
    do {
        let db = try Database(path: path, options: .foreignReadOnly)
        try db.execute("PRAGMA trusted_schema = OFF")
        db.limitWork(steps: workLimit(bytes: bytes), valueBytes: 16 << 20)
        do {
            return try db.transaction(.deferred) { try body(db) }
        } catch let error as SQLiteError where db.workLimitReached || error.isInterrupted {
            throw StationFileError(
                "reading \(path) took more work than a \(kind) of its size can need (over \(workLimit(bytes: bytes)) steps for \(bytes) bytes), so it holds something that is not a station's records, such as a view over an endless query; nothing was stored"
            )
        }
    } catch let error as SQLiteError {
        if error.isNotADatabase {
            throw StationFileError(
                "\(path) is not a SQLite database, or it is damaged, so it cannot be read as a \(kind); nothing was stored. Check the path"
            )
        }
        if error.isBusy {
            throw StationFileError(
                "\(path) stayed locked by another program; nothing was stored. Try again in a minute")
        }
        if error.isReadOnly {
            let journal = path + "-journal"
            if FileManager.default.fileExists(atPath: journal) {
                throw StationFileError(
                    "\(path) has a hot journal beside it (\(journal)): a program stopped in the middle of writing it, and SQLite must roll that back before the file can be read, which would mean writing to it; wxdb never writes a station's files. Let the station's own program open it once, or copy both files elsewhere and import the copy. Nothing was stored"
                )
            }
            throw StationFileError(
                "\(path) cannot be read without writing to it (\(error.message)): its -wal or -shm needs recovery, which only the station's own program may do. Let it open the file once, or copy the files elsewhere and import the copy. Nothing was stored"
            )
        }
        throw StationFileError(
            "cannot read \(path) (\(error.message)); check the path and that it is readable. Nothing was stored")
    }
}

/// The virtual-machine steps a read of a station file of `bytes` may take: far more than any
/// query of wxdb's needs per byte of records (a few dozen per row), far less than forever.
func workLimit(bytes: Int64) -> Int64 {
    let (scaled, overflow) = max(bytes, 0).multipliedReportingOverflow(by: 2000)
    return overflow ? Int64.max / 2 : min(scaled, Int64.max / 4) + 50_000_000
}

/// The column names of `table`, lowercased; empty when there is no such table.
func columnNames(_ db: Database, table: String) throws -> Set<String> {
    Set(try db.rows("SELECT lower(name) FROM pragma_table_info(?)", [.text(table)]) { $0.string(0) })
}

extension SQLiteStore {
    /// Stores an import as observations of `source` in one transaction: over the hours it
    /// considered, the imported variables become exactly what the file says now (a value that
    /// disappeared from a corrected file is cleared), other variables are left alone, and rows
    /// left with no value at all are removed. Returns the number of hours written.
    @discardableResult
    public func replaceStationObservations(
        _ result: StationImport, locationID: Int64, source: String, recordedAt: Int64
    ) throws -> Int {
        guard let first = result.firstHour, let last = result.lastHour, !result.variables.isEmpty else { return 0 }
        // One scope for the whole file: the pairs of its hours are subtracted once, before it clears
        // and rewrites them, and added once after (not hour by hour).
        return try db.transaction {
            try keepingSums(.observations(location: locationID, source: source, from: first, through: last)) {
                try withoutKeepingSums {
                    try replaceStationRows(result, locationID: locationID, source: source, recordedAt: recordedAt)
                }
            }
        }
    }

    func replaceStationRows(_ result: StationImport, locationID: Int64, source: String, recordedAt: Int64) throws
        -> Int
    {
        guard let first = result.firstHour, let last = result.lastHour else { return 0 }
        let names = result.variables.map { Variables.hourly[$0].name }
        do {
            try db.run(
                "UPDATE observations SET " + names.map { "\($0) = NULL" }.joined(separator: ", ")
                    + " WHERE location_id = ? AND source = ? AND time BETWEEN ? AND ?",
                [.integer(locationID), .text(source), .integer(first), .integer(last)])
            for hour in result.hours {
                try upsertObservation(
                    locationID: locationID, source: source, time: hour.time, values: hour.values, recordedAt: recordedAt
                )
            }
            try db.run(
                "DELETE FROM observations WHERE location_id = ? AND source = ? AND time BETWEEN ? AND ? AND "
                    + Variables.hourlyNames.map { "\($0) IS NULL" }.joined(separator: " AND "),
                [.integer(locationID), .text(source), .integer(first), .integer(last)])
            return result.hours.count
        }
    }
}
