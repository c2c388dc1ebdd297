// The export streams on PostgreSQL: the SQLite engine's rows in its order
// (Sources/StoreSQLite/ExportStreams.swift), read in libpq's single-row mode and handed on as
// typed rows whose text points into libpq's result and whose values buffer is reused: no String
// and no array made per row.
import WxCore
import WxPostgres
import WxStore

extension ExportFilter {
    /// SQL conditions with their `$n` parameters (numbered from 1); the column names are fixed strings.
    func postgresWhere(location: String, time: String, model: String?, source: String?) -> (String, [PostgresValue]) {
        var conditions: [String] = []
        var arguments: [PostgresValue] = []
        func add(_ column: String, _ value: PostgresValue) {
            arguments.append(value)
            conditions.append("\(column) = $\(arguments.count)")
        }
        if let id = locationID { add(location, .integer(id)) }
        if let from {
            arguments.append(.integer(from))
            conditions.append("\(time) >= $\(arguments.count)")
        }
        if let to {
            arguments.append(.integer(to))
            conditions.append("\(time) < $\(arguments.count)")
        }
        if let model, let wanted = self.model { add(model, .text(wanted)) }
        if let source, let wanted = self.source { add(source, .text(wanted)) }
        return (conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "), arguments)
    }
}

extension PostgresEngine {
    /// Streams hourly forecast rows, by location, run issue time and valid time.
    public func forEachHourlyForecast(
        _ variables: [Variable], _ filter: ExportFilter, _ visit: (HourlyForecastRow) throws -> Void
    ) throws {
        let columns = try variables.map { "h." + (try Self.hourlyColumn($0.name)) }
        let (whereClause, arguments) = filter.postgresWhere(
            location: "r.location_id", time: "r.issued_at", model: "r.model", source: nil)
        let sql = """
            SELECT l.name, r.model, r.issued_at, r.fetched_at, h.valid_time, \(columns.joined(separator: ", "))
            FROM forecast_runs r
            JOIN hourly_forecasts h ON h.location_id = r.location_id AND h.run_id = r.id
            JOIN locations l ON l.id = r.location_id
            \(whereClause)
            ORDER BY r.location_id, r.issued_at, r.id, h.valid_time
            """
        var values = [Double?](repeating: nil, count: variables.count)
        try db.stream(sql, arguments) { row in
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
        let (whereClause, arguments) = filter.postgresWhere(
            location: "r.location_id", time: "r.issued_at", model: "r.model", source: nil)
        let sql = """
            SELECT l.name, r.model, r.issued_at, r.fetched_at, d.date, \(columns.joined(separator: ", "))
            FROM forecast_runs r
            JOIN daily_forecasts d ON d.location_id = r.location_id AND d.run_id = r.id
            JOIN locations l ON l.id = r.location_id
            \(whereClause)
            ORDER BY r.location_id, r.issued_at, r.id, d.date COLLATE "C"
            """
        let instants = variables.map { $0.quantity == .instant }
        var values = [Double?](repeating: nil, count: variables.count)
        try db.stream(sql, arguments) { row in
            for index in values.indices {
                // An instant is a bigint unixtime, read as one (exact in a Double).
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
        let (whereClause, arguments) = filter.postgresWhere(
            location: "o.location_id", time: "o.time", model: nil, source: "o.source")
        let sql = """
            SELECT l.name, o.source, o.time, \(columns.joined(separator: ", "))
            FROM observations o
            JOIN locations l ON l.id = o.location_id
            \(whereClause)
            ORDER BY o.location_id, o.time, o.source COLLATE "C"
            """
        var values = [Double?](repeating: nil, count: variables.count)
        try db.stream(sql, arguments) { row in
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
}
