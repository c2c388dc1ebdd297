import WxCore
import WxSQLite
import WxStore

// Forecast/observation pairs, read through the `forecast_observation_pairs` view and streamed to a
// visitor one row at a time. Column names come from `Variables` only (see `hourlyColumn`).

extension SQLiteStore {
    /// The bounds of `variable`'s `PhysicalRange` as two bound values, for `BETWEEN ? AND ?`: a value
    /// stored before the doors refused it is not scored.
    static func possible(_ variable: Variable) -> [SQLValue] {
        let range =
            PhysicalRange.range(of: variable) ?? -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
        return [.real(range.lowerBound), .real(range.upperBound)]
    }

    /// Streams every pair of `forecast` with the observation of `observed` at its valid time (they
    /// differ for a probability scored against another variable's event). The persistence reference
    /// of each issue time is `persistenceReferences`.
    public func forEachVerificationPair(
        forecast: Variable, observed: Variable, _ filter: PairFilter,
        _ visit: (VerificationPair) throws -> Void
    ) throws {
        let forecastColumn = try Self.hourlyColumn(forecast.name)
        let observedColumn = try Self.hourlyColumn(observed.name)
        let sql = """
            SELECT p.model, p.issued_at, p.valid_time, p.forecast_\(forecastColumn), p.observed_\(observedColumn)
            FROM forecast_observation_pairs p
            WHERE p.location_id = ? AND p.source = ? AND p.valid_time >= ? AND p.valid_time < ?
              AND (? IS NULL OR p.model = ?)
              AND p.forecast_\(forecastColumn) BETWEEN ?7 AND ?8 AND p.observed_\(observedColumn) BETWEEN ?9 AND ?10
            """
        let statement = try db.cachedStatement(sql)
        try statement.bind(
            [
                .integer(filter.locationID), .text(filter.source), .integer(filter.from ?? .min),
                .integer(filter.to ?? .max),
                filter.model.sqlValue, filter.model.sqlValue
            ] + Self.possible(forecast) + Self.possible(observed))
        defer { statement.reset() }
        while let row = try statement.step() {
            try row.withUTF8(0) { model in
                try visit(
                    VerificationPair(
                        model: RowText(utf8: model), issuedAt: row.int64(1), validTime: row.int64(2),
                        forecast: row.double(3), observed: row.double(4)))
            }
        }
    }

    /// The pairs of one model whose lead is within `[minLead, maxLead]` seconds (and below
    /// `LeadRule.maxSeconds`), for each valid hour
    /// the one whose lead is closest to `targetLead` first (then the earlier run).
    public func trendPairs(
        _ variable: Variable, _ filter: PairFilter, model: String, minLead: Double, maxLead: Double,
        targetLead: Double
    ) throws
        -> [(valid: Int64, run: Int64, issued: Int64, forecast: Double, observed: Double)]
    {
        let column = try Self.hourlyColumn(variable.name)
        return try db.rows(
            """
            SELECT p.valid_time, p.run_id, p.issued_at, p.forecast_\(column), p.observed_\(column)
            FROM forecast_observation_pairs p
            WHERE p.location_id = ? AND p.source = ? AND p.model = ? AND p.valid_time >= ? AND p.valid_time < ?
              AND p.valid_time - p.issued_at BETWEEN ? AND ? AND p.valid_time - p.issued_at < ?
              AND p.forecast_\(column) BETWEEN ?10 AND ?11 AND p.observed_\(column) BETWEEN ?10 AND ?11
            ORDER BY p.valid_time, abs((p.valid_time - p.issued_at) - ?9), p.issued_at, p.run_id
            """,
            [
                .integer(filter.locationID), .text(filter.source), .text(model), .integer(filter.from ?? .min),
                .integer(filter.to ?? .max),
                .real(minLead), .real(maxLead), .integer(LeadRule.maxSeconds), .real(targetLead)
            ] + Self.possible(variable)
        ) {
            (valid: $0.int64(0), run: $0.int64(1), issued: $0.int64(2), forecast: $0.double(3), observed: $0.double(4))
        }
    }

