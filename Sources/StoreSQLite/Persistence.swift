import WxCore
import WxSQLite
import WxStore

extension SQLiteStore {
    /// The persistence reference of every issue time of the location's runs (of `model`, when
    /// given): the value of `observed` in the latest observation from `source` at or before the issue
    /// time and less than an hour before it, which the skill score carries forward to every lead.
    /// Issue times need not be whole hours (a run measured from its first fetch) and station
    /// observations need not be hourly, so the reference is looked up, not computed. Issue times
    /// without one are absent.
    public func persistenceReferences(locationID: Int64, source: String, observed: Variable, model: String?) throws
        -> [Int64: Double]
    {
        let column = try Self.hourlyColumn(observed.name)
        var references: [Int64: Double] = [:]
        // Once per issue time (not per pair): one seek along the (location, time) key each.
        let statement = try db.cachedStatement(
            """
            SELECT r.issued_at,
                   (SELECT o.\(column) FROM observations o
                     WHERE o.location_id = ?1 AND o.source = ?2 AND o.time <= r.issued_at AND o.time > r.issued_at - 3600
                       AND o.\(column) IS NOT NULL
                     ORDER BY o.time DESC LIMIT 1)
            FROM (SELECT DISTINCT issued_at FROM forecast_runs WHERE location_id = ?1 AND (?3 IS NULL OR model = ?3)) r
            """)
        try statement.bind([.integer(locationID), .text(source), model.sqlValue])
        defer { statement.reset() }
        while let row = try statement.step() {
            if let value = row.optionalDouble(1) { references[row.int64(0)] = value }
        }
        return references
    }
}
