import WxCore
import WxSQLite

/// Which rows an export reads: one location or all, a half-open time range (runs' `issued_at` for
/// forecasts, `time` for observations), one model or all, one observation source or all.
public struct ExportFilter: Sendable {
    public var locationID: Int64?
    public var from: Int64?
    public var to: Int64?
    public var model: String?
    public var source: String?

    public init(
        locationID: Int64? = nil, from: Int64? = nil, to: Int64? = nil, model: String? = nil, source: String? = nil
    ) {
        self.locationID = locationID
        self.from = from
        self.to = to
        self.model = model
        self.source = source
    }

    /// SQL conditions and their arguments; the column names are fixed strings.
    func whereClause(location: String, time: String, model: String?, source: String?) -> (String, [SQLValue]) {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let id = locationID {
            conditions.append("\(location) = ?")
            arguments.append(.integer(id))
        }
        if let from {
            conditions.append("\(time) >= ?")
            arguments.append(.integer(from))
        }
        if let to {
            conditions.append("\(time) < ?")
            arguments.append(.integer(to))
        }
        if let model, let wanted = self.model {
            conditions.append("\(model) = ?")
            arguments.append(.text(wanted))
        }
        if let source, let wanted = self.source {
            conditions.append("\(source) = ?")
            arguments.append(.text(wanted))
        }
        return (conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "), arguments)
    }
}

extension SQLiteStore {
    /// Streams hourly forecast rows, by location, run issue time and valid time. Columns:
    /// 0 location name, 1 model, 2 issued_at, 3 fetched_at, 4 valid_time, then `variables` (5...).
    public func forEachHourlyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (StoredRow) throws -> Void
    ) throws {
        let columns = try variables.map { "h." + (try Self.hourlyColumn($0.name)) }
        let (whereClause, arguments) = filter.whereClause(
            location: "r.location_id", time: "r.issued_at", model: "r.model", source: nil)
        // Ordered along the (location_id, issued_at) index and the (run_id, valid_time) key: no sort.
        let sql = """
            SELECT l.name, r.model, r.issued_at, r.fetched_at, h.valid_time, \(columns.joined(separator: ", "))
            FROM forecast_runs r INDEXED BY forecast_runs_by_location_issued
            JOIN hourly_forecasts h ON h.run_id = r.id
            JOIN locations l ON l.id = r.location_id
            \(whereClause)
            ORDER BY r.location_id, r.issued_at, r.id, h.valid_time
            """
        try stream(sql, arguments, visit)
    }

    /// Streams daily forecast rows, by location, run issue time and date. Columns: 0 location name,
    /// 1 model, 2 issued_at, 3 fetched_at, 4 date, then `variables` (5...; instants as unixtime).
    public func forEachDailyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (StoredRow) throws -> Void
    ) throws {
        let columns = try variables.map { variable in
            guard let name = Variables.dailyNames.first(where: { $0 == variable.name }) else {
                throw StoreError.unknownColumn(variable.name)
            }
            return "d." + name
        }
        let (whereClause, arguments) = filter.whereClause(
            location: "r.location_id", time: "r.issued_at", model: "r.model", source: nil)
        let sql = """
            SELECT l.name, r.model, r.issued_at, r.fetched_at, d.date, \(columns.joined(separator: ", "))
            FROM forecast_runs r INDEXED BY forecast_runs_by_location_issued
            JOIN daily_forecasts d ON d.run_id = r.id
            JOIN locations l ON l.id = r.location_id
            \(whereClause)
            ORDER BY r.location_id, r.issued_at, r.id, d.date
            """
        try stream(sql, arguments, visit)
    }

    /// Streams observation rows, by location, time and source. Columns: 0 location name, 1 source,
    /// 2 time, then `variables` (3...).
    public func forEachObservation(_ variables: [Variable], _ filter: ExportFilter, _ visit: (StoredRow) throws -> Void)
        throws
    {
        let columns = try variables.map { "o." + (try Self.hourlyColumn($0.name)) }
        let (whereClause, arguments) = filter.whereClause(
            location: "o.location_id", time: "o.time", model: nil, source: "o.source")
        let sql = """
            SELECT l.name, o.source, o.time, \(columns.joined(separator: ", "))
            FROM observations o
            JOIN locations l ON l.id = o.location_id
            \(whereClause)
            ORDER BY o.location_id, o.time, o.source
            """
        try stream(sql, arguments, visit)
    }

    /// Runs a query that is made once (not cached) and hands each row to `visit`.
    func stream(_ sql: String, _ arguments: [SQLValue], _ visit: (StoredRow) throws -> Void) throws {
        let statement = try db.makeStatement(sql)
        try statement.bind(arguments)
        while let row = try statement.step() { try visit(StoredRow(row)) }
    }
}
