import WxCore
import WxSQLite
import WxStore

extension SQLiteStore {
    /// Streams the non-null forecasts of `model` for one hourly variable whose lead in hours lies in
    /// `[leadFrom, leadTo)` (half-open like verify's lead buckets, so lead days side by side share no
    /// lead; `leadFrom == leadTo` is that one lead) and whose valid time is in `[from, to)`, ordered
    /// by valid time and issue time: for each target hour, what successive runs said about it. A
    /// value no weather can have (`PhysicalRange`, stored before the doors refused it) is left out.
    public func forEachForecastSequence(
        locationID: Int64, model: String, variable: String, leadFromHours: Double, leadToHours: Double,
        from: Int64?, to: Int64?, _ visit: (ForecastValue) throws -> Void
    ) throws {
        let column = try Self.hourlyColumn(variable)
        guard let kept = Variables.hourlyVariable(named: variable) else { return }
        let statement = try db.cachedStatement(
            """
            SELECT r.model, r.issued_at, h.valid_time, h.\(column)
            FROM forecast_runs r
            CROSS JOIN hourly_forecasts h ON h.run_id = r.id
            WHERE r.location_id = ? AND r.model = ?
              AND h.valid_time >= ? AND h.valid_time < ?
              AND h.valid_time - r.issued_at >= ?5 AND (h.valid_time - r.issued_at < ?6 OR h.valid_time - r.issued_at = ?5)
              AND h.\(column) BETWEEN ?7 AND ?8
            ORDER BY h.valid_time, r.issued_at
            """)
        try statement.bind(
            [
                .integer(locationID), .text(model), .integer(from ?? Int64.min), .integer(to ?? Int64.max),
                .real(leadFromHours * 3600), .real(leadToHours * 3600)
            ] + Self.possible(kept))
        defer { statement.reset() }
        while let row = try statement.step() {
            try visit(
                ForecastValue(
                    model: row.string(0), issuedAt: row.int64(1), validTime: row.int64(2), value: row.double(3)))
        }
    }
}
