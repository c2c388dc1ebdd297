import Foundation
import WxCore
import WxQueries
import WxStore

enum ExportCommand {
    static var command: Command {
        Command(
            name: "export",
            abstract: "Write stored runs, observations or forecast/observed pairs as CSV.",
            discussion: """
                CSV is RFC 4180 (header row, CRLF, UTF-8) with ISO 8601 UTC times; a missing value is an
                empty cell. --from/--to (both inclusive) select runs by issued_at (hourly, daily), observations
                by time, and pairs by valid_time; bare dates are in the location's time zone (UTC without --location).
                """,
            subcommands: ExportRequest.Kind.allCases.map(subcommand)
        )
    }

    static func subcommand(_ kind: ExportRequest.Kind) -> Command {
        let abstract: String
        switch kind {
        case .hourly: abstract = "Every stored hour of every run (negative leads too)."
        case .daily: abstract = "Every stored day of every run."
        case .observations: abstract = "Stored observations."
        case .pairs: abstract = "Each run's forecast beside the observation at its valid time."
        }
        var options: [OptionSpec] = [
            .option("location", "name", "Only this location."),
            .option("from", "time", "Start of the time range (inclusive)."),
            .option("to", "time", "End of the time range, inclusive (a bare date includes that whole day)."),
            .option("output", "file", "Write to this file instead of stdout (replaced only when the export completes)."),
            .option("var", "variable", kind == .pairs ? "Variable to pair." : "Only these variables' columns.", repeatable: true,
                    default: kind == .pairs ? "temperature_2m" : "all"),
        ]
        if kind != .observations { options.append(.option("model", "model", "Only this model.")) }
        if kind == .pairs || kind == .observations {
            options.append(.option("source", "name", "Observation source.", default: kind == .pairs ? "the location's best source" : "all"))
        }
        options.append(.option("format", "format", kind == .pairs ? "csv, or verif (the verif tool's text format)." : "csv.", default: "csv"))
        return Command(name: kind.rawValue, abstract: abstract, options: options) { args, context in
            try run(kind, args, context)
        }
    }

    static func run(_ kind: ExportRequest.Kind, _ args: ParsedArguments, _ context: Context) throws {
        var request = ExportRequest(kind: kind)
        switch args.value("format") ?? "csv" {
        case "csv": request.format = .csv
        case "verif" where kind == .pairs: request.format = .verif
        case let other: throw UsageError("--format must be csv\(kind == .pairs ? " or verif" : ""), not '\(other)'")
        }
        let store = try context.openStore(create: false)
        var timezone = "UTC"
        if let name = args.value("location") {
            let location = try store.requireLocation(named: name)
            request.locationID = location.id
            timezone = location.timezone
        }
        (request.from, request.to) = try TimeInput.range(args, timezone: timezone, now: context.nowUnix)
        request.variables = args.values("var")
        request.model = args.value("model")
        request.source = args.value("source")
        if request.format == .verif && request.locationID == nil {
            throw UsageError("--format verif needs --location")
        }

        if kind == .pairs && request.source == nil {
            // Say which observations the pairs use when wxdb chose them.
            let exporter = Exporter(store: store)
            for variable in request.variables.isEmpty ? ["temperature_2m"] : try Exporter.validate(request.variables) {
                for location in try exporter.pairSources(request, variable: variable) {
                    context.note("Pairs of \(variable) for \(location.name) use source \(location.source) (the best stored source that pairs with these forecasts; choose one with --source)")
                }
            }
        }
        context.flush()
        let output = try OutputFile(path: args.value("output"), stdout: context.stdoutFD)
        let csv = CSVWriter(fileDescriptor: output.fd)
        do {
            let rows = try Exporter(store: store).write(request, to: csv)
            try output.commit()
            if let path = args.value("output") { context.note("Wrote \(rows) rows to \(path)") }
        } catch {
            output.abandon()
            throw error
        }
    }
}

/// stdout, or a file written beside its final path and renamed into place on success, so a failed
/// export never leaves a half-written file where a complete one was.
final class OutputFile {
    let fd: Int32
    let path: String?
    let temporary: String?

    init(path: String?, stdout: Int32) throws {
        self.path = path
        guard let path else {
            fd = stdout
            temporary = nil
            return
        }
        let temporary = path + ".wxdb-partial-\(getpid())"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else {
            throw CLIError("cannot write \(path): \(String(cString: strerror(errno))). Check the folder exists and is writable")
        }
        self.fd = fd
        self.temporary = temporary
    }

    func commit() throws {
        guard let path, let temporary else { return }
        if fsync(fd) != 0 || close(fd) != 0 {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CLIError("cannot write \(path): \(reason)")
        }
        guard rename(temporary, path) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw CLIError("cannot write \(path): \(reason)")
        }
    }

    func abandon() {
        guard let temporary else { return }
        close(fd)
        unlink(temporary)
    }
}
