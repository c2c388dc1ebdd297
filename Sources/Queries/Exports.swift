import WxCore
import WxSQLite
import WxStore

/// What `wxdb export` writes, and how it is narrowed.
public struct ExportRequest: Sendable {
    public enum Kind: String, Sendable, CaseIterable { case hourly, daily, observations, pairs }
    public enum Format: String, Sendable { case csv, verif }

    public var kind: Kind
    public var format: Format = .csv
    /// Only this location (all when nil).
    public var locationID: Int64?
    /// Half-open time range: runs' `issued_at` for hourly/daily, `time` for observations,
    /// `valid_time` for pairs.
    public var from: Int64?
    public var to: Int64?
    /// Variables (Open-Meteo names); for hourly/observations a subset of columns, for pairs the
    /// variables to pair. Empty means all (hourly/observations) or `temperature_2m` (pairs).
    public var variables: [String] = []
    public var model: String?
    /// Observation source; for pairs, nil means each location's best source.
    public var source: String?

    public init(kind: Kind) { self.kind = kind }
}

/// Export failures a user can act on.
public enum ExportError: Error, CustomStringConvertible, Equatable {
    case unknownVariable(String, allowed: [String])
    case verifNeedsOneVariable
    case verifNeedsOneLocation
    case noObservations(location: String)

    public var description: String {
        switch self {
        case .unknownVariable(let name, let allowed):
            return "unknown variable '\(name)'; wxdb keeps: \(allowed.joined(separator: ", "))"
        case .verifNeedsOneVariable:
            return "--format verif writes one variable per file; give a single --var"
        case .verifNeedsOneLocation:
            return "--format verif needs --location (verif files hold one model; the default model is the location's first)"
        case .noObservations(let location):
            return "no observations stored for \(location), so there are no pairs; run 'wxdb observe backfill' or 'wxdb observe import' first"
        }
    }
}

/// Streams exports from SQLite straight into a CSV writer: one row in memory at a time.
public struct Exporter {
    public let store: Store
    public init(store: Store) { self.store = store }

    /// Checks variable names against those wxdb keeps; returns them in the canonical spelling.
    public static func validate(_ names: [String], daily: Bool = false) throws -> [String] {
        let allowed = daily ? Variables.dailyNames : Variables.hourlyNames
        return try names.map { name in
            let variable = daily ? Variables.daily.first { $0.name == name || $0.aliases.contains(name) }
                                 : Variables.hourlyVariable(named: name)
            guard let variable else { throw ExportError.unknownVariable(name, allowed: allowed) }
            return variable.name
        }
    }

    /// Writes the export; returns the number of data rows written.
    @discardableResult
    public func write(_ request: ExportRequest, to csv: CSVWriter) throws -> Int {
        switch request.kind {
        case .hourly: return try writeHourly(request, csv)
        case .daily: return try writeDaily(request, csv)
        case .observations: return try writeObservations(request, csv)
        case .pairs: return request.format == .verif ? try writeVerif(request, csv) : try writePairs(request, csv)
        }
    }

