import FoundationEssentials
import WxCore
import WxFetcher
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `wxdb observe`, with its subcommands nested as swift-argument-parser nests them.
enum ObserveCommand {
    /// `observe import-isd|import-metar|import-meteostat` (ObserveStationCommands.swift).
    enum StationFiles {}
    /// `observe stations|fetch` (ObserveStationFetch.swift).
    enum StationFetch {}
    /// `observe import-weewx|import-home-assistant` (StationImportCommands.swift).
    enum StationDatabases {}

    static var command: Command {
        Command(
            name: "observe", abstract: "Store observed weather to judge forecasts against.",
            subcommands: [
                importCSV, ObserveCommand.StationDatabases.weewx, ObserveCommand.StationDatabases.homeAssistant,
                ObserveCommand.StationFiles.isd, ObserveCommand.StationFiles.metar,
                ObserveCommand.StationFiles.meteostat,
                ObserveCommand.StationFetch.stations, ObserveCommand.StationFetch.fetch, backfill
            ])
    }

    struct ImportOptions: CommandOptions {
        var database = DatabaseOption()
        var file = ""
        var location = LocationOption()
        var source = ObservationSourceOption(default: "csv")
        var timezone: String?
        var skipBadRows = false

        static var arguments: [ArgumentSpec] { [ArgumentSpec(name: "file", help: "The CSV file.")] }

        static var table: [Opt<ImportOptions>] {
            LocationOption.options(\.location, help: "The saved location the observations are for.")
                + ObservationSourceOption.options(\.source, default: "csv")
                + [
                    TimezoneOption.option(
                        \.timezone, help: "Read times without an offset in this zone (e.g. Europe/Berlin)."),
                    .flag("skip-bad-rows", "Store the good rows and report the bad ones.", \.skipBadRows)
                ]
                + DatabaseOption.options(\.database)
        }

        mutating func take(_ positionals: [String]) throws { file = positionals[0] }

        func validate() throws {
            try source.validate()
            if let timezone, !ZoneTime.isKnown(timezone) {
                throw UsageError(
                    "--timezone '\(timezone)' is not a time zone name (e.g. Europe/Berlin, America/New_York, UTC)")
            }
        }
    }

    static var importCSV: Command {
        Command(
            name: "import",
            abstract: "Import station observations from CSV.",
            discussion: """
                The header is `time,<variable>,...` with Open-Meteo variable names (temperature_2m, precipitation,
                ...) in metric units; times are ISO 8601 with Z or an offset. An empty cell is a missing value.
                A bad row is reported with its line number and nothing is stored, unless --skip-bad-rows.
                """,
            options: ImportOptions.self, run: runImport)
    }

    static func runImport(_ args: ImportOptions, _ context: Context) throws {
        let path = args.file
        let source = args.source.name
        let store = try args.database.open(context)
        let location = try args.location.resolve(store)
        var zone: ((Int64) -> Int64?)?
        if let tz = args.timezone {
            zone = { ZoneTime.existingInstant(ofWall: $0, timezone: tz) }
        }
        let data = try readInput(path)
        let csv: StationCSV
        do {
            csv = try StationCSV.parse(data, timezone: zone, skipBadRows: args.skipBadRows)
        } catch let problem as StationCSV.Problem where problem.wholeFile {
            throw CLIError("\(path): \(problem.description). Nothing was imported")
        } catch let problem as StationCSV.Problem {
            throw CLIError("\(path) \(problem.description). Nothing was imported; fix the row or use --skip-bad-rows")
        }
        let stored = try store.importObservations(
            csv, locationID: location.id, source: source, recordedAt: context.nowUnix)
        for problem in csv.skipped.prefix(20) { context.err("Skipped \(path) \(problem.description)") }
        if csv.skipped.count > 20 { context.err("Skipped \(csv.skipped.count - 20) more bad rows") }
        let offHour = csv.rows.filter { $0.time % 3600 != 0 }.count
        if offHour > 0 {
            context.note(
                "Note: \(offHour) rows are not on the hour; forecasts pair only with observations at exactly their valid hour"
            )
        }
        context.note(
            "Imported \(stored) observations for \(location.name) (source \(source))"
                + (csv.skipped.isEmpty ? "" : ", skipped \(csv.skipped.count) bad rows")
                + (csv.outOfRange.note.map { "; " + $0 } ?? ""))
    }

    struct BackfillOptions: CommandOptions {
        var database = DatabaseOption()
        var network = NetworkOptions()
        var location = LocationOption()
        var from: String?
        var to: String?

        static var table: [Opt<BackfillOptions>] {
            LocationOption.options(\.location)
                + DateRangeOptions.options(\.from, \.to, of: "observations")
                + DatabaseOption.options(\.database) + NetworkOptions.options(\.network)
        }

        func validate() throws {
            for (option, value) in [("from", from ?? ""), ("to", to ?? "")]
            where CivilTime.parseLabel(value) == nil || value.utf8.count != 10 {
                throw UsageError("--\(option) '\(value)' is not a date like 2026-01-31")
            }
            if let from, let to, from > to {
                throw UsageError("--from \(from) is after --to \(to); give the earlier date first")
            }
        }
    }

    static var backfill: Command {
        Command(
            name: "backfill",
            abstract: "Fetch observed weather (reanalysis) from Open-Meteo's historical weather API, as source era5.",
            discussion: """
                Dates are inclusive, in the location's time zone. Running it again over the same range changes nothing.
                Hours after now have not been observed: a range reaching past now stops at the last complete hour and says so.
                """,
            options: BackfillOptions.self, run: runBackfill)
    }

    static func runBackfill(_ args: BackfillOptions, _ context: Context) async throws {
        let store = try args.database.open(context)
        let location = try args.location.resolve(store)
        let backfill = Backfill(
            store: store, client: args.network.httpClient(context), endpoints: args.network.endpoints(context))
        let result = try await backfill.run(
            location: location, fromDate: args.from!, toDate: args.to!, now: context.nowUnix)
        context.note(
            "Stored \(result.hours) hours of era5 observations for \(location.name) (\(result.requests) request(s))"
                + (result.outOfRange.note.map { "; " + $0 } ?? ""))
        if result.stoppedEarly {
            let last =
                result.stoppedAt.map { "at \(CivilTime.isoUTC($0)), the last complete hour" } ?? "before any hour"
            context.note(
                "Note: --to \(args.to!) reaches past now; stopped \(last) (later hours have not been observed yet)")
        }
    }
}

/// `--source NAME` of a command that stores observations: the user's name for where they came
/// from, never one of the names wxdb gives its own observations.
struct ObservationSourceOption {
    var given: String?
    /// The command's own default (`csv`, `weewx`, ...).
    let fallback: String

    init(default fallback: String) { self.fallback = fallback }

    var name: String { given ?? fallback }

    static func options<R>(
        _ key: @autoclosure @escaping () -> WritableKeyPath<R, ObservationSourceOption>, default fallback: String
    ) -> [Opt<R>] {
        [
            SourceOption.option(
                \ObservationSourceOption.given, help: "A name for this source of observations.", default: fallback
            )
            .lifted(key())
        ]
    }

    func validate() throws {
        guard !name.isEmpty, !SourceNames.isReserved(name) else {
            throw UsageError("--source '\(name)' is reserved for observations wxdb makes itself; pick another name")
        }
    }
}
