import Foundation
import WxCore
import WxStore

enum LocationsCommand {
    static var command: Command {
        Command(
            name: "locations",
            abstract: "Add, list, show and remove saved locations.",
            subcommands: [add, list, show, set, remove]
        )
    }

    static var add: Command {
        Command(
            name: "add",
            abstract: "Save a location to fetch forecasts for.",
            discussion: "Without --lat/--lon the name is looked up with Open-Meteo's geocoding API (first match).",
            arguments: [ArgumentSpec(name: "name", help: "A name for the location, used by every other command.")],
            options: [
                .option("lat", "degrees", "Latitude, -90 to 90."),
                .option("lon", "degrees", "Longitude, -180 to 180."),
                .option("elevation", "metres", "Elevation for downscaling (default: Open-Meteo's terrain model)."),
                .option("timezone", "tz", "Time zone (tz database name) for local times and daily rows.", default: "auto: from the coordinates"),
                .option("models", "m1,m2", "Open-Meteo models to fetch, comma-separated.", default: "best_match"),
                .option("country", "CC", "With geocoding: take the first match in this ISO country code."),
                .option("format", "format", "table, csv or json."),
            ],
            run: { args, context in try await runAdd(args, context) }
        )
    }

    static func runAdd(_ args: ParsedArguments, _ context: Context) async throws {
        let name = args.positionals[0]
        let timezone = args.value("timezone")
        if let timezone, timezone != "auto", TimeZone(identifier: timezone) == nil {
            throw UsageError("--timezone '\(timezone)' is not a time zone name (e.g. Europe/Berlin, America/New_York, UTC)")
        }
        let models = try parseModels(args.value("models"))
        let latitude = try args.double("lat", in: -90...90)
        let longitude = try args.double("lon", in: -180...180)
        let elevation = try args.double("elevation", in: -500...9000)
        guard let latitude, let longitude else {
            if args.value("lat") != nil || args.value("lon") != nil {
                throw UsageError("give both --lat and --lon, or neither to look the name up")
            }
            try await Geocode.addByName(name, timezone: timezone, models: models, elevation: elevation, args: args, context: context)
            return
        }
        let store = try context.openStore()
        let location = try store.addLocation(
            name: name, latitude: latitude, longitude: longitude, elevation: elevation,
            timezone: timezone ?? "auto", models: models, now: context.nowUnix)
        context.note("Added \(location.name) (\(formatNumber(latitude, places: 4)), \(formatNumber(longitude, places: 4)))")
    }

