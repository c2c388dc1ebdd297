// Forecast/observation pairs on PostgreSQL, streamed to a visitor one row at a time (libpq's
// single-row mode) as typed rows whose text points into libpq's result: the SQLite engine's pairs
// (Sources/StoreSQLite/Pairs.swift, Pairing.swift, Persistence.swift, ForecastSeries.swift), same
// rows in the same order. The pair conditions are those of SQLite's `forecast_observation_pairs`
// view as of its migration 0013 (a lead of 0 or more; a model's own analysis and current
// conditions are no truth to score it against), written out here so that every join between
// growing tables is on location_id. Column names come from `Variables` only (`hourlyColumn`).
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    /// The bounds of `variable`'s `PhysicalRange`, for `BETWEEN $a::float8 AND $b::float8`.
    static func possible(_ variable: Variable) -> [PostgresValue] {
        let range =
            PhysicalRange.range(of: variable) ?? -Double.greatestFiniteMagnitude...Double.greatestFiniteMagnitude
        return [.real(range.lowerBound), .real(range.upperBound)]
    }

    /// The pairs' join: a location's runs, their hours, the observation at each hour.
    static let pairJoin = """
        FROM forecast_runs r
        JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id
        JOIN observations o ON o.location_id = h.location_id AND o.time = h.valid_time
        """
    /// The view's conditions on a pair.
    static let pairCondition = """
          AND h.valid_time - r.issued_at >= 0
          AND o.source IS DISTINCT FROM 'analysis:' || r.model AND o.source IS DISTINCT FROM 'current:' || r.model
        """

    /// Streams every pair of `forecast` with the observation of `observed` at its valid time, in the
    /// SQLite engine's order (model, issue time, run, valid time), so sums add up alike.
    public func forEachVerificationPair(
        forecast: Variable, observed: Variable, _ filter: PairFilter, _ visit: (VerificationPair) throws -> Void
    ) throws {
        let forecastColumn = try Self.hourlyColumn(forecast.name)
        let observedColumn = try Self.hourlyColumn(observed.name)
        let sql =
            "SELECT r.model, r.issued_at, h.valid_time, h.\(forecastColumn), o.\(observedColumn) " + Self.pairJoin
                + """

                    WHERE r.location_id = $1 AND o.source = $2 AND h.valid_time >= $3 AND h.valid_time < $4
                      AND ($5::text IS NULL OR r.model = $5::text)
                """ + "\n" + Self.pairCondition + """

                  AND h.\(forecastColumn) BETWEEN $6::float8 AND $7::float8
                  AND o.\(observedColumn) BETWEEN $8::float8 AND $9::float8
                ORDER BY r.model COLLATE "C", r.issued_at, r.id, h.valid_time
                """
        try db.stream(
            sql,
            [
                .integer(filter.locationID), .text(filter.source), .integer(filter.from ?? .min),
                .integer(filter.to ?? .max), filter.model.postgresValue
            ] + Self.possible(forecast) + Self.possible(observed)
        ) { row in
            try row.withUTF8(0) { model in
                try visit(
                    VerificationPair(
                        model: RowText(utf8: model), issuedAt: row.int64(1), validTime: row.int64(2),
                        forecast: row.double(3), observed: row.double(4)))
            }
        }
    }

    /// The pairs of one model whose lead is within `[minLead, maxLead]` seconds (and below
    /// `LeadRule.maxSeconds`), for each valid hour the one whose lead is closest to `targetLead`
    /// first (then the earlier run).
    public func trendPairs(
        _ variable: Variable, _ filter: PairFilter, model: String, minLead: Double, maxLead: Double,
        targetLead: Double
    ) throws -> [(valid: Int64, run: Int64, issued: Int64, forecast: Double, observed: Double)] {
        let column = try Self.hourlyColumn(variable.name)
        let sql =
            "SELECT h.valid_time, r.id, r.issued_at, h.\(column), o.\(column) " + Self.pairJoin
                + """

                    WHERE r.location_id = $1 AND o.source = $2 AND r.model = $3 AND h.valid_time >= $4 AND h.valid_time < $5
                     
                """ + "\n" + Self.pairCondition + """

                  AND h.valid_time - r.issued_at BETWEEN $6::float8 AND $7::float8 AND h.valid_time - r.issued_at < $8
                  AND h.\(column) BETWEEN $10::float8 AND $11::float8 AND o.\(column) BETWEEN $10::float8 AND $11::float8
                ORDER BY h.valid_time, abs((h.valid_time - r.issued_at) - $9::float8), r.issued_at, r.id
                """
        return try db.rows(
            sql,
            [
                .integer(filter.locationID), .text(filter.source), .text(model), .integer(filter.from ?? .min),
                .integer(filter.to ?? .max), .real(minLead), .real(maxLead), .integer(LeadRule.maxSeconds),
                .real(targetLead)
            ] + Self.possible(variable)
        ) {
            (valid: $0.int64(0), run: $0.int64(1), issued: $0.int64(2), forecast: $0.double(3), observed: $0.double(4))
        }
    }

    /// Streams the pairs of `variable` for an export (leads under `LeadRule`), oldest run first.
    public func forEachExportPair(_ variable: Variable, _ filter: PairFilter, _ visit: (ExportPair) throws -> Void)
        throws
    {
        let column = try Self.hourlyColumn(variable.name)
        let sql =
            "SELECT l.name, r.model, r.issued_at, h.valid_time, h.\(column), o.\(column) " + Self.pairJoin
                + """

                    JOIN locations l ON l.id = r.location_id
                    WHERE r.location_id = $1 AND o.source = $2
                """ + "\n" + Self.pairCondition + """

                  AND h.\(column) IS NOT NULL AND o.\(column) IS NOT NULL
                  AND ($3::bigint IS NULL OR h.valid_time >= $3::bigint) AND ($4::bigint IS NULL OR h.valid_time < $4::bigint)
                  AND ($5::text IS NULL OR r.model = $5::text) AND h.valid_time - r.issued_at < $6
                ORDER BY r.issued_at, r.id, h.valid_time
                """
        try db.stream(
            sql,
            [
                .integer(filter.locationID), .text(filter.source), filter.from.postgresValue,
                filter.to.postgresValue, filter.model.postgresValue, .integer(LeadRule.maxSeconds)
            ]
        ) { row in
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

    /// Streams the pairs of `variable` and one model (`filter.model`) with the location's
    /// coordinates (leads under `LeadRule`), as the `verif` format wants them.
    public func forEachVerifPair(_ variable: Variable, _ filter: PairFilter, _ visit: (VerifPair) throws -> Void) throws
    {
        let column = try Self.hourlyColumn(variable.name)
        let sql =
            """
            SELECT r.issued_at, h.valid_time, l.latitude, l.longitude, coalesce(l.elevation, r.grid_elevation),
                   o.\(column), h.\(column)
            """ + "\n" + Self.pairJoin
                + """

                    JOIN locations l ON l.id = r.location_id
                    WHERE r.location_id = $1 AND o.source = $2 AND r.model = $3
                """ + "\n" + Self.pairCondition + """

                  AND h.\(column) IS NOT NULL AND o.\(column) IS NOT NULL
                  AND ($4::bigint IS NULL OR h.valid_time >= $4::bigint) AND ($5::bigint IS NULL OR h.valid_time < $5::bigint)
                  AND h.valid_time - r.issued_at < $6
                ORDER BY r.issued_at, h.valid_time, r.id
                """
        try db.stream(
            sql,
            [
                .integer(filter.locationID), .text(filter.source), filter.model.postgresValue,
                filter.from.postgresValue, filter.to.postgresValue, .integer(LeadRule.maxSeconds)
            ]
        ) { row in
            try visit(
                VerifPair(
                    issuedAt: row.int64(0), validTime: row.int64(1), latitude: row.double(2), longitude: row.double(3),
                    altitude: row.optionalDouble(4), observed: row.double(5), forecast: row.double(6)))
        }
    }

    /// Whether `source` has at least one observation of `observed` that pairs with a stored
    /// forecast of `forecast` (lead in `leadSeconds`, valid in [`from`, `to`)), or, when runs were
    /// pruned, kept sums of `forecast`'s pairs at those leads and days.
    public func sourcePairs(
        locationID: Int64, source: String, forecast: Variable, observed: Variable,
        from: Int64?, to: Int64?, model: String?, leadSeconds: Range<Int64>
    ) throws -> Bool {
        let forecastColumn = try Self.hourlyColumn(forecast.name)
        let observedColumn = try Self.hourlyColumn(observed.name)
        let paired = try db.firstRow(
            """
            SELECT EXISTS (
                SELECT 1 FROM observations o
                JOIN forecast_runs r ON r.location_id = o.location_id
                     AND r.issued_at <= o.time - $7::bigint AND r.issued_at > o.time - $6::bigint
                JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id AND h.valid_time = o.time
                WHERE o.location_id = $1 AND o.source = $2 AND o.time >= $3 AND o.time < $4
                  AND ($5::text IS NULL OR r.model = $5::text)
                  AND o.\(observedColumn) IS NOT NULL AND h.\(forecastColumn) IS NOT NULL
                  AND o.source IS DISTINCT FROM 'analysis:' || r.model
                  AND o.source IS DISTINCT FROM 'current:' || r.model)
            """,
            [
                .integer(locationID), .text(source), .integer(from ?? .min), .integer(to ?? .max),
                model.postgresValue, .integer(leadSeconds.upperBound), .integer(leadSeconds.lowerBound)
            ]
        ) { $0.bool(0) }
        if paired == true { return true }
        // Only pruned runs' pairs are missing from the rows: the sums are asked only then.
        return try db.firstRow(
            """
            SELECT EXISTS (SELECT 1 FROM forecast_runs
                           WHERE location_id = $1 AND pruned_at IS NOT NULL AND ($4::text IS NULL OR model = $4::text))
               AND EXISTS (SELECT 1 FROM verification_summaries
                           WHERE location_id = $1 AND source = $2 AND variable = $3
                             AND ($4::text IS NULL OR model = $4::text)
                             AND lead_to_h * 3600 > $5::bigint AND lead_from_h * 3600 < $6::bigint
                             AND valid_to > $7::bigint AND valid_from < $8::bigint)
            """,
            [
                .integer(locationID), .text(source), .text(forecast.name), model.postgresValue,
                .integer(leadSeconds.lowerBound), .integer(leadSeconds.upperBound), .integer(from ?? .min),
                .integer(to ?? .max)
            ]
        ) { $0.bool(0) } ?? false
    }

    /// The persistence reference of every issue time of the location's runs (of `model`, when
    /// given): the latest observation of `observed` from `source` at or before the issue time and
    /// less than an hour before it. Issue times without one are absent.
    public func persistenceReferences(locationID: Int64, source: String, observed: Variable, model: String?) throws
        -> [Int64: Double]
    {
        let column = try Self.hourlyColumn(observed.name)
        var references: [Int64: Double] = [:]
        try db.stream(
            """
            SELECT r.issued_at,
                   (SELECT o.\(column) FROM observations o
                     WHERE o.location_id = $1 AND o.source = $2 AND o.time <= r.issued_at
                       AND o.time > r.issued_at - 3600 AND o.\(column) IS NOT NULL
                     ORDER BY o.time DESC LIMIT 1)
            FROM (SELECT DISTINCT issued_at FROM forecast_runs
                  WHERE location_id = $1 AND ($3::text IS NULL OR model = $3::text)) r
            """, [.integer(locationID), .text(source), model.postgresValue]
        ) { row in
            if let value = row.optionalDouble(1) { references[row.int64(0)] = value }
        }
        return references
    }

    /// Streams the non-null forecasts of `model` for one hourly variable whose lead in hours lies in
    /// `[leadFrom, leadTo)` (`leadFrom == leadTo` is that one lead) and whose valid time is in
    /// `[from, to)`, by valid time and issue time; values outside `PhysicalRange` are left out.
    public func forEachForecastSequence(
        locationID: Int64, model: String, variable: String, leadFromHours: Double, leadToHours: Double,
        from: Int64?, to: Int64?, _ visit: (ForecastValue) throws -> Void
    ) throws {
        let column = try Self.hourlyColumn(variable)
        guard let kept = Variables.hourlyVariable(named: variable) else { return }
        try db.stream(
            """
            SELECT r.model, r.issued_at, h.valid_time, h.\(column)
            FROM forecast_runs r
            JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id
            WHERE r.location_id = $1 AND r.model = $2 AND h.valid_time >= $3 AND h.valid_time < $4
              AND h.valid_time - r.issued_at >= $5::float8
              AND (h.valid_time - r.issued_at < $6::float8 OR h.valid_time - r.issued_at = $5::float8)
              AND h.\(column) BETWEEN $7::float8 AND $8::float8
            ORDER BY h.valid_time, r.issued_at, r.id
            """,
            [
                .integer(locationID), .text(model), .integer(from ?? Int64.min), .integer(to ?? Int64.max),
                .real(leadFromHours * 3600), .real(leadToHours * 3600)
            ] + Self.possible(kept)
        ) { row in
            try visit(
                ForecastValue(
                    model: row.string(0), issuedAt: row.int64(1), validTime: row.int64(2), value: row.double(3)))
        }
    }
}
