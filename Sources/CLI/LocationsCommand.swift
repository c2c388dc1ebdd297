import FoundationEssentials
import WxCore
import WxFetcher
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum LocationsCommand {
    static var command: Command {
        Command(
            name: "locations",
            abstract: "Add, list, show, change and remove saved locations.",
            subcommands: [add, list, show, set, remove]
        )
    }

    static let timezoneHelp = "Time zone (tz database name) for local times and daily rows."

    static func validateTimezone(_ timezone: String?) throws {
        if let timezone, timezone != "auto", !ZoneTime.isKnown(timezone) {
            throw UsageError(
                "--timezone '\(timezone)' is not a time zone name (e.g. Europe/Berlin, America/New_York, UTC)")
        }
    }

    static func validateModels(_ models: [String]?, force: Bool) throws {
        for model in models ?? [] where !model.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
            throw UsageError("model name '\(model)' may only hold letters, digits and '_' (e.g. icon_seamless)")
        }
        if !force, let unknown = unknownModels(models).first {
            let close = Suggest.closest(unknown, among: ModelDomains.known)
            throw UsageError(
                "'\(unknown)' is not a model wxdb knows"
                    + (close.map { "; did you mean '\($0)'?" } ?? " (e.g. icon_seamless, ecmwf_ifs025, gfs_seamless)")
                    + " See 'wxdb help locations add' for the list, or give --force to use it anyway")
        }
    }

    /// The models not in wxdb's table (`ModelDomains.known`), in the order given.
    static func unknownModels(_ models: [String]?) -> [String] {
        (models ?? []).filter { !ModelDomains.known.contains($0) }
    }

    /// The note `--force` earns for models wxdb does not know.
    static func noteUnknown(_ models: [String]?, _ context: Context) {
        let unknown = unknownModels(models)
        guard !unknown.isEmpty else { return }
        context.note(
            "Note: \(unknown.joined(separator: ", ")) \(unknown.count == 1 ? "is not a model" : "are not models") wxdb knows; kept because of --force (Open-Meteo refuses a name it does not have at the next ingest)"
        )
    }

    static let modelsHelp = "Open-Meteo models to fetch (\(ModelDomains.known.joined(separator: ", ")))."
    static let forceHelp = "Accept model names wxdb does not know."

    /// The location's name, the one positional argument of show, set and remove.
    struct NameArgument {
        var name = ""
        static var arguments: [ArgumentSpec] {
            [ArgumentSpec(name: "name", help: "The location's name.", completion: .locations)]
        }
    }

    struct AddOptions: CommandOptions {
        var database = DatabaseOption()
        var network = NetworkOptions()
        var name = ""
        var latitude: Double?
        var longitude: Double?
        var elevation: Double?
        var timezone: String?
        var models: [String] = ["best_match"]
        var country: String?
        var force = false
        var output = FormatOption()

        static var arguments: [ArgumentSpec] {
            [
                ArgumentSpec(
                    name: "name", help: "A name for the location, used by every other command.", completion: .none)
            ]
        }

        static var table: [Opt<AddOptions>] {
            [
                .double("lat", "degrees", "Latitude, -90 to 90.", in: -90...90, \.latitude),
                .double("lon", "degrees", "Longitude, -180 to 180.", in: -180...180, \.longitude),
                .double(
                    "elevation", "metres", "Elevation for downscaling (default: Open-Meteo's terrain model).",
                    in: -500...9000, \.elevation),
                TimezoneOption.option(\.timezone, help: timezoneHelp, default: "auto: from the coordinates"),
                ModelListOption.option(
                    \.models, help: modelsHelp, default: "best_match", completions: ModelDomains.known),
                .string("country", "CC", "With geocoding: take the first match in this ISO country code.", \.country),
                ForceOption.option(\.force, help: forceHelp)
            ]
                + FormatOption.options(
                    \.output, help: "table (a note on stderr), csv or json (the added location on stdout).")
                + DatabaseOption.options(\.database) + NetworkOptions.options(\.network)
        }

        mutating func take(_ positionals: [String]) throws { name = positionals[0] }

        func validate() throws {
            try validateTimezone(timezone)
            try validateModels(models, force: force)
            if (latitude == nil) != (longitude == nil) {
                throw UsageError("give both --lat and --lon, or neither to look the name up")
            }
        }
    }

    static var add: Command {
        Command(
            name: "add",
            abstract: "Save a location to fetch forecasts for.",
            discussion: "Without --lat/--lon the name is looked up with Open-Meteo's geocoding API (first match).",
            options: AddOptions.self, run: runAdd)
    }

    static func runAdd(_ options: AddOptions, _ context: Context) async throws {
        if options.force { noteUnknown(options.models, context) }
        let location: Location
        if let latitude = options.latitude, let longitude = options.longitude {
            let store = try options.database.open(context, create: true)
            location = try store.addLocation(
                name: options.name, latitude: latitude, longitude: longitude, elevation: options.elevation,
                timezone: options.timezone ?? "auto", models: options.models, now: context.nowUnix)
            context.note(
                "Added \(location.name) (\(formatNumber(latitude, places: 4)), \(formatNumber(longitude, places: 4)))")
        } else {
            location = try await Geocode.addByName(options, context: context)
        }
        if options.output.format != .table {
            var report = report([Summary(location: location, runs: 0, fetches: 0, observations: 0, lastFetch: nil)])
            report.single = true
            try report.render(options.output.format, context)
        }
    }

    struct ListOptions: CommandOptions {
        var database = DatabaseOption()
        var output = FormatOption()
        var names = false
        static var table: [Opt<ListOptions>] {
            FormatOption.options(\.output)
                + [.flag("names", "Only the names, one a line (for scripts and shell completion).", \.names)]
                + DatabaseOption.options(\.database)
        }
    }

    static var list: Command {
        Command(name: "list", abstract: "List saved locations.", options: ListOptions.self) { options, context in
            let store = try options.database.open(context, access: .read)
            if options.names {
                context.out(try store.locations().map { $0.name + "\n" }.joined())
                return
            }
            let summaries = try summaries(store)
            if options.output.format == .table && summaries.isEmpty {
                context.note("No locations yet. Add one with: wxdb locations add NAME --lat DEG --lon DEG")
                return
            }
            try report(summaries).render(options.output.format, context)
        }
    }

    /// Saved locations, described once for list, show and add.
    static func report(_ summaries: [Summary]) -> Report {
        var report = Report(columns: [
            .init("name", .text), .init("latitude", .number(places: 4)), .init("longitude", .number(places: 4)),
            .init("elevation", .number(places: 0)), .init("timezone", .text), .init("models", .text),
            .init("runs", .integer), .init("fetches", .integer, only: [.csv, .json]),
            .init("observations", .integer, only: [.csv, .json]),
            .init("last_fetch", .time, label: "last fetch (UTC)") { cell in
                if case .time(let instant?) = cell { return CivilTime.isoUTC(instant) }
                return "never"
            }
        ])
        report.rows = summaries.map { s in
            [
                .text(s.location.name), .number(s.location.latitude), .number(s.location.longitude),
                .number(s.location.elevation),
                .text(s.location.timezone), .list(s.location.models), .int(s.runs), .int(s.fetches),
                .int(s.observations), .time(s.lastFetch)
            ]
        }
        report.rowsKey = nil
        return report
    }

    struct Summary {
        var location: Location
        var runs: Int
        var fetches: Int
        var observations: Int
        var lastFetch: Int64?
    }

    static func summaries(_ store: any Store, only: String? = nil) throws -> [Summary] {
        let locations = try only.map { [try store.requireLocation(named: $0)] } ?? store.locations()
        return try locations.map { location in
            let activity = try store.activity(locationID: location.id)
            return Summary(
                location: location, runs: activity.runs, fetches: activity.fetches, observations: activity.observations,
                lastFetch: activity.lastFetch)
        }
    }

    struct ShowOptions: CommandOptions {
        var database = DatabaseOption()
        var location = NameArgument()
        var output = FormatOption()
        static var arguments: [ArgumentSpec] { NameArgument.arguments }
        static var table: [Opt<ShowOptions>] { FormatOption.options(\.output) + DatabaseOption.options(\.database) }
        mutating func take(_ positionals: [String]) throws { location.name = positionals[0] }
    }

    static var show: Command {
        Command(name: "show", abstract: "Show one location and what is stored for it.", options: ShowOptions.self) {
            options, context in
            let store = try options.database.open(context, access: .read)
            let location = try LocationOption.resolve(options.location.name, in: store)
            guard let s = try summaries(store, only: location.name).first else { return }
            if options.output.format != .table {
                var report = report([s])
                report.single = true
                try report.render(options.output.format, context)
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
    }

    struct SetOptions: CommandOptions {
        var database = DatabaseOption()
        var location = NameArgument()
        var timezone: String?
        var models: [String] = []
        var force = false
        static var arguments: [ArgumentSpec] { NameArgument.arguments }
        static var table: [Opt<SetOptions>] {
            [
                TimezoneOption.option(\.timezone, help: timezoneHelp),
                ModelListOption.option(\.models, help: modelsHelp, completions: ModelDomains.known),
                ForceOption.option(\.force, help: forceHelp)
            ]
                + DatabaseOption.options(\.database)
        }
        mutating func take(_ positionals: [String]) throws { location.name = positionals[0] }
        func validate() throws {
            if timezone == "auto" {
                throw UsageError("--timezone 'auto' cannot be set; give a tz database name such as Europe/Berlin")
            }
            try validateTimezone(timezone)
            try validateModels(models, force: force)
            guard timezone != nil || !models.isEmpty else { throw UsageError("give --timezone or --models to change") }
        }
    }

    static var set: Command {
        Command(
            name: "set",
            abstract: "Change a saved location's time zone or models.",
            discussion: "Stored runs keep the model they were fetched with; new models apply from the next ingest.",
            options: SetOptions.self
        ) { options, context in
            let store = try options.database.open(context)
            let name = try LocationOption.resolve(options.location.name, in: store).name
            if options.force { noteUnknown(options.models, context) }
            let location = try store.updateLocation(
                named: name, timezone: options.timezone, models: options.models.isEmpty ? nil : options.models)
            context.note(
                "\(location.name): time zone \(location.timezone), models \(location.models.joined(separator: ","))")
        }
    }

    struct RemoveOptions: CommandOptions {
        var database = DatabaseOption()
        var location = NameArgument()
        var purge = false
        static var arguments: [ArgumentSpec] { NameArgument.arguments }
        static var table: [Opt<RemoveOptions>] {
            [.flag("purge", "Also delete its stored forecasts and observations.", \.purge)]
                + DatabaseOption.options(\.database)
        }
        mutating func take(_ positionals: [String]) throws { location.name = positionals[0] }
    }

    static var remove: Command {
        Command(name: "remove", abstract: "Remove a saved location.", options: RemoveOptions.self) { options, context in
            let store = try options.database.open(context)
            let name = try LocationOption.resolve(options.location.name, in: store).name
            let removed = try store.removeLocation(named: name, purge: options.purge)
            context.note("Removed \(name) (\(removed.runs) runs, \(removed.observations) observations deleted)")
        }
    }
}