    static func parseModels(_ text: String?) throws -> [String] {
        guard let text else { return ["best_match"] }
        let models = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !models.isEmpty else { throw UsageError("--models needs at least one model name") }
        for model in models where !model.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
            throw UsageError("model name '\(model)' may only hold letters, digits and '_' (e.g. icon_seamless)")
        }
        return models
    }

    static var list: Command {
        Command(
            name: "list",
            abstract: "List saved locations.",
            options: [.option("format", "format", "table, csv or json.")],
            run: { args, context in
                let format = try context.format()
                let store = try context.openStore(access: .read)
                let summaries = try summaries(store)
                switch format {
                case "json":
                    context.out(JSON.array(summaries.map(json)).serialized() + "\n")
                case "csv":
                    try writeCSV(summaries, context)
                default:
                    if summaries.isEmpty {
                        context.note("No locations yet. Add one with: wxdb locations add NAME --lat DEG --lon DEG")
                        return
                    }
                    var table = Table(headers: ["name", "latitude", "longitude", "elevation", "timezone", "models", "runs", "last fetch (UTC)"])
                    table.rightAligned = [1, 2, 3, 6]
                    for s in summaries {
                        table.rows.append([
                            s.location.name, formatNumber(s.location.latitude, places: 4), formatNumber(s.location.longitude, places: 4),
                            formatNumber(s.location.elevation, places: 0), s.location.timezone, s.location.models.joined(separator: ","),
                            String(s.runs), s.lastFetch.map(CivilTime.isoUTC) ?? "never",
                        ])
                    }
                    context.out(table.render())
                }
            }
        )
    }

    struct Summary {
        var location: Location
        var runs: Int
        var fetches: Int
        var observations: Int
        var lastFetch: Int64?
    }

    static func summaries(_ store: Store, only: String? = nil) throws -> [Summary] {
        let locations = try only.map { [try store.requireLocation(named: $0)] } ?? store.locations()
        return try locations.map { location in
            let activity = try store.activity(locationID: location.id)
            return Summary(location: location, runs: activity.runs, fetches: activity.fetches, observations: activity.observations,
                           lastFetch: activity.lastFetch)
        }
    }

    static func json(_ s: Summary) -> JSON {
        .object([
            ("name", .string(s.location.name)), ("latitude", .number(s.location.latitude)),
            ("longitude", .number(s.location.longitude)), ("elevation", .number(s.location.elevation)),
            ("timezone", .string(s.location.timezone)), ("models", .array(s.location.models.map { .string($0) })),
            ("runs", .number(Double(s.runs))), ("fetches", .number(Double(s.fetches))),
            ("observations", .number(Double(s.observations))),
            ("last_fetch", s.lastFetch.map { .string(CivilTime.isoUTC($0)) } ?? .null),
        ])
    }

    static func writeCSV(_ summaries: [Summary], _ context: Context) throws {
        let csv = context.csvWriter()
        for header in ["name", "latitude", "longitude", "elevation", "timezone", "models", "runs", "fetches", "observations", "last_fetch"] {
            csv.text(header)
        }
        csv.endRow()
        for s in summaries {
            csv.text(s.location.name)
            csv.number(s.location.latitude)
            csv.number(s.location.longitude)
            csv.number(s.location.elevation)
            csv.text(s.location.timezone)
            csv.text(s.location.models.joined(separator: ","))
            csv.integer(Int64(s.runs))
            csv.integer(Int64(s.fetches))
            csv.integer(Int64(s.observations))
            if let last = s.lastFetch { csv.isoUTC(last) } else { csv.empty() }
            csv.endRow()
        }
        try csv.flush()
    }

    static var show: Command {
        Command(
            name: "show",
            abstract: "Show one location and what is stored for it.",
            arguments: [ArgumentSpec(name: "name", help: "The location's name.")],
            options: [.option("format", "format", "table, csv or json.")],
            run: { args, context in
                let format = try context.format()
                let store = try context.openStore(create: false, access: .read)
                guard let s = try summaries(store, only: args.positionals[0]).first else { return }
                if format == "json" {
                    context.out(json(s).serialized() + "\n")
                    return
                }
                if format == "csv" {
                    try writeCSV([s], context)
                    return
                }
                let l = s.location
                var text = "name:         \(l.name)\n"
                text += "latitude:     \(formatNumber(l.latitude, places: 4))\n"
                text += "longitude:    \(formatNumber(l.longitude, places: 4))\n"
                text += "elevation:    \(l.elevation.map { formatNumber($0, places: 0) + " m" } ?? "from Open-Meteo")\n"
                text += "timezone:     \(l.timezone)\n"
                text += "models:       \(l.models.joined(separator: ", "))\n"
                text += "runs:         \(s.runs)\n"
                text += "fetches:      \(s.fetches)\n"
                text += "observations: \(s.observations)\n"
                text += "last fetch:   \(s.lastFetch.map { CivilTime.isoUTC($0) } ?? "never")\n"
                context.out(text)
            }
        )
    }

    static var set: Command {
        Command(
            name: "set",
            abstract: "Change a saved location's time zone or models.",
            discussion: "Stored runs keep the model they were fetched with; new models apply from the next ingest.",
            arguments: [ArgumentSpec(name: "name", help: "The location's name.")],
            options: [
                .option("timezone", "tz", "Time zone (tz database name) for local times and daily rows."),
                .option("models", "m1,m2", "Open-Meteo models to fetch, comma-separated."),
            ],
            run: { args, context in
                let name = args.positionals[0]
                let timezone = args.value("timezone")
                if let timezone, TimeZone(identifier: timezone) == nil {
                    throw UsageError("--timezone '\(timezone)' is not a time zone name (e.g. Europe/Berlin, America/New_York, UTC)")
                }
                let models = try args.value("models").map { try parseModels($0) }
                guard timezone != nil || models != nil else { throw UsageError("give --timezone or --models to change") }
                let store = try context.openStore(create: false)
                let location = try store.updateLocation(named: name, timezone: timezone, models: models)
                context.note("\(location.name): time zone \(location.timezone), models \(location.models.joined(separator: ","))")
            }
        )
    }

    static var remove: Command {
        Command(
            name: "remove",
            abstract: "Remove a saved location.",
            arguments: [ArgumentSpec(name: "name", help: "The location's name.")],
            options: [.flag("purge", "Also delete its stored forecasts and observations.")],
            run: { args, context in
                let store = try context.openStore(create: false)
                let removed = try store.removeLocation(named: args.positionals[0], purge: args.flag("purge"))
                context.note("Removed \(args.positionals[0]) (\(removed.runs) runs, \(removed.observations) observations deleted)")
            }
        )
    }
}
