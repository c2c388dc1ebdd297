import WxCore
import WxStore

/// What `wxdb export` writes, and how it is narrowed.
public struct ExportRequest: Sendable {
    public enum Kind: String, Sendable, CaseIterable { case hourly, daily, observations, pairs, members }
    public enum Format: String, Sendable { case csv, verif }

    public var kind: Kind
    public var format: Format = .csv
    /// Only this location (all when nil).
    public var locationID: Int64?
    /// Half-open time range: runs' `issued_at` for hourly/daily/members, `time` for observations,
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
            return
                "--format verif needs --location (a verif file holds one location and one model)"
        case .noObservations(let location):
            return
                "no observations stored for \(location), so there are no pairs; run 'wxdb observe backfill' or 'wxdb observe import' first"
        }
    }
}

/// Streams exports from SQLite straight into a CSV writer: one row in memory at a time.
public struct Exporter {
    public let store: any Store
    public init(store: any Store) { self.store = store }

    /// Checks variable names against those wxdb keeps; returns them in the canonical spelling.
    public static func validate(_ names: [String], daily: Bool = false) throws -> [String] {
        let allowed = daily ? Variables.dailyNames : Variables.hourlyNames
        return try names.map { name in
            let variable =
                daily
                ? Variables.daily.first { $0.name == name || $0.aliases.contains(name) }
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
        case .members: return try writeMembers(request, csv)
        }
    }

    /// Checks ensemble variable names (the continuous hourly ones members are kept for); canonical spelling.
    public static func validateMembers(_ names: [String]) throws -> [Variable] {
        let allowed = EnsembleModels.variables.map(\.name)
        return try names.map { name in
            guard let variable = Variables.hourlyVariable(named: name), allowed.contains(variable.name) else {
                throw ExportError.unknownVariable(name, allowed: allowed)
            }
            return variable
        }
    }

    /// The rows a request narrows the export to.
    func filter(_ request: ExportRequest, source: String? = nil) -> ExportFilter {
        ExportFilter(
            locationID: request.locationID, from: request.from, to: request.to, model: request.model, source: source)
    }

    func writeHourly(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables = request.variables.isEmpty ? Variables.hourlyNames : try Self.validate(request.variables)
        csv.header(["location", "model", "issued_at", "fetched_at", "valid_time", "lead_hours"] + variables)
        var rows = 0
        try store.forEachHourlyForecast(variables.compactMap(Variables.hourlyVariable(named:)), filter(request)) {
            row in
            csv.text(utf8: row.location.utf8)
            csv.text(utf8: row.model.utf8)
            csv.isoUTC(row.issuedAt)
            csv.isoUTC(row.fetchedAt)
            csv.isoUTC(row.validTime)
            csv.number(Double(row.validTime - row.issuedAt) / 3600)
            for value in row.values { csv.number(value) }
            csv.endRow()
            rows += 1
        }
        try csv.flush()
        return rows
    }