    /// Streams every pair of one run, every source. Columns: 0 location_id, 1 model, 2 source,
    /// 3 issued_at, 4 valid_time, then for each entry of `columns` its forecast and its observation
    /// (5 + 2i and 6 + 2i; either may be NULL).
    public func forEachPair(
        ofRun runID: Int64, columns: [(forecast: Variable, observed: Variable)],
        _ visit: (StoredRow) throws -> Void
    ) throws {
        let list = try columns.map {
            "forecast_\(try Self.hourlyColumn($0.forecast.name)), observed_\(try Self.hourlyColumn($0.observed.name))"
        }
        let statement = try db.cachedStatement(
            "SELECT location_id, model, source, issued_at, valid_time, " + list.joined(separator: ", ")
                + " FROM forecast_observation_pairs WHERE run_id = ?")
        try statement.bind([.integer(runID)])
        defer { statement.reset() }
        while let row = try statement.step() { try visit(StoredRow(row)) }
    }

    /// Streams the pairs of `variable` for an export (leads under `LeadRule`), oldest run first.
    public func forEachExportPair(_ variable: Variable, _ filter: PairFilter, _ visit: (ExportPair) throws -> Void)
        throws
    {
        let column = try Self.hourlyColumn(variable.name)
        // The view fixes the join order (run -> its hours -> the observation at each hour).
        let sql = """
            SELECT location, model, issued_at, valid_time, forecast_\(column), observed_\(column)
            FROM forecast_observation_pairs
            WHERE location_id = ?1 AND source = ?2 AND forecast_\(column) IS NOT NULL AND observed_\(column) IS NOT NULL
              AND (?3 IS NULL OR valid_time >= ?3) AND (?4 IS NULL OR valid_time < ?4) AND (?5 IS NULL OR model = ?5)
              AND valid_time - issued_at < ?6
            ORDER BY issued_at, run_id, valid_time
            """
        let statement = try db.cachedStatement(sql)
        try statement.bind([
            .integer(filter.locationID), .text(filter.source), filter.from.sqlValue, filter.to.sqlValue,
            filter.model.sqlValue, .integer(LeadRule.maxSeconds)
        ])
        defer { statement.reset() }
        while let row = try statement.step() {
            try row.withUTF8(0) { location in
                try row.withUTF8(1) { model in
                    try visit(
                        ExportPair(
                            location: RowText(utf8: location), model: RowText(utf8: model), issuedAt: row.int64(2),
                            validTime: row.int64(3), forecast: row.double(4), observed: row.double(5)))
                }
            }
        }
    }

    /// Streams the pairs of `variable` and one model (`filter.model`, required) with the location's
    /// coordinates (leads under `LeadRule`), as the `verif` format wants them.
    public func forEachVerifPair(_ variable: Variable, _ filter: PairFilter, _ visit: (VerifPair) throws -> Void) throws
    {
        let column = try Self.hourlyColumn(variable.name)
        let sql = """
            SELECT p.issued_at, p.valid_time, l.latitude, l.longitude, coalesce(l.elevation, r.grid_elevation),
                   p.observed_\(column), p.forecast_\(column)
            FROM forecast_observation_pairs p
            JOIN locations l ON l.id = p.location_id
            JOIN forecast_runs r ON r.id = p.run_id
            WHERE p.location_id = ? AND p.source = ? AND p.model = ?
              AND p.forecast_\(column) IS NOT NULL AND p.observed_\(column) IS NOT NULL
              AND (?4 IS NULL OR p.valid_time >= ?4) AND (?5 IS NULL OR p.valid_time < ?5) AND p.valid_time - p.issued_at < ?6
            ORDER BY p.issued_at, p.valid_time
            """
        let statement = try db.makeStatement(sql)
        try statement.bind([
            .integer(filter.locationID), .text(filter.source), filter.model.sqlValue,
            filter.from.sqlValue, filter.to.sqlValue, .integer(LeadRule.maxSeconds)
        ])
        while let row = try statement.step() {
            try visit(
                VerifPair(
                    issuedAt: row.int64(0), validTime: row.int64(1), latitude: row.double(2), longitude: row.double(3),
                    altitude: row.optionalDouble(4), observed: row.double(5), forecast: row.double(6)))
        }
    }
}
