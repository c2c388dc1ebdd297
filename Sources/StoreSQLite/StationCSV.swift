import FoundationEssentials
import WxCore
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

extension SQLiteStore {
    /// Stores station observations in one transaction; returns how many rows were written. A
    /// station's values replace what an earlier import of the same source stored for those hours.
    public func importObservations(_ csv: StationCSV, locationID: Int64, source: String, recordedAt: Int64) throws
        -> Int
    {
        try db.transaction {
            func write() throws {
                for row in csv.rows {
                    try upsertObservation(
                        locationID: locationID, source: source, time: row.time, values: row.values,
                        recordedAt: recordedAt, replacing: true)
                }
            }
            // One update of the verification sums over the span of the hours that change (see
            // `upsertObservations`).
            let changed = try csv.rows.filter {
                try observationChanges(locationID, source, $0.time, $0.values, recordedAt, true)
            }.map(\.time)
            if let first = changed.min(), let last = changed.max() {
                try keepingObservationSums(
                    ObservationSpan(location: locationID, source: source, from: first, through: last)
                ) {
                    try keeping(.enclosingWrite, write)
                }
            } else {
                try keeping(.enclosingWrite, write)
            }
            return csv.rows.count
        }
    }
}
