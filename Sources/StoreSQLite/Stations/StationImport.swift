import FoundationEssentials
import WxCore
import WxSQLite
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

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
                try keeping(.enclosingWrite) {
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
