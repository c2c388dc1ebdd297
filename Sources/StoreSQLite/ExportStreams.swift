import WxCore
import WxSQLite
import WxStore

extension ExportFilter {
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
    /// Streams hourly forecast rows, by location, run issue time and valid time.
    public func forEachHourlyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (HourlyForecastRow) throws -> Void
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
        var values = [Double?](repeating: nil, count: variables.count)
        try stream(sql, arguments) { row in
            for index in values.indices { values[index] = row.optionalDouble(5 + index) }
            try row.withUTF8(0) { location in
                try row.withUTF8(1) { model in
                    try visit(
                        HourlyForecastRow(
                            location: RowText(utf8: location), model: RowText(utf8: model), issuedAt: row.int64(2),
                            fetchedAt: row.int64(3), validTime: row.int64(4), values: values))
                }
            }
        }
    }

    /// Streams daily forecast rows, by location, run issue time and date.
    public func forEachDailyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (DailyForecastRow) throws -> Void
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
        let instants = variables.map { $0.quantity == .instant }
        var values = [Double?](repeating: nil, count: variables.count)
        try stream(sql, arguments) { row in
            for index in values.indices {
                // An instant is an integer unixtime, read as one (exact in a Double).
                values[index] =
                    instants[index] ? row.optionalInt64(5 + index).map(Double.init) : row.optionalDouble(5 + index)
            }
            try row.withUTF8(0) { location in
                try row.withUTF8(1) { model in
                    try row.withUTF8(4) { date in
                        try visit(
                            DailyForecastRow(
                                location: RowText(utf8: location), model: RowText(utf8: model),
                                issuedAt: row.int64(2), fetchedAt: row.int64(3), date: RowText(utf8: date),
                                values: values))
                    }
                }
            }
        }
    }

    /// Streams observation rows, by location, time and source.
    public func forEachObservation(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (ObservationRow) throws -> Void
    ) throws {
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
        var values = [Double?](repeating: nil, count: variables.count)
        try stream(sql, arguments) { row in
            for index in values.indices { values[index] = row.optionalDouble(3 + index) }
            try row.withUTF8(0) { location in
                try row.withUTF8(1) { source in
                    try visit(
                        ObservationRow(
                            location: RowText(utf8: location), source: RowText(utf8: source), time: row.int64(2),
                            values: values))
                }
            }
        }
    }

    /// Runs a query that is made once (not cached) and hands each row to `visit`.
    func stream(_ sql: String, _ arguments: [SQLValue], _ visit: (Row) throws -> Void) throws {
        let statement = try db.makeStatement(sql)
        try statement.bind(arguments)
        while let row = try statement.step() { try visit(row) }
    }
}
