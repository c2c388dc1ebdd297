import FoundationEssentials
import WxCore
import WxStations
import WxStore

/// `wxdb observe import-isd`, `import-metar` and `import-meteostat`: official stations' files as the
/// observations (the reading and the hour rule live in WxStations; storing is the station-import path).
extension ObserveCommand.StationFiles {
    /// The formats, each with its command name and source prefix.
    enum Kind: String {
        case isd, metar, meteostat

        var command: String { "import-" + rawValue }
    }

    struct Options: CommandOptions {
        var database = DatabaseOption()
        var path = ""
        var location = LocationOption()
        var station: String?
        var source: String?
        var range = TimeRangeOptions()
        var timezone: String?
        var month: String?
        var includeModel = false

        static var arguments: [ArgumentSpec] {
            [ArgumentSpec(name: "file", help: "The station's file (plain or gzip).")]
        }

        static var table: [Opt<Options>] {
            LocationOption.options(\.location, help: "The saved location the station's observations are for.")
                + [
                    .string(
                        "station", "id",
                        "The station's id, when the file does not say it (or to pick one station from a file of many).",
                        \.station),
                    SourceOption.option(
                        \.source, help: "Store as this source instead of metar:ID, isd:ID or meteostat:ID.",
                        default: nil)
                ]
                + TimeRangeOptions.options(\.range, on: "hours valid") + DatabaseOption.options(\.database)
        }

        mutating func take(_ positionals: [String]) throws { path = positionals[0] }

        func validate() throws {
            try range.validate()
            if let source, source.isEmpty || SourceNames.isReserved(source) || source == SourceNames.era5 {
                throw UsageError("--source '\(source)' is a name wxdb gives its own observations; pick another name")
            }
            if let timezone, !ZoneTime.isKnown(timezone) {
                throw UsageError("--timezone '\(timezone)' is not a time zone name (e.g. UTC, America/Chicago)")
            }
            if let month, Self.month(month) == nil {
                throw UsageError("--month '\(month)' is not a month like 2024-01")
            }
        }

        static func month(_ text: String) -> (year: Int, month: Int)? {
            let parts = text.split(separator: "-")
            guard text.count == 7, parts.count == 2, let y = Int(parts[0]), let m = Int(parts[1]), (1...12).contains(m)
            else { return nil }
            return (y, m)
        }
    }

    static let hourRule = """
        Hour rule (the same for every station import): for valid hour H, the report within 15 minutes of H of the
        best kind (routine before special before high-frequency), the nearest, the earlier on a tie. Temperature,
        dew point, humidity, pressure and wind come from that report; precipitation only where its amount covers
        exactly the hour before H (a METAR amount since the last routine report counts only when H-1h had a routine
        report too). Trace precipitation is stored as 0 mm and counted. Every hour not stored is counted by reason.
        Importing again replaces the hours the file covers.
        """

    static var isd: Command {
        Command(
            name: "import-isd",
            abstract: "Import hourly observations from a NOAA ISD-Lite station-year or a GHCNh station file.",
            discussion: """
                ISD-Lite (USAF-WBAN-YEAR, plain or .gz): whitespace-separated integers, x10 scaling, -9999 missing,
                -1 trace. GHCNh (.psv, pipe-separated with a header): a value whose quality code marks it suspect or
                erroneous is left out and counted. Stored as source isd:USAF-WBAN or ghcnh:ID.
                """ + "\n" + hourRule,
            options: Options.self, run: { try run(.isd, $0, $1) })
    }

    static var metar: Command {
        var table = Options.table
        table.insert(
            TimezoneOption.option(
                \.timezone, help: "IEM CSV only: the tz the file was asked for (asos.py's tz); default UTC."),
            at: 3)
        table.insert(
            .string(
                "month", "YYYY-MM", "METAR text only: the month of reports that carry no date (DDHHMMZ only).", \.month),
            at: 3)
        return Command(
            name: "import-metar",
            abstract: "Import hourly observations from IEM's ASOS CSV (asos.py) or plain METAR text.",
            discussion: """
                IEM CSV in any of its unit choices (tmpf/tmpc, sknt/sped, p01i/p01m, ...), M, null or empty missing,
                T or 0.0001 trace. METAR text, one report a line: tenths from the T group, wind in knots with VRB and
                calm, gusts, SLP, the P group's precipitation. Stored as source metar:ID.
                """ + "\n" + hourRule,
            options: Options.self, table: table, run: { try run(.metar, $0, $1) })
    }