    func writeDaily(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables =
            request.variables.isEmpty ? Variables.dailyNames : try Self.validate(request.variables, daily: true)
        csv.header(["location", "model", "issued_at", "fetched_at", "date"] + variables)
        let daily = variables.compactMap { name in Variables.daily.first { $0.name == name } }
        let instants = daily.map { $0.quantity == .instant }
        var rows = 0
        try store.forEachDailyForecast(daily, filter(request)) { row in
            csv.text(utf8: row.location.utf8)
            csv.text(utf8: row.model.utf8)
            csv.isoUTC(row.issuedAt)
            csv.isoUTC(row.fetchedAt)
            csv.text(utf8: row.date.utf8)
            for (index, value) in row.values.enumerated() {
                if instants[index], let instant = value {
                    csv.isoUTC(Int64(instant))
                } else {
                    csv.number(value)
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
        csv.header(["location", "source", "time"] + variables)
        var rows = 0
        try store.forEachObservation(
            variables.compactMap(Variables.hourlyVariable(named:)), filter(request, source: request.source)
        ) { row in
            csv.text(utf8: row.location.utf8)
            csv.text(utf8: row.source.utf8)
            csv.isoUTC(row.time)
            for value in row.values { csv.number(value) }
            csv.endRow()
            rows += 1
        }
        try csv.flush()
        return rows
    }

    /// The locations a pairs export covers, each with the source its pairs of `variable` use:
    /// `--source`, else the best-ranked source that pairs with the requested forecasts (as
    /// `query verify` chooses). Locations without observations are left out (refused when asked for by name).
    public func pairSources(_ request: ExportRequest, variable: String) throws -> [(
        id: Int64, name: String, source: String
    )] {
        guard let wanted = Variables.hourlyVariable(named: variable) else {
            throw ExportError.unknownVariable(variable, allowed: Variables.hourlyNames)
        }
        var result: [(Int64, String, String)] = []
        for location in try store.locations() where request.locationID == nil || location.id == request.locationID {
            if let requested = request.source {
                result.append((location.id, location.name, requested))
                continue
            }
            do {
                let source = try ObservationSources.resolve(
                    store, location: location, requested: nil,
                    pairing: .init(
                        variable: wanted, range: TimeRange(from: request.from, to: request.to), model: request.model))
                result.append((location.id, location.name, source))
            } catch QueryError.noObservations {
                if request.locationID != nil { throw ExportError.noObservations(location: location.name) }
            }
        }
        return result
    }

    func writePairs(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables = request.variables.isEmpty ? ["temperature_2m"] : try Self.validate(request.variables)
        csv.header([
            "location", "model", "issued_at", "valid_time", "lead_hours", "variable", "forecast", "observed", "source"
        ])
        var rows = 0
        let sources = try variables.map { try pairSources(request, variable: $0) }
        for index in sources.first?.indices ?? 0..<0 {
            for (name, chosen) in zip(variables, sources) {
                guard let variable = Variables.hourlyVariable(named: name) else { continue }
                let location = chosen[index]
                let filter = PairFilter(
                    locationID: location.id, source: location.source, from: request.from, to: request.to,
                    model: request.model)
                try store.forEachExportPair(variable, filter) { row in
                    csv.text(utf8: row.location.utf8)
                    csv.text(utf8: row.model.utf8)
                    csv.isoUTC(row.issuedAt)
                    csv.isoUTC(row.validTime)
                    csv.number(Double(row.validTime - row.issuedAt) / 3600)
                    csv.text(name)
                    csv.number(row.forecast)
                    csv.number(row.observed)
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
        let hourly = Variables.hourlyVariable(named: variable)
        let unit = hourly?.unit ?? ""
        let model = try request.model ?? store.location(id: locationID)?.defaultModel ?? "best_match"
        if EnsembleModels.isEnsemble(model), let hourly {
            return try writeVerifEnsemble(request, csv, store, model: model, variable: hourly)
        }
        // verif reads only `variable:`, `units:`, `x0:` and `x1:` comments (any other line is a warning
        // on its stdout), so the model is named in the variable line.
        csv.header(
            text:
                "# variable: \(variable) (\(model))\n# units: \(unit)\nunixtime leadtime location lat lon altitude obs fcst\n"
        )
        var rows = 0
        for location in try pairSources(request, variable: variable) where location.id == locationID {
            guard let hourly else { break }
            let filter = PairFilter(
                locationID: location.id, source: location.source, from: request.from, to: request.to, model: model)
            try store.forEachVerifPair(hourly, filter) { row in
                let lead = Double(row.validTime - row.issuedAt) / 3600
                let plain = JSON.numberText
                csv.raw(
                    "\(row.issuedAt) \(plain(lead)) \(location.id) \(plain(row.latitude)) \(plain(row.longitude)) \(plain(row.altitude ?? 0)) \(plain(row.observed)) \(plain(row.forecast))\n"
                )
                rows += 1
            }
        }
        try csv.flush()
        return rows
    }

    /// An ensemble in verif's text format: `fcst` is the ensemble mean of the present members and
    /// `e0…e<M-1>` the members (-999 where missing, verif's missing value), M the most members of any run.
    /// The rows are the hours `query verify --model` scores: at or after the issue time, in a lead
    /// bucket, with an observation and at least one member.
    func writeVerifEnsemble(
        _ request: ExportRequest, _ csv: CSVWriter, _ ensembles: any EnsembleStore, model: String, variable: Variable
    ) throws -> Int {
        guard let locationID = request.locationID, let location = try store.location(id: locationID) else {
            throw ExportError.verifNeedsOneLocation
        }
        let from = request.from ?? .min
        let to = request.to ?? .max
        let runs = try ensembles.ensembleRuns(locationID: locationID, model: model).filter { run in
            run.firstValidTime < to && run.firstValidTime + Int64(run.hourCount - 1) * 3600 >= from
        }
        let width = runs.map(\.memberCount).max() ?? 0
        let members = (0..<width).map { " e\($0)" }.joined()
        csv.header(
            text:
                "# variable: \(variable.name) (\(model))\n# units: \(variable.unit)\nunixtime leadtime location lat lon altitude obs fcst\(members)\n"
        )
        let plain = JSON.numberText
        let place =
            "\(location.id) \(plain(location.latitude)) \(plain(location.longitude)) \(plain(location.elevation ?? 0))"
        var rows = 0
        for source in try pairSources(request, variable: variable.name) where source.id == locationID {
            for run in runs {
                guard
                    let values = try ensembles.ensembleMembers(
                        locationID: run.locationID, runID: run.id, variable: variable.name),
                    !values.isEmpty
                else {
                    continue
                }
                let last = run.firstValidTime + Int64(values.count - 1) * 3600
                let observed = try ensembles.observations(
                    of: variable, locationID: locationID, source: source.source, from: max(from, run.firstValidTime),
                    to: min(to - 1, last))
                for (hour, row) in values.enumerated() {
                    let time = run.firstValidTime + Int64(hour) * 3600
                    let lead = Double(time - run.issuedAt) / 3600
                    // Hours before the issue time are the run's stitched past, not a forecast.
                    guard time >= run.issuedAt, time >= from, time < to, let y = observed[time], y.isFinite,
                        LeadBuckets.bucket(forLeadHours: lead) != nil,
                        let mean = EnsembleScore.mean(members: row.map { Double($0) })
                    else { continue }
                    var line = "\(run.issuedAt) \(plain(lead)) \(place) \(plain(y)) \(plain(mean))"
                    for member in 0..<width {
                        // Float's shortest digits (18.3), as `export members` writes them.
                        line += member < row.count && row[member].isFinite ? " \(row[member])" : " -999"
                    }
                    csv.raw(line + "\n")
                    rows += 1
                }
            }
        }
        try csv.flush()
        return rows
    }

    /// Every stored member value in long form, one row per (run, variable, hour, member): runs by
    /// location, model and issue time; member 0 is the control. A missing member is an empty value.
    /// One run's blob of one variable is decoded at a time, so memory stays at one run's hours × members.
    func writeMembers(_ request: ExportRequest, _ csv: CSVWriter) throws -> Int {
        let variables =
            request.variables.isEmpty ? EnsembleModels.variables : try Self.validateMembers(request.variables)
        csv.header(["location", "model", "issued_at", "valid_time", "lead_hours", "variable", "member", "value"])
        let models = request.model.map { [$0] } ?? EnsembleModels.names
        var rows = 0
        for location in try store.locations() where request.locationID == nil || location.id == request.locationID {
            for model in models {
                for run in try store.ensembleRuns(locationID: location.id, model: model) {
                    if let from = request.from, run.issuedAt < from { continue }
                    if let to = request.to, run.issuedAt >= to { continue }
                    for variable in variables {
                        guard
                            let members = try store.ensembleMembers(
                                locationID: run.locationID, runID: run.id, variable: variable.name)
                        else { continue }
                        for (hour, values) in members.enumerated() {
                            let time = run.firstValidTime + Int64(hour) * 3600
                            for (member, value) in values.enumerated() {
                                csv.text(location.name)
                                csv.text(model)
                                csv.isoUTC(run.issuedAt)
                                csv.isoUTC(time)
                                csv.number(Double(time - run.issuedAt) / 3600)
                                csv.text(variable.name)
                                csv.integer(Int64(member))
                                // Float's shortest digits (18.3), not its binary expansion as a Double (18.299999237...).
                                csv.number(value.isFinite ? Double(value.description) : nil)
                                csv.endRow()
                                rows += 1
                            }
                        }
                    }
                }
            }
        }
        try csv.flush()
        return rows
    }
}
