import WxCore
import WxSQLite

/// What the fetch log says about one hour of a location: how many fetches (or imports) stored a new
/// run, returned content already stored, or failed.
public struct FetchHour: Sendable, Equatable {
    /// The hour, as Unix seconds at its start (UTC).
    public var hour: Int64
    public var stored: Int
    public var repeated: Int
    public var failed: Int
}

extension Store {
    /// The location's fetch log per UTC hour of `attempted_at` in `[from, to)`, oldest first; hours
    /// without any attempt are absent.
    public func fetchHours(locationID: Int64, from: Int64?, to: Int64?) throws -> [FetchHour] {
        let statement = try db.cachedStatement(
            """
            SELECT (attempted_at - (attempted_at % 3600 + 3600) % 3600) AS hour,
                   sum(outcome = 'stored'), sum(outcome = 'repeated'), sum(outcome = 'failed')
            FROM fetch_log
            WHERE location_id = ? AND attempted_at >= ? AND attempted_at < ?
            GROUP BY hour ORDER BY hour
            """)
        try statement.bind([.integer(locationID), .integer(from ?? .min), .integer(to ?? .max)])
        defer { statement.reset() }
        var hours: [FetchHour] = []
        while let row = try statement.step() {
            let stored = StoredRow(row)
            hours.append(
                FetchHour(hour: stored.int64(0), stored: stored.int(1), repeated: stored.int(2), failed: stored.int(3)))
        }
        return hours
    }
}
