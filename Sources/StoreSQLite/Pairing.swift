import WxCore
import WxSQLite
import WxStore

extension SQLiteStore {
    /// Whether `source` has at least one observation of `observed` that pairs with a stored
    /// forecast of `forecast` (any run of the location, of `model` when given, with a lead in
    /// `leadSeconds`, valid in [`from`, `to`)), or, when runs were pruned, sums of `forecast`'s
    /// pairs in `verification_summaries` at those leads and days.
    public func sourcePairs(
        locationID: Int64, source: String, forecast: Variable, observed: Variable,
        from: Int64?, to: Int64?, model: String?, leadSeconds: Range<Int64>
    ) throws -> Bool {
        let forecastColumn = try Self.hourlyColumn(forecast.name)
        let observedColumn = try Self.hourlyColumn(observed.name)
        // From the source's observations (its own few rows when it is a small station file) to the
        // runs issued up to maxLead before each, stopping at the first pair.
        let pairs = try db.cachedStatement(
            """
            SELECT 1 FROM observations o
            CROSS JOIN forecast_runs r INDEXED BY forecast_runs_by_location_issued
                ON r.location_id = o.location_id AND r.issued_at <= o.time - ?7 AND r.issued_at > o.time - ?6
            CROSS JOIN hourly_forecasts h ON h.run_id = r.id AND h.valid_time = o.time
            WHERE o.location_id = ?1 AND o.source = ?2 AND o.time >= ?3 AND o.time < ?4 AND (?5 IS NULL OR r.model = ?5)
              AND o.\(observedColumn) IS NOT NULL AND h.\(forecastColumn) IS NOT NULL
              AND o.source IS NOT 'analysis:' || r.model
            LIMIT 1
            """)
        try pairs.bind([
            .integer(locationID), .text(source), .integer(from ?? .min), .integer(to ?? .max), model.sqlValue,
            .integer(leadSeconds.upperBound), .integer(leadSeconds.lowerBound)
        ])
        defer { pairs.reset() }
        if try pairs.step() != nil { return true }
        // The sums hold every pair, pruned or not: only pruned runs' pairs are missing from the rows,
        // so the sums are asked only when a run was pruned, for the leads and days asked about.
        return try db.scalarInt(
            """
            SELECT EXISTS (SELECT 1 FROM forecast_runs WHERE location_id = ?1 AND pruned_at IS NOT NULL AND (?4 IS NULL OR model = ?4))
               AND EXISTS (SELECT 1 FROM verification_summaries
                           WHERE location_id = ?1 AND source = ?2 AND variable = ?3 AND (?4 IS NULL OR model = ?4)
                             AND lead_to_h * 3600 > ?5 AND lead_from_h * 3600 < ?6
                             AND coalesce(valid_to, ?8) > ?7 AND coalesce(valid_from, ?7) < ?8)
            """,
            [
                .integer(locationID), .text(source), .text(forecast.name), model.sqlValue,
                .integer(leadSeconds.lowerBound), .integer(leadSeconds.upperBound), .integer(from ?? .min),
                .integer(to ?? .max)
            ]) ?? 0 > 0
    }
}
