import FoundationEssentials
import WxCore
import WxStore

/// `wxdb copy --from A --to B`: a whole database into an empty one, between engines (see Store/StoreCopy.swift).
enum CopyCommand {
    struct Options: CommandOptions {
        var from: String?
        var to: String?
        var output = FormatOption()

        static var table: [Opt<Options>] {
            [
                .string(
                    "from", "db", "The database to copy: a SQLite path or a PostgreSQL URL / service (read only).",
                    required: true, \.from),
                .string(
                    "to", "db",
                    "The empty database to fill: a new SQLite path or a PostgreSQL URL / service with no wxdb rows.",
                    required: true, \.to)
            ] + FormatOption.options(\.output, [.table, .json])
        }
    }

    static var command: Command {
        Command(
            name: "copy",
            abstract: "Copy a whole database to another (SQLite to PostgreSQL, back, or SQLite to SQLite).",
            discussion: """
                Every location, run, hourly and daily row, observation, fetch-log entry, kept sum and ensemble
                member, with its ids, streamed row by row (memory stays flat) into an empty target in one
                transaction; every table's rows are counted on both sides before it commits. A copy that fails
                or is stopped leaves the target as it was (a SQLite file it created is removed). Use a passfile
                (~/.pgpass) or a service file for a PostgreSQL password, never a URL with one in it.
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let from = options.from!
        let to = options.to!
        if from == to { throw UsageError("--from and --to name the same database; copy needs two") }
        let source = try StoreEngines.open(
            from, create: false, busyTimeoutMilliseconds: Context.busyTimeoutMilliseconds, access: .read)
        guard let dump = source as? any StoreDump else {
            throw CLIError("this wxdb cannot read \(source.path) for a copy")
        }
        // A SQLite target the copy creates goes again when the copy fails: "as it was" is "not there".
        let newFile = PostgresTarget.conninfo(to) == nil && !FileManager.default.fileExists(atPath: to)
        var targetName: String?
        do {
            let target = try StoreEngines.open(
                to, create: true, busyTimeoutMilliseconds: Context.busyTimeoutMilliseconds, access: .write)
            targetName = target.path
            guard let load = target as? any StoreLoad else {
                throw CLIError("this wxdb cannot write \(target.path) for a copy")
            }
            let report = try StoreCopier.copy(from: dump, to: load) { table in
                if context.verbose { context.err("copying \(table)") }
            }
            render(report, from: dump.path, to: load.path, options, context)
        } catch {
            if newFile {
                for suffix in ["", "-wal", "-shm", "-journal"] {
                    try? FileManager.default.removeItem(atPath: to + suffix)
                }
            }
            // A failure mid-copy (a lost connection, a full disk) undid the whole transaction: say so.
            if let targetName, !(error is CopyError) {
                let message = userMessage(for: error)
                throw CLIError(
                    "\(message.hasSuffix(".") ? String(message.dropLast()) : message). The copy was undone: \(targetName) holds none of it; run wxdb copy again"
                )
            }
            throw error
        }
    }

    static func render(_ report: CopyReport, from: String, to: String, _ options: Options, _ context: Context) {
        let rows = report.lines.reduce(Int64(0)) { $0 + $1.target }
        if options.output.format == .json {
            let json = JSON.object([
                ("from", .string(from)), ("to", .string(to)), ("renumbered_ids", .bool(report.renumbered)),
                (
                    "tables",
                    .array(
                        report.lines.map {
                            .object([
                                ("table", .string($0.table)), ("source", .number(Double($0.source))),
                                ("target", .number(Double($0.target)))
                            ])
                        })
                )
            ])
            context.out(json.serialized() + "\n")
            return
        }
        var table = Table(headers: ["table", "source", "target"])
        table.rightAligned = [1, 2]
        for line in report.lines { table.rows.append([line.label, String(line.source), String(line.target)]) }
        context.out(table.render())
        let ids =
            report.renumbered
            ? "; run and fetch ids renumbered to be unique across locations, as SQLite keeps them"
            : "; ids kept"
        context.out("Copied \(from) to \(to): \(rows) rows, every table's count equal on both sides\(ids)\n")
    }
}
