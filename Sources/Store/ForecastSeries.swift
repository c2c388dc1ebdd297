import WxCore
import WxSQLite

/// One model run's forecast for one hour beside the observation at that hour.
public struct ForecastPair: Sendable, Equatable {
    public var model: String
    public var issuedAt: Int64
    public var validTime: Int64
    public var forecast: Double
    public var observed: Double
}

/// One model run's forecast for one hour.
public struct ForecastValue: Sendable, Equatable {
    public var model: String
    public var issuedAt: Int64
    public var validTime: Int64
    public var value: Double
}

extension Store {
    /// Streams the forecast/observation pairs of `model` for one hourly variable at a location, in
    /// valid-time order: every run's non-null forecast beside the non-null observation from
    /// `source` at exactly its valid hour, with `from <= valid_time < to` and a lead of 0 or more.
    /// `observedVariable` is the variable observed against (`precipitation` for a probability).
    public func forEachForecastPair(
        locationID: Int64, model: String, variable: String, observedVariable: String, source: String,
        from: Int64?, to: Int64?, _ visit: (ForecastPair) throws -> Void
    ) throws {
        let forecastColumn = try Self.hourlyColumn(variable)
        let observedColumn = try Self.hourlyColumn(observedVariable)
        // Column names come from the fixed list of hourly variables only (checked above).
        let statement = try db.cachedStatement(
            """
            SELECT p.model, p.issued_at, p.valid_time, p.forecast_\(forecastColumn), p.observed_\(observedColumn)
            FROM forecast_observation_pairs p
            WHERE p.location_id = ? AND p.source = ? AND p.valid_time >= ? AND p.valid_time < ? AND p.model = ?
              AND p.forecast_\(forecastColumn) IS NOT NULL AND p.observed_\(observedColumn) IS NOT NULL
            ORDER BY p.valid_time, p.issued_at
            """)
        try statement.bind(
            [.integer(locationID), .text(source), .integer(from ?? Int64.min), .integer(to ?? Int64.max), .text(model)])
        while let row = try statement.step() {
            try visit(
                ForecastPair(
                    model: row.string(0), issuedAt: row.int64(1), validTime: row.int64(2),
                    forecast: row.double(3), observed: row.double(4)))
        }
    }

    /// Streams the non-null forecasts of `model` for one hourly variable whose lead in hours lies in
    /// `[leadFrom, leadTo]` and whose valid time is in `[from, to)`, ordered by valid time and issue
    /// time: for each target hour, what successive runs said about it.
    public func forEachForecastSequence(
        locationID: Int64, model: String, variable: String, leadFromHours: Double, leadToHours: Double,
        from: Int64?, to: Int64?, _ visit: (ForecastValue) throws -> Void
    ) throws {
        let column = try Self.hourlyColumn(variable)
        let statement = try db.cachedStatement(
            """
            SELECT r.model, r.issued_at, h.valid_time, h.\(column)
            FROM forecast_runs r
            CROSS JOIN hourly_forecasts h ON h.run_id = r.id
            WHERE r.location_id = ? AND r.model = ?
              AND h.valid_time >= ? AND h.valid_time < ?
              AND h.valid_time - r.issued_at >= ? AND h.valid_time - r.issued_at <= ?
              AND h.\(column) IS NOT NULL
            ORDER BY h.valid_time, r.issued_at
            """)
        try statement.bind(
            [
                .integer(locationID), .text(model), .integer(from ?? Int64.min), .integer(to ?? Int64.max),
                .real(leadFromHours * 3600), .real(leadToHours * 3600)
            ])
        while let row = try statement.step() {
            try visit(
                ForecastValue(
                    model: row.string(0), issuedAt: row.int64(1), validTime: row.int64(2), value: row.double(3)))
        }
    }
}