    static var meteostat: Command {
        var table = Options.table
        table.insert(
            .flag(
                "include-model", "Keep the values Meteostat filled from a model (left out by default).",
                \.includeModel), at: 3)
        return Command(
            name: "import-meteostat",
            abstract: "Import hourly observations from a Meteostat hourly CSV (new or legacy format).",
            discussion: """
                New dumps have a <column>_source partner for each value: values a model filled are left out unless
                --include-model, and counted. Wind speed and gusts are km/h already. Stored as source meteostat:ID.
                """ + "\n" + hourRule,
            options: Options.self, table: table, run: { try run(.meteostat, $0, $1) })
    }

    static func run(_ kind: Kind, _ args: Options, _ context: Context) throws {
        let path = args.path
        let tail = "Nothing was stored"
        var parsed: Parsed
        do {
            var data = try readInput(path, nothingDone: tail)
            if Gzip.isGzip(data) { data = try Gzip.decompress(data) }
            parsed = try parse(kind, data, args, context)
        } catch let error as StationFormatError {
            throw CLIError("\(path)\(error.line.map { " line \($0)" } ?? ""): \(error.message). \(tail)")
        }
        guard let station = args.station ?? parsed.base.station, !station.isEmpty else {
            throw CLIError("\(path) does not say which station it is from; give --station ID. \(tail)")
        }
        let store = try args.database.open(context)
        let location = try args.location.resolve(store)
        let range = try args.range.resolve(timezone: location.timezone, now: context.nowUnix)
        parsed.base.reportsRead = parsed.reports.count
        HourRule.match(parsed.reports, into: &parsed.base, from: range.from, to: range.to)
        let imported = parsed.base
        let source = args.source ?? "\(parsed.prefix):\(station)"
        var stationImport = StationImport(variables: imported.variables)
        stationImport.hours = imported.hours
        stationImport.firstHour = imported.firstHour
        stationImport.lastHour = imported.lastHour
        try store.replaceStationObservations(
            stationImport, locationID: location.id, source: source, recordedAt: context.nowUnix)
        if imported.firstHour == nil {
            // Nothing stored: `report` says so; where the station is does not matter then.
        } else if let place = imported.place ?? cataloguePlace(station, context) {
            warnIfFar(place, station: station, location: location, context: context)
        } else {
            context.note(
                "Note: \(path) does not say where station \(station) is, and NOAA's station list (cached by 'wxdb observe stations --near NAME') \(cachedCatalogue(context) == nil ? "has not been fetched" : "does not have it"): wxdb cannot check that it is near \(location.name)"
            )
        }
        try report(imported, path: path, location: location, source: source, context: context)
    }

    /// A file read, before the hour rule.
    struct Parsed {
        var base: OfficialImport
        var reports: [StationReport]
        var prefix: String
    }

    static func parse(_ kind: Kind, _ data: Data, _ args: Options, _ context: Context) throws -> Parsed {
        let fileName = args.path
        switch kind {
        case .isd:
            let head = String(decoding: data.prefix(512), as: UTF8.self)
            let lower = head.lowercased()
            if head.contains("|") && (lower.contains("station_id") || lower.hasPrefix("station|")) {
                var base = OfficialImport(format: "GHCNh", variables: [])
                let reports = try ISD.readGHCNh(data, into: &base)
                return Parsed(base: base, reports: reports, prefix: "ghcnh")
            }
            var base = OfficialImport(format: "ISD-Lite", variables: ISD.liteVariables)
            base.station = ISD.stationID(fileName: fileName)
            return Parsed(base: base, reports: try ISD.readLite(data), prefix: "isd")
        case .metar:
            if METAR.isIEMCSV(data) {
                var base = OfficialImport(format: "IEM ASOS CSV", variables: [])
                let reports = try METAR.readIEM(
                    data, timezone: args.timezone ?? "UTC", station: args.station, into: &base)
                return Parsed(base: base, reports: reports, prefix: "metar")
            }
            if args.timezone != nil {
                throw StationFormatError("--timezone is for IEM CSV; METAR text is in UTC (the Z of DDHHMMZ)")
            }
            var base = OfficialImport(format: "METAR text", variables: [])
            let reports = try METAR.readText(
                data, month: args.month.flatMap(Options.month), station: args.station, into: &base)
            return Parsed(base: base, reports: reports, prefix: "metar")
        case .meteostat:
            var base = OfficialImport(format: "Meteostat hourly", variables: [])
            base.station = Meteostat.stationID(fileName: fileName)
            let reports = try Meteostat.read(
                data, includeModel: args.includeModel, now: context.nowUnix, into: &base)
            return Parsed(base: base, reports: reports, prefix: "meteostat")
        }
    }