    /// SQL conditions and their arguments shared by the exports; column names are fixed strings.
    func filters(_ request: ExportRequest, location: String, time: String, model: String?) -> (String, [SQLValue]) {
        var conditions: [String] = []
        var arguments: [SQLValue] = []
        if let id = request.locationID {
            conditions.append("\(location) = ?")
            arguments.append(.integer(id))
        }
        if let from = request.from {
            conditions.append("\(time) >= ?")
            arguments.append(.integer(from))
        }
        if let to = request.to {
            conditions.append("\(time) < ?")
            arguments.append(.integer(to))
        }
        if let model, let wanted = request.model {
            conditions.append("\(model) = ?")
            arguments.append(.text(wanted))
        }
        return (conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND "), arguments)
    }

    func writeHourly(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables = request.variables.isEmpty ? Variables.hourlyNames : try Self.validate(request.variables)
        let (whereClause, arguments) = filters(request, location: "r.location_id", time: "r.issued_at", model: "r.model")
        // Ordered along the (location_id, issued_at) index and the (run_id, valid_time) key: no sort.
        let sql = """
            SELECT l.name, r.model, r.issued_at, r.fetched_at, h.valid_time, \(variables.map { "h." + $0 }.joined(separator: ", "))
            FROM forecast_runs r INDEXED BY forecast_runs_by_location_issued
            JOIN hourly_forecasts h ON h.run_id = r.id
            JOIN locations l ON l.id = r.location_id
            \(whereClause)
            ORDER BY r.location_id, r.issued_at, r.id, h.valid_time
            """
        csv.header(["location", "model", "issued_at", "fetched_at", "valid_time", "lead_hours"] + variables)
        let statement = try store.db.makeStatement(sql)
        try statement.bind(arguments)
        var rows = 0
        while let row = try statement.step() {
            row.withUTF8(0) { csv.text(utf8: $0) }
            row.withUTF8(1) { csv.text(utf8: $0) }
            let issued = row.int64(2)
            let valid = row.int64(4)
            csv.isoUTC(issued)
            csv.isoUTC(row.int64(3))
            csv.isoUTC(valid)
            csv.number(Double(valid - issued) / 3600)
            for index in 0..<variables.count { csv.number(row.optionalDouble(5 + index)) }
            csv.endRow()
            rows += 1
        }
        try csv.flush()
        return rows
    }

    func writeDaily(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables = request.variables.isEmpty ? Variables.dailyNames : try Self.validate(request.variables, daily: true)
        let (whereClause, arguments) = filters(request, location: "r.location_id", time: "r.issued_at", model: "r.model")
        let sql = """
            SELECT l.name, r.model, r.issued_at, r.fetched_at, d.date, \(variables.map { "d." + $0 }.joined(separator: ", "))
            FROM forecast_runs r INDEXED BY forecast_runs_by_location_issued
            JOIN daily_forecasts d ON d.run_id = r.id
            JOIN locations l ON l.id = r.location_id
            \(whereClause)
            ORDER BY r.location_id, r.issued_at, r.id, d.date
            """
        csv.header(["location", "model", "issued_at", "fetched_at", "date"] + variables)
        let instants = variables.map { name in Variables.daily.first { $0.name == name }?.quantity == .instant }
        let statement = try store.db.makeStatement(sql)
        try statement.bind(arguments)
        var rows = 0
        while let row = try statement.step() {
            row.withUTF8(0) { csv.text(utf8: $0) }
            row.withUTF8(1) { csv.text(utf8: $0) }
            csv.isoUTC(row.int64(2))
            csv.isoUTC(row.int64(3))
            row.withUTF8(4) { csv.text(utf8: $0) }
            for index in 0..<variables.count {
                if instants[index], let instant = row.optionalInt64(5 + index) {
                    csv.isoUTC(instant)
                } else {
                    csv.number(row.optionalDouble(5 + index))
                }
            }
            csv.endRow()
            rows += 1
        }
        try csv.flush()
        return rows
    }

    func writeObservations(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables = request.variables.isEmpty ? Variables.hourlyNames : try Self.validate(request.variables)
        var (whereClause, arguments) = filters(request, location: "o.location_id", time: "o.time", model: nil)
        if let source = request.source {
            whereClause += (whereClause.isEmpty ? "WHERE " : " AND ") + "o.source = ?"
            arguments.append(.text(source))
        }
        let sql = """
            SELECT l.name, o.source, o.time, \(variables.map { "o." + $0 }.joined(separator: ", "))
            FROM observations o
            JOIN locations l ON l.id = o.location_id
            \(whereClause)
            ORDER BY o.location_id, o.time, o.source
            """
        csv.header(["location", "source", "time"] + variables)
        let statement = try store.db.makeStatement(sql)
        try statement.bind(arguments)
        var rows = 0
        while let row = try statement.step() {
            row.withUTF8(0) { csv.text(utf8: $0) }
            row.withUTF8(1) { csv.text(utf8: $0) }
            csv.isoUTC(row.int64(2))
            for index in 0..<variables.count { csv.number(row.optionalDouble(3 + index)) }
            csv.endRow()
            rows += 1
        }
        try csv.flush()
        return rows
    }

    /// The locations a pairs export covers, each with the source its pairs of `variable` use:
    /// `--source`, else the best-ranked source that pairs with the requested forecasts (as
    /// `query verify` chooses). Locations without observations are left out (refused when asked for by name).
    public func pairSources(_ request: ExportRequest, variable: String) throws -> [(id: Int64, name: String, source: String)] {
        guard let wanted = Variables.hourlyVariable(named: variable) else { throw ExportError.unknownVariable(variable, allowed: Variables.hourlyNames) }
        var result: [(Int64, String, String)] = []
        for location in try store.locations() where request.locationID == nil || location.id == request.locationID {
            if let requested = request.source {
                result.append((location.id, location.name, requested))
                continue
            }
            do {
                let source = try ObservationSources.resolve(
                    store, location: location, requested: nil,
                    pairing: .init(variable: wanted, range: TimeRange(from: request.from, to: request.to), model: request.model))
                result.append((location.id, location.name, source))
            } catch QueryError.noObservations {
                if request.locationID != nil { throw ExportError.noObservations(location: location.name) }
            }
        }
        return result
    }

    func writePairs(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables = request.variables.isEmpty ? ["temperature_2m"] : try Self.validate(request.variables)
        csv.header(["location", "model", "issued_at", "valid_time", "lead_hours", "variable", "forecast", "observed", "source"])
        var rows = 0
        let sources = try variables.map { try pairSources(request, variable: $0) }
        for index in sources.first?.indices ?? 0..<0 {
            for (variable, chosen) in zip(variables, sources) {
                let location = chosen[index]
                // The view fixes the join order (run -> its hours -> the observation at each hour).
                let sql = """
                    SELECT location, model, issued_at, valid_time, forecast_\(variable), observed_\(variable)
                    FROM forecast_observation_pairs
                    WHERE location_id = ?1 AND source = ?2 AND forecast_\(variable) IS NOT NULL AND observed_\(variable) IS NOT NULL
                      AND (?3 IS NULL OR valid_time >= ?3) AND (?4 IS NULL OR valid_time < ?4) AND (?5 IS NULL OR model = ?5)
                      AND valid_time - issued_at < ?6
                    ORDER BY issued_at, run_id, valid_time
                    """
                let statement = try store.db.cachedStatement(sql)
                try statement.bind([.integer(location.id), .text(location.source), request.from.map { .integer($0) } ?? .null,
                                    request.to.map { .integer($0) } ?? .null, request.model.map { .text($0) } ?? .null,
                                    .integer(Int64(LeadBuckets.maxLeadHours) * 3600)])
                while let row = try statement.step() {
                    row.withUTF8(0) { csv.text(utf8: $0) }
                    row.withUTF8(1) { csv.text(utf8: $0) }
                    let issued = row.int64(2)
                    let valid = row.int64(3)
                    csv.isoUTC(issued)
                    csv.isoUTC(valid)
                    csv.number(Double(valid - issued) / 3600)
                    csv.text(variable)
                    csv.number(row.double(4))
                    csv.number(row.double(5))
                    csv.text(location.source)
                    csv.endRow()
                    rows += 1
                }
            }
        }
        try csv.flush()
        return rows
    }

    /// The text format the `verif` tool reads: `# variable:`, `# units:`, then
    /// `unixtime leadtime location lat lon altitude obs fcst`, keyed on (issued_at, lead, location id).
    func writeVerif(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables = request.variables.isEmpty ? ["temperature_2m"] : try Self.validate(request.variables)
        guard variables.count == 1, let variable = variables.first else { throw ExportError.verifNeedsOneVariable }
        guard let locationID = request.locationID else { throw ExportError.verifNeedsOneLocation }
        let unit = Variables.hourlyVariable(named: variable)?.unit ?? ""
        csv.raw("# variable: \(variable)\n# units: \(unit)\nunixtime leadtime location lat lon altitude obs fcst\n")
        var rows = 0
        for location in try pairSources(request, variable: variable) where location.id == locationID {
            let sql = """
                SELECT p.issued_at, p.valid_time, l.latitude, l.longitude, coalesce(l.elevation, r.grid_elevation),
                       p.observed_\(variable), p.forecast_\(variable)
                FROM forecast_observation_pairs p
                JOIN locations l ON l.id = p.location_id
                JOIN forecast_runs r ON r.id = p.run_id
                WHERE p.location_id = ? AND p.source = ? AND p.model = ?
                  AND p.forecast_\(variable) IS NOT NULL AND p.observed_\(variable) IS NOT NULL
                  AND (?4 IS NULL OR p.valid_time >= ?4) AND (?5 IS NULL OR p.valid_time < ?5) AND p.valid_time - p.issued_at < ?6
                ORDER BY p.issued_at, p.valid_time
                """
            let model = try request.model ?? store.db.scalarText("SELECT models FROM locations WHERE id = ?", [.integer(locationID)])
                .map { String($0.split(separator: ",").first ?? "best_match") } ?? "best_match"
            let statement = try store.db.makeStatement(sql)
            try statement.bind([.integer(location.id), .text(location.source), .text(model),
                                request.from.map { .integer($0) } ?? .null, request.to.map { .integer($0) } ?? .null,
                                .integer(Int64(LeadBuckets.maxLeadHours) * 3600)])
            while let row = try statement.step() {
                let issued = row.int64(0)
                let lead = Double(row.int64(1) - issued) / 3600
                let plain = JSON.numberText
                csv.raw("\(issued) \(plain(lead)) \(location.id) \(plain(row.double(2))) \(plain(row.double(3))) \(plain(row.optionalDouble(4) ?? 0)) \(plain(row.double(5))) \(plain(row.double(6)))\n")
                rows += 1
            }
        }
        try csv.flush()
        return rows
    }
}
