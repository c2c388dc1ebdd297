import Foundation
import WxCore
import WxStore

/// `wxdb observe import-weewx` and `import-home-assistant`: a station's own database as the
/// observations, read read-only (the reading and hourly rules live in WxStore's Stations).
enum StationImportCommands {
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
            arguments: [ArgumentSpec(name: "path", help: "The weewx SQLite database.")],
            options: [
                .option("location", "name", "The saved location the station is at."),
                .option("source", "name", "A name for this source of observations.", default: "weewx"),
                QueryCommand.fromOption, QueryCommand.toOption,
            ],
            run: { args, context in try runWeewx(args, context) }
        )
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
            arguments: [ArgumentSpec(name: "path", help: "Home Assistant's recorder database (home-assistant_v2.db).")],
            options: [
                .option("location", "name", "The saved location the sensors are at."),
                .option("sensor", "variable=statistic_id", "e.g. temperature_2m=sensor.outdoor_temperature.", repeatable: true),
                .option("source", "name", "A name for this source of observations.", default: "home-assistant"),
                QueryCommand.fromOption, QueryCommand.toOption,
                .flag("list", "Print the statistic ids in the file with their units, and import nothing."),
            ],
            run: { args, context in try runHomeAssistant(args, context) }
        )
    }

    static func runWeewx(_ args: ParsedArguments, _ context: Context) throws {
        let path = args.positionals[0]
        let source = try ObserveCommand.source(args, default: "weewx")
        let store = try context.openStore(create: false)
        let location = try store.requireLocation(named: try args.require("location"))
        let (from, to) = try TimeInput.range(args, timezone: location.timezone, now: context.nowUnix)
        let result = try WeewxArchive.read(path: path, from: from, to: to)
        try store.replaceStationObservations(result, locationID: location.id, source: source, recordedAt: context.nowUnix)
        report(result, what: "weewx records", path: path, location: location, source: source, context: context)
    }

    static func runHomeAssistant(_ args: ParsedArguments, _ context: Context) throws {
        let path = args.positionals[0]
        if args.flag("list") {
            try list(path, context)
            return
        }
        let source = try ObserveCommand.source(args, default: "home-assistant")
        let sensors = try args.values("sensor").map(sensor)
        guard !sensors.isEmpty else {
            throw UsageError("give at least one --sensor VARIABLE=STATISTIC_ID (e.g. temperature_2m=sensor.outdoor_temperature); --list shows the ids")
        }
        var seen = Set<Int>()
        for sensor in sensors where !seen.insert(sensor.variable).inserted {
            throw UsageError("--sensor gives \(Variables.hourly[sensor.variable].name) twice; give one statistic per variable")
        }
        let store = try context.openStore(create: false)
        let location = try store.requireLocation(named: try args.require("location"))
        let (from, to) = try TimeInput.range(args, timezone: location.timezone, now: context.nowUnix)
        let result = try HomeAssistantStatistics.read(path: path, sensors: sensors, from: from, to: to)
        try store.replaceStationObservations(result, locationID: location.id, source: source, recordedAt: context.nowUnix)
        report(result, what: "statistics rows", path: path, location: location, source: source, context: context)
    }

    static func sensor(_ text: String) throws -> HomeAssistantStatistics.Sensor {
        let parts = text.split(separator: "=", maxSplits: 1).map(String.init)
        guard parts.count == 2, !parts[1].isEmpty else {
            throw UsageError("--sensor '\(text)' is not VARIABLE=STATISTIC_ID (e.g. temperature_2m=sensor.outdoor_temperature)")
        }
        guard let index = Variables.hourlyIndex(of: parts[0]),
              ![.code, .instant].contains(Variables.hourly[index].quantity),
              Variables.hourly[index].name != "precipitation_probability" else {
            let measured = Variables.hourly.filter { ![.code, .instant].contains($0.quantity) && $0.name != "precipitation_probability" }
            throw UsageError("--sensor '\(text)': '\(parts[0])' is not a variable a sensor measures; use one of: \(measured.map(\.name).joined(separator: ", "))")
        }
        return HomeAssistantStatistics.Sensor(variable: index, statisticID: parts[1])
    }

    static func list(_ path: String, _ context: Context) throws {
        let listed = try HomeAssistantStatistics.list(path: path)
        var table = Table(headers: ["statistic_id", "unit", "hours", "kind", "first valid hour (UTC)", "last valid hour (UTC)"], rightAligned: [2])
        for item in listed {
            let kind = [item.hasMean ? "mean" : nil, item.hasSum ? "sum" : nil].compactMap { $0 }.joined(separator: "+")
            table.rows.append([item.statisticID, item.unit ?? "", "\(item.hours)", kind,
                               item.firstStart.map { CivilTime.isoUTC($0 + 3600) } ?? "",
                               item.lastStart.map { CivilTime.isoUTC($0 + 3600) } ?? ""])
        }
        context.out(table.render())
    }

    /// Says exactly what was stored: the hours considered, and per variable the hours stored
    /// and the hours missing by reason.
    static func report(_ result: StationImport, what: String, path: String, location: Location, source: String, context: Context) {
        let units = result.units.isEmpty ? "" : "; units: " + result.units.joined(separator: ", ")
        context.note("Read \(result.recordsRead) \(what) from \(path)\(units)")
        guard let first = result.firstHour, let last = result.lastHour else {
            context.note("Nothing to import in that file and time range; nothing was stored for \(location.name)")
            return
        }
        context.note("Stored \(result.hours.count) of \(result.hoursConsidered) hours for \(location.name) (source \(source)), valid \(CivilTime.isoUTC(first)) to \(CivilTime.isoUTC(last))")
        var reasons = Set<StationMissingReason>()
        let width = result.variables.map { Variables.hourly[$0].name.count }.max() ?? 0
        for variable in result.variables {
            let name = Variables.hourly[variable].name
            var line = "  " + name + String(repeating: " ", count: width - name.count) + "  \(result.stored[variable] ?? 0) hours"
            let missing = (result.missing[variable] ?? [:]).sorted { $0.key < $1.key }
            if !missing.isEmpty {
                line += "; missing \(missing.reduce(0) { $0 + $1.value }): " + missing.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
                reasons.formUnion(missing.map(\.key))
            }
            context.note(line)
        }
        for reason in reasons.sorted() { context.note("  (\(reason.rawValue): \(reason.explanation))") }
    }
}
