import WxCore
import WxSQLite
import WxStore

extension SQLiteStore {
    /// The location's fetch log per UTC hour in `[from, to)`, oldest first; hours without any attempt
    /// are absent. A fetch counts at its `attempted_at`, except a run stored from the Single Runs
    /// archive, which counts at its initialisation hour: `wxdb backfill` asks for a month of runs in
    /// one minute, and the calendar should show which runs of that month are there, not the minute.
    public func fetchHours(locationID: Int64, from: Int64?, to: Int64?) throws -> [FetchHour] {
        let statement = try db.cachedStatement(
            """
            SELECT (t - (t % 3600 + 3600) % 3600) AS hour,
                   sum(outcome = 'stored'), sum(outcome = 'repeated'), sum(outcome = 'failed')
            FROM (
                SELECT CASE WHEN f.origin = 'single_run' AND r.issued_at IS NOT NULL THEN r.issued_at
                            ELSE f.attempted_at END AS t,
                       f.outcome
                FROM fetch_log f LEFT JOIN forecast_runs r ON r.id = f.run_id
                WHERE f.location_id = ?1
            )
            WHERE t >= ?2 AND t < ?3
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
