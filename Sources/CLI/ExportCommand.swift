import FoundationEssentials
import WxCore
import WxQueries
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum ExportCommand {
    static var command: Command {
        Command(
            name: "export",
            abstract: "Write stored runs, ensemble members, observations or forecast/observed pairs as CSV.",
            discussion: """
                CSV is RFC 4180 (header row, CRLF, UTF-8) with ISO 8601 UTC times; a missing value is an
                empty cell. --from/--to (both inclusive) select runs by issued_at (hourly, daily, members), observations
                by time, and pairs by valid_time; bare dates are in the location's time zone (UTC without --location).
                """,
            subcommands: ExportRequest.Kind.allCases.map(subcommand)
        )
    }

    struct Options: CommandOptions {
        var kind = ExportRequest.Kind.hourly
        var database = DatabaseOption()
        var location = LocationOption()
        var range = TimeRangeOptions()
        var output: String?
        var outputDirectory: String?
        var variables: [String] = []
        var model: String?
        var source: String?
        var format = FormatOption()

        init() { format.format = .csv }

        static var table: [Opt<Options>] { table(.hourly) }

        static func table(_ kind: ExportRequest.Kind) -> [Opt<Options>] {
            let filtered: String
            switch kind {
            case .hourly, .daily, .members: filtered = "runs issued"
            case .observations: filtered = "observations"
            case .pairs: filtered = "forecast hours valid"
            }
            var table =
                LocationOption.options(\Options.location, required: false, help: "Only this location.")
                + TimeRangeOptions.options(\.range, on: filtered)
                + [
                    OutputPathOption.option(
                        \.output,
                        help: "Write to this file instead of stdout (replaced only when the export completes)."),
                    VariableListOption.option(
                        \.variables, help: kind == .pairs ? "Variables to pair." : "Only these variables' columns.",
                        default: kind == .pairs ? "temperature_2m" : "all",
                        completions: kind == .daily
                            ? Variables.dailyNames
                            : kind == .members ? EnsembleModels.variables.map(\.name) : Variables.hourlyNames)
                ]
            if kind == .pairs {
                table.append(
                    .string(
                        "output-dir", "path",
                        "With --format verif: one file per model in this folder, named <model>.txt (verif's legend).",
                        \.outputDirectory))
            }
            if kind != .observations { table.append(ModelOption.option(\.model, help: "Only this model.")) }
            if kind == .pairs || kind == .observations {
                table.append(
                    SourceOption.option(\.source, default: kind == .pairs ? "the location's best source" : "all"))
            }
            table +=
                kind == .pairs
                ? FormatOption.options(\.format, [.csv, .verif], help: "csv, or verif (the verif tool's text format).")
                : FormatOption.options(\.format, [.csv])
            return table + DatabaseOption.options(\.database)
        }

        func validate() throws {
            try range.validate()
            do {
                if kind == .members {
                    _ = try Exporter.validateMembers(variables)
                } else {
                    _ = try Exporter.validate(variables, daily: kind == .daily)
                }
            } catch let error as ExportError {
                if case .unknownVariable(let name, let allowed) = error {
                    throw UsageError(
                        "--var '\(name)' is not a variable this export has" + Suggest.phrase(name, among: allowed)
                            + "; it has: \(allowed.joined(separator: ", "))")
                }
                throw error
            }
            if kind == .members, let model, !EnsembleModels.isEnsemble(model) {
                throw UsageError(
                    "--model \(model) is not an ensemble model" + Suggest.phrase(model, among: EnsembleModels.names)
                        + "; export hourly has deterministic runs")
            }
            if format.format == .verif && location.name == nil {
                throw UsageError("--format verif needs --location (a verif file holds one location)")
            }
            if format.format == .verif && variables.count > 1 {
                throw UsageError(ExportError.verifNeedsOneVariable.description)
            }
            if format.format != .verif, outputDirectory != nil || output?.contains("{model}") == true {
                throw UsageError(
                    "--output-dir and {model} in --output write one verif file per model; they need --format verif")
            }
            if outputDirectory != nil, output != nil {
                throw UsageError("give --output (one file, or {model} in its name) or --output-dir, not both")
            }
        }
    }

    static func subcommand(_ kind: ExportRequest.Kind) -> Command {
        let abstract: String
        switch kind {
        case .hourly: abstract = "Every stored hour of every run (negative leads too)."
        case .daily: abstract = "Every stored day of every run."
        case .observations: abstract = "Stored observations."
        case .pairs: abstract = "Each run's forecast beside the observation at its valid time."
        case .members: abstract = "Every stored ensemble member value, one row per run, variable, hour and member."
        }
        // One options struct for the four exports; each offers only the options it uses.
        return Command(
            name: kind.rawValue, abstract: abstract, options: Options.self, table: Options.table(kind),
            make: {
                var options = Options()
                options.kind = kind
                return options
            }
        ) { options, context in
            try run(kind, options, context)
        }
    }

    static func run(_ kind: ExportRequest.Kind, _ options: Options, _ context: Context) throws {
        var request = ExportRequest(kind: kind)
        request.format = options.format.format == .verif ? .verif : .csv
        let store = try options.database.open(context, access: .read)
        var timezone = "UTC"
        if options.location.name != nil {
            let location = try options.location.resolve(store)
            request.locationID = location.id
            timezone = location.timezone
        }
        let range = try options.range.resolve(timezone: timezone, now: context.nowUnix)
        (request.from, request.to) = (range.from, range.to)
        request.variables = options.variables
        request.model = options.model
        request.source = options.source

        if kind == .pairs && request.source == nil {
            // Say which observations the pairs use when wxdb chose them.
            let exporter = Exporter(store: store)
            for variable in request.variables.isEmpty ? ["temperature_2m"] : try Exporter.validate(request.variables) {
                for location in try exporter.pairSources(request, variable: variable) {
                    context.note(
                        "Pairs of \(variable) for \(location.name) use source \(location.source) (the best stored source that pairs with these forecasts; choose one with --source)"
                    )
                }
            }
        }
        context.flush()
        if request.format == .verif {
            try writeVerif(request, options, store: store, range: range, context)
            return
        }
        let output = try options.database.outputFile(options.output, context)
        // Nothing matched is an error, as in 'query': the header waits for the first row.
        let csv = CSVWriter(fileDescriptor: output.fd)
        csv.withholdsHeaderUntilFirstRow = true
        do {
            let rows = try Exporter(store: store).write(request, to: csv)
            guard rows > 0 else {
                throw CLIError(
                    "nothing to export: no \(kind == .observations ? "observations" : kind == .pairs ? "forecast/observation pairs" : kind == .members ? "ensemble runs" : "forecast runs") match\(options.location.name.map { " for \($0)" } ?? "") \(Query.Runs.rangeWords(range)); widen --from/--to or drop filters (see 'wxdb stats')"
                )
            }
            try output.commit()
            if let path = options.output { context.note("Wrote \(rows) rows to \(path)") }
        } catch {
            output.abandon()
            throw error
        }
    }

    /// verif compares systems as separate files, so each model gets its own: `--model` (or a location
    /// with one model) writes one file; several models need `--output-dir` or `{model}` in `--output`.
    /// Every file is written before any is kept, so a failure leaves none.
    static func writeVerif(
        _ request: ExportRequest, _ options: Options, store: any Store, range: TimeRange, _ context: Context
    ) throws {
        let location = try options.location.resolve(store)
        let models = try options.model.map { [$0] } ?? TrendQuery.models(store, location: location)
        let perModel = options.outputDirectory != nil || options.output?.contains("{model}") == true
        if models.count > 1 && !perModel {
            throw CLIError(
                "\(location.name) has runs of \(models.count) models (\(models.joined(separator: ", "))) and a verif file holds one: give --model M, --output-dir DIR (one file per model), or --output '\(location.name.lowercased())-{model}.txt'"
            )
        }
        if let folder = options.outputDirectory {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        var written: [(OutputFile, String?, Int)] = []
        do {
            for model in models.isEmpty ? [location.defaultModel] : models {
                var one = request
                one.model = model
                let path =
                    options.outputDirectory.map { PathText.join($0, "\(model).txt") }
                    ?? options.output?.replacing("{model}", with: model)
                let output = try options.database.outputFile(path, context)
                let csv = CSVWriter(fileDescriptor: output.fd)
                csv.withholdsHeaderUntilFirstRow = true
                let rows: Int
                do { rows = try Exporter(store: store).write(one, to: csv) } catch {
                    output.abandon()
                    throw error
                }
                if rows == 0 {
                    output.abandon()
                    if models.count > 1 { context.note("Note: no pairs of model \(model); no file for it") }
                    continue
                }
                written.append((output, path, rows))
            }
            guard !written.isEmpty else {
                throw CLIError(
                    "nothing to export: no forecast/observation pairs match for \(location.name)\(options.model.map { ", model \($0)" } ?? "") \(Query.Runs.rangeWords(range)); widen --from/--to or drop filters (see 'wxdb stats')"
                )
            }
            for (output, path, rows) in written {
                try output.commit()
                if let path { context.note("Wrote \(rows) rows to \(path)") }
            }
        } catch {
            for (output, _, _) in written { output.abandon() }
            throw error
        }
    }
}
