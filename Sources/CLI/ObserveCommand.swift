import Foundation
import WxCore
import WxFetcher
import WxStore

enum ObserveCommand {
    static var command: Command {
        Command(name: "observe", abstract: "Store observed weather to judge forecasts against.",
                subcommands: [importCSV, StationImportCommands.weewx, StationImportCommands.homeAssistant, backfill])
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
            arguments: [ArgumentSpec(name: "file", help: "The CSV file.")],
            options: [
                .option("location", "name", "The saved location the observations are for."),
                .option("source", "name", "A name for this source of observations.", default: "csv"),
                .option("timezone", "tz", "Read times without an offset in this zone (e.g. Europe/Berlin)."),
                .flag("skip-bad-rows", "Store the good rows and report the bad ones."),
            ],
            run: { args, context in try runImport(args, context) }
        )
    }

    static func runImport(_ args: ParsedArguments, _ context: Context) throws {
        let path = args.positionals[0]
        let source = try source(args, default: "csv")
        let store = try context.openStore(create: false)
        let location = try store.requireLocation(named: try args.require("location"))
        var zone: ((Int64) -> Int64)?
        if let tz = args.value("timezone") {
            guard TimeZone(identifier: tz) != nil else { throw UsageError("--timezone '\(tz)' is not a time zone name") }
            zone = { TimeInput.localToUTC($0, timezone: tz) }
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CLIError("cannot read \(path): no such file, or not readable")
        }
        let csv: StationCSV
        do {
            csv = try StationCSV.parse(data, timezone: zone, skipBadRows: args.flag("skip-bad-rows"))
        } catch let problem as StationCSV.Problem {
            throw CLIError("\(path) \(problem.description). Nothing was imported; fix the row or use --skip-bad-rows")
        }
        let stored = try store.importObservations(csv, locationID: location.id, source: source, recordedAt: context.nowUnix)
        for problem in csv.skipped.prefix(20) { context.err("Skipped \(path) \(problem.description)") }
        if csv.skipped.count > 20 { context.err("Skipped \(csv.skipped.count - 20) more bad rows") }
        let offHour = csv.rows.filter { $0.time % 3600 != 0 }.count
        if offHour > 0 {
            context.note("Note: \(offHour) rows are not on the hour; forecasts pair only with observations at exactly their valid hour")
        }
        context.note("Imported \(stored) observations for \(location.name) (source \(source))" + (csv.skipped.isEmpty ? "" : ", skipped \(csv.skipped.count) bad rows"))
    }

    /// `--source`, else `fallback`; the names of observations wxdb makes itself are refused.
    static func source(_ args: ParsedArguments, default fallback: String) throws -> String {
        let source = args.value("source") ?? fallback
        guard !source.isEmpty, !["current", "analysis"].contains(source) else {
            throw UsageError("--source '\(source)' is reserved for observations wxdb makes itself; pick another name")
        }
        return source
    }

    static var backfill: Command {
        Command(
            name: "backfill",
            abstract: "Fetch observed weather (reanalysis) from Open-Meteo's historical weather API, as source era5.",
            discussion: "Dates are inclusive, in the location's time zone. Running it again over the same range changes nothing.",
            options: [
                .option("location", "name", "The saved location."),
                .option("from", "date", "First date, YYYY-MM-DD."),
                .option("to", "date", "Last date, YYYY-MM-DD."),
            ] + networkOptions,
            run: { args, context in try await runBackfill(args, context) }
        )
    }

    static func runBackfill(_ args: ParsedArguments, _ context: Context) async throws {
        let store = try context.openStore(create: false)
        let location = try store.requireLocation(named: try args.require("location"))
        let from = try args.require("from")
        let to = try args.require("to")
        for (option, value) in [("from", from), ("to", to)] where CivilTime.parseLabel(value) == nil || value.utf8.count != 10 {
            throw UsageError("--\(option) '\(value)' is not a date like 2026-01-31")
        }
        let backfill = Backfill(store: store, client: try context.httpClient(), endpoints: context.endpoints)
        let result = try await backfill.run(location: location, fromDate: from, toDate: to, now: context.nowUnix)
        context.note("Stored \(result.hours) hours of era5 observations for \(location.name) (\(result.requests) request(s))")
        if result.stoppedEarly {
            let last = result.stoppedAt.map { "at \(CivilTime.isoUTC($0)), the last complete hour" } ?? "before any hour"
            context.note("Note: --to \(to) reaches past now; stopped \(last) (later hours have not been observed yet)")
        }
    }
}
