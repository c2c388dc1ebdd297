import FoundationEssentials
import WxCore
import WxStationFiles
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `wxdb observe import-weewx` and `import-home-assistant`: a station's own database as the
/// observations, read read-only (the reading and hourly rules live in WxStore's Stations).
extension ObserveCommand.StationDatabases {
    struct WeewxOptions: CommandOptions {
        var database = DatabaseOption()
        var path = ""
        var location = LocationOption()
        var source = ObservationSourceOption(default: "weewx")
        var range = TimeRangeOptions()

        static var arguments: [ArgumentSpec] { [ArgumentSpec(name: "path", help: "The weewx SQLite database.")] }

        static var table: [Opt<WeewxOptions>] {
            LocationOption.options(\.location, help: "The saved location the station is at.")
                + ObservationSourceOption.options(\.source, default: "weewx")
                + TimeRangeOptions.options(\.range, on: "hours valid") + DatabaseOption.options(\.database)
        }

        mutating func take(_ positionals: [String]) throws { path = positionals[0] }

        func validate() throws {
            try source.validate()
            try range.validate()
        }
    }

    static var weewx: Command {
        Command(
            name: "import-weewx",
            abstract: "Import hourly observations from a weewx archive database (weewx.sdb), read-only.",
            discussion: """
                For valid hour H: temperature, humidity, dew point, pressure, wind speed and direction from the archive
                record at H, else the latest in the 10 minutes before H; precipitation the sum of rain over the records
                in (H-1h, H] when their intervals add up to 60 minutes; gusts the largest windGust of those records.
                Each record's usUnits (US, METRIC, METRICWX) is converted to metric. The file is never written.
                Importing again replaces the hours it covers.
                """,
            options: WeewxOptions.self, run: runWeewx)
    }

    struct HomeAssistantOptions: CommandOptions {
        var database = DatabaseOption()
        var path = ""
        var location = LocationOption()
        var sensors: [HomeAssistantStatistics.Sensor] = []
        var source = ObservationSourceOption(default: "home-assistant")
        var range = TimeRangeOptions()
        var list = false
        var output = FormatOption()

        static var arguments: [ArgumentSpec] {
            [ArgumentSpec(name: "path", help: "Home Assistant's recorder database (home-assistant_v2.db).")]
        }

        static var table: [Opt<HomeAssistantOptions>] {
            // --location is needed to import, not to --list, so the parser does not require it.
            LocationOption.options(
                \.location, required: false, help: "The saved location the sensors are at (needed unless --list).")
                + [
                    Opt(
                        spec: OptionSpec(
                            name: "sensor", valueName: "variable=statistic_id",
                            help:
                                "e.g. temperature_2m=sensor.outdoor_temperature; one per variable (needed unless --list).",
                            repeatable: true)
                    ) { options, values in
                        options.sensors = try values.map(sensor)
                    }
                ]
                + ObservationSourceOption.options(\.source, default: "home-assistant")
                + TimeRangeOptions.options(\.range, on: "hours valid")
                + [.flag("list", "Print the statistic ids in the file with their units, and import nothing.", \.list)]
                + FormatOption.options(\.output, help: "How --list prints: table, csv or json.")
                + DatabaseOption.options(\.database)
        }

        mutating func take(_ positionals: [String]) throws { path = positionals[0] }

        func validate() throws {
            if list {
                return
            }
            if output.format != .table {
                throw UsageError("--format is for --list; an import prints what it stored on stderr")
            }
            if location.name == nil { throw UsageError("missing --location") }
            guard !sensors.isEmpty else {
                throw UsageError(
                    "give at least one --sensor VARIABLE=STATISTIC_ID (e.g. temperature_2m=sensor.outdoor_temperature); --list shows the ids"
                )
            }
            var seen = Set<Int>()
            for sensor in sensors where !seen.insert(sensor.variable).inserted {
                throw UsageError(
                    "--sensor gives \(Variables.hourly[sensor.variable].name) twice; give one statistic per variable")
            }
            try source.validate()
            try range.validate()
        }
    }

    static var homeAssistant: Command {
        Command(
            name: "import-home-assistant",
            abstract: "Import hourly observations from Home Assistant's long-term statistics, read-only.",
            discussion: """
                The hourly mean of the statistic row starting at H-1h is the value valid at H; for precipitation, the
                increase of the statistic's sum from the hour before. Units are converted to metric. --list prints the
                statistic ids in the file with their units. The file is never written.
                """,
            options: HomeAssistantOptions.self, run: runHomeAssistant)
    }

    static func runWeewx(_ args: WeewxOptions, _ context: Context) throws {
        let source = args.source.name
        let store = try args.database.open(context)
        let location = try args.location.resolve(store)
        let range = try args.range.resolve(timezone: location.timezone, now: context.nowUnix)
        let result = try WeewxArchive.read(path: args.path, from: range.from, to: range.to)
        try store.replaceStationObservations(
            result, locationID: location.id, source: source, recordedAt: context.nowUnix)
        try report(result, what: "weewx records", path: args.path, location: location, source: source, context: context)
    }