    /// The station list as `observe stations` or `observe fetch` cached it, however old (an import
    /// never goes to the network: an old list still knows where a station is).
    static func cachedCatalogue(_ context: Context) -> [CatalogueStation]? {
        let file = ObserveCommand.StationFetch.cacheFolder(context).appendingPathComponent("isd-history.csv")
        guard let data = FileManager.default.contents(atPath: file.path) else { return nil }
        return try? StationCatalogue.parse(data)
    }

    /// Where the cached station list puts `station`: by ISD id or ICAO code, or a Meteostat/WMO
    /// number as the USAF id it is the first five digits of (10147 → 101470-…).
    static func cataloguePlace(_ station: String, _ context: Context) -> StationPlace? {
        guard let list = cachedCatalogue(context) else { return nil }
        var found = StationCatalogue.find(station, in: list)
        if found == nil, station.count == 5, station.allSatisfy(\.isNumber) {
            found = list.last { $0.id.hasPrefix(station + "0-") }
        }
        return found.map {
            StationPlace(latitude: $0.latitude, longitude: $0.longitude, elevation: $0.elevation, name: $0.name)
        }
    }

    /// A station farther than this from the location, or this much higher or lower, may not
    /// represent it; it is accepted with a warning.
    static let farKilometres = 25.0
    static let farMetres = 300.0

    static func warnIfFar(_ place: StationPlace, station: String, location: Location, context: Context) {
        let km = GridDistance.kilometres(
            latitude: location.latitude, longitude: location.longitude, latitude: place.latitude,
            longitude: place.longitude)
        var height: Double? = nil
        if let a = place.elevation, let b = location.elevation { height = abs(a - b) }
        guard km > farKilometres || (height ?? 0) > farMetres else { return }
        func coordinate(_ lat: Double, _ lon: Double, _ elevation: Double?) -> String {
            String(printf: "%.4f, %.4f", lat, lon) + (elevation.map { String(printf: ", %.0f m", $0) } ?? "")
        }
        let why =
            km > farKilometres
            ? String(printf: "%.0f km away", km) : String(printf: "%.0f m higher or lower", height ?? 0)
        context.err(
            "Warning: station \(station) (\(coordinate(place.latitude, place.longitude, place.elevation))) is \(why) from \(location.name) (\(coordinate(location.latitude, location.longitude, location.elevation))); stored anyway, but its weather may not be \(location.name)'s"
        )
    }

    /// Says what was read, what the hour rule chose, and per variable the hours stored and the
    /// hours missing by reason.
    static func report(
        _ result: OfficialImport, path: String, location: Location, source: String, context: Context
    ) throws {
        let notes = result.notes.isEmpty ? "" : "; " + result.notes.joined(separator: "; ")
        context.note("Read \(result.reportsRead) reports (\(result.format)) from \(path)\(notes)")
        if result.modelFilledValues > 0 || result.modelFilledRows > 0 {
            context.note(
                "Left out \(result.modelFilledRows) rows and \(result.modelFilledValues) values Meteostat filled from a model (--include-model keeps them)"
            )
        }
        if result.erroneousValues > 0 {
            context.note("Left out \(result.erroneousValues) values whose quality code marks them erroneous or suspect")
        }
        guard let first = result.firstHour, let last = result.lastHour else {
            throw nothingToImport(path: path, read: "\(result.reportsRead) reports", location: location)
        }
        context.note(
            "Stored \(result.hours.count) of \(result.hoursConsidered) hours for \(location.name) (source \(source)), valid \(CivilTime.isoUTC(first)) to \(CivilTime.isoUTC(last))"
        )
        context.note(
            "  reports used \(result.reportsUsed); outranked by a better one for the hour \(result.reportsOutranked); more than 15 minutes from any hour \(result.reportsOffHour)"
                + (result.traceHours > 0 ? "; trace precipitation (stored as 0 mm) in \(result.traceHours) hours" : "")
        )
        noteHoursByVariable(result.variables, stored: result.stored, missing: result.missing, context)
    }
}

extension OfficialMissingReason: MissingHourReason {}