    static func runHomeAssistant(_ args: HomeAssistantOptions, _ context: Context) throws {
        if args.list {
            try list(args.path, args.output.format, context)
            return
        }
        let source = args.source.name
        let store = try args.database.open(context)
        let location = try args.location.resolve(store)
        let range = try args.range.resolve(timezone: location.timezone, now: context.nowUnix)
        let result = try HomeAssistantStatistics.read(
            path: args.path, sensors: args.sensors, from: range.from, to: range.to)
        try store.replaceStationObservations(
            result, locationID: location.id, source: source, recordedAt: context.nowUnix)
        try report(
            result, what: "statistics rows", path: args.path, location: location, source: source, context: context)
    }

    /// Variables a sensor can measure: not codes or instants, and not a forecast's probability.
    static var measured: [Variable] {
        Variables.hourly.filter { ![.code, .instant].contains($0.quantity) && !$0.isProbability }
    }

    static func sensor(_ text: String) throws -> HomeAssistantStatistics.Sensor {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[1].isEmpty else {
            throw UsageError(
                "--sensor '\(text)' is not VARIABLE=STATISTIC_ID (e.g. temperature_2m=sensor.outdoor_temperature)")
        }
        guard let index = Variables.hourlyIndex(of: parts[0]), measured.contains(Variables.hourly[index]) else {
            let names = measured.map(\.name)
            throw UsageError(
                "--sensor '\(text)': '\(parts[0])' is not a variable a sensor measures"
                    + Suggest.phrase(parts[0], among: names)
                    + "; use one of: \(names.joined(separator: ", "))")
        }
        return HomeAssistantStatistics.Sensor(variable: index, statisticID: parts[1])
    }

    static func list(_ path: String, _ format: OutputFormat, _ context: Context) throws {
        let listed = try HomeAssistantStatistics.list(path: path)
        let iso: (Report.Cell) -> String = { cell in
            if case .time(let instant?) = cell { return CivilTime.isoUTC(instant) }
            return ""
        }
        var report = Report(columns: [
            .init("statistic_id", .text), .init("unit", .text), .init("hours", .integer), .init("kind", .text),
            .init("first_valid_time", .time, label: "first valid hour (UTC)", tableText: iso),
            .init("last_valid_time", .time, label: "last valid hour (UTC)", tableText: iso)
        ])
        report.rows = listed.map { item in
            [
                // The file's own text, escaped in every format: it may hold terminal escapes.
                .text(item.statisticID.escapingControls()), .text(item.unit?.escapingControls()), .int(item.hours),
                .list([item.hasMean ? "mean" : nil, item.hasSum ? "sum" : nil].compactMap { $0 }),
                .time(item.firstStart.map { $0 + 3600 }), .time(item.lastStart.map { $0 + 3600 })
            ]
        }
        report.meta = [("path", .string(path))]
        report.rowsKey = "statistics"
        try report.render(format, context)
    }

    /// Says exactly what was stored: the hours considered, and per variable the hours stored
    /// and the hours missing by reason.
    static func report(
        _ result: StationImport, what: String, path: String, location: Location, source: String, context: Context
    ) throws {
        let units = result.units.isEmpty ? "" : "; units: " + result.units.joined(separator: ", ")
        context.note("Read \(result.recordsRead) \(what) from \(path)\(units)")
        guard let first = result.firstHour, let last = result.lastHour else {
            throw nothingToImport(path: path, read: "\(result.recordsRead) \(what)", location: location)
        }
        context.note(
            "Stored \(result.hours.count) of \(result.hoursConsidered) hours for \(location.name) (source \(source)), valid \(CivilTime.isoUTC(first)) to \(CivilTime.isoUTC(last))"
        )
        noteHoursByVariable(result.variables, stored: result.stored, missing: result.missing, context)
    }
}

/// A station file with no hour in the range asked for: stored nothing, which a script must not
/// take for success (the queries' "nothing to show" is exit 1 too).
func nothingToImport(path: String, read: String, location: Location) -> CLIError {
    CLIError(
        "no hour to import from \(path) (read \(read)): none falls in the time range asked for, for that station. Nothing was stored for \(location.name); check --from/--to (or --month, --station) against the file's dates"
    )
}

/// Why an hour of a variable was not stored, as a station import reports it.
protocol MissingHourReason: Hashable, Comparable, RawRepresentable where RawValue == String {
    /// What the reason means, for the note under the counts.
    var explanation: String { get }
}

extension StationMissingReason: MissingHourReason {}

/// Each variable's stored hours and its missing hours by reason, then what each reason named means.
func noteHoursByVariable<Reason: MissingHourReason>(
    _ variables: [Int], stored: [Int: Int], missing: [Int: [Reason: Int]], _ context: Context
) {
    var reasons = Set<Reason>()
    let width = variables.map { Variables.hourly[$0].name.count }.max() ?? 0
    for variable in variables {
        let name = Variables.hourly[variable].name
        var line =
            "  " + name + String(repeating: " ", count: width - name.count) + "  \(stored[variable] ?? 0) hours"
        let counts = (missing[variable] ?? [:]).sorted { $0.key < $1.key }
        if !counts.isEmpty {
            line +=
                "; missing \(counts.reduce(0) { $0 + $1.value }): "
                + counts.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
            reasons.formUnion(counts.map(\.key))
        }
        context.note(line)
    }
    for reason in reasons.sorted() { context.note("  (\(reason.rawValue): \(reason.explanation))") }
}
