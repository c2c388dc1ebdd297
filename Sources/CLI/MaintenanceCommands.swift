import Foundation
import WxCore
import WxQueries
import WxSQLite
import WxStore

enum PruneCommand {
    static var command: Command {
        Command(
            name: "prune",
            abstract: "Remove the hourly and daily rows of old runs, keeping their verification sums.",
            discussion: """
                Runs issued more than N days ago lose their hourly and daily rows after their forecast/observation
                pairs are folded into verification_summaries, so 'query verify' over those days gives the same n,
                bias, MAE, RMSE and correlation. The run list and the fetch log are kept. Persistence skill and
                non-default thresholds are not kept for pruned runs. The latest run of each location and model
                always keeps its rows, whatever its age: the next fetch continues or repeats it.
                """,
            options: [
                .option("keep-days", "n", "Keep the full rows of runs issued in the last N days."),
                .flag("dry-run", "Print what would be removed and change nothing."),
                .flag("vacuum", "Give the freed space back to the file system afterwards (rewrites the file)."),
            ],
            run: { args, context in
                guard let keep = try args.int("keep-days", in: 0...36500) else { throw UsageError("missing --keep-days") }
                let store = try context.openStore(create: false)
                if args.flag("dry-run") {
                    let plan = try Pruner.plan(store, keepDays: keep, now: context.nowUnix)
                    context.out("Would prune \(plan.runs) runs: \(plan.hourlyRows) hourly and \(plan.dailyRows) daily rows (nothing was changed)\n")
                    return
                }
                let before = fileSize(store.path)
                let result = try Pruner.prune(store, keepDays: keep, now: context.nowUnix)
                var line = "Pruned \(result.runs) runs: \(result.hourlyRows) hourly and \(result.dailyRows) daily rows removed, \(result.summaryRows) summary rows written"
                if args.flag("vacuum") {
                    try store.db.execute("VACUUM")
                    try store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                    line += "; file \(bytes(before)) -> \(bytes(fileSize(store.path)))"
                }
                context.note(line)
            }
        )
    }
}

func fileSize(_ path: String) -> Int64 {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? NSNumber)?.int64Value ?? 0
}

func bytes(_ count: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(count) B" : String(format: "%.1f %@", value, units[unit])
}

enum StatsCommand {
    static var command: Command {
        Command(
            name: "stats",
            abstract: "Show the database's size, rows per table, runs and fetches per location, and fetch gaps.",
            options: [
                .option("days", "n", "Look for gaps (hours without a successful fetch) in the last N days.", default: "7"),
                .option("format", "format", "table, csv (one row per location) or json."),
            ],
            run: { args, context in try run(args, context) }
        )
    }

    static let tables = ["locations", "forecast_runs", "fetch_log", "hourly_forecasts", "daily_forecasts", "observations", "verification_summaries"]

    static func run(_ args: ParsedArguments, _ context: Context) throws {
        let format = try context.format()
        let days = try args.int("days", in: 1...3650) ?? 7
        let store = try context.openStore(create: false)
        let db = store.db
        let now = context.nowUnix
        let since = now - Int64(days) * 86400
        var counts: [(String, Int64)] = []
        for table in tables { counts.append((table, try db.scalarInt("SELECT count(*) FROM \(table)") ?? 0)) }
        let size = fileSize(store.path) + fileSize(store.path + "-wal")

        struct PerLocation {
            var name: String, runs: Int64, fetches: Int64, repeated: Int64, failed: Int64, gapHours: Int, lastFetch: Int64?
        }
        var perLocation: [PerLocation] = []
        for location in try store.locations() {
            let id: [SQLValue] = [.integer(location.id)]
            let fetchHours = try db.rows(
                "SELECT DISTINCT attempted_at / 3600 FROM fetch_log WHERE location_id = ? AND origin = 'fetch' AND outcome != 'failed' AND attempted_at >= ?",
                id + [.integer(since)]) { $0.int64(0) }
            // A gap is an hour since the later of (N days ago, the location's creation) without a good fetch.
            let start = max(since, location.createdAt) / 3600 + 1
            let end = now / 3600
            let have = Set(fetchHours)
            let gaps = start <= end ? (start...end).filter { !have.contains($0) }.count : 0
            perLocation.append(PerLocation(
                name: location.name,
                runs: try db.scalarInt("SELECT count(*) FROM forecast_runs WHERE location_id = ?", id) ?? 0,
                fetches: try db.scalarInt("SELECT count(*) FROM fetch_log WHERE location_id = ?", id) ?? 0,
                repeated: try db.scalarInt("SELECT count(*) FROM fetch_log WHERE location_id = ? AND outcome = 'repeated'", id) ?? 0,
                failed: try db.scalarInt("SELECT count(*) FROM fetch_log WHERE location_id = ? AND outcome = 'failed'", id) ?? 0,
                gapHours: gaps,
                lastFetch: try db.scalarInt("SELECT max(attempted_at) FROM fetch_log WHERE location_id = ? AND outcome != 'failed'", id)))
        }

        if format == "json" {
            let json = JSON.object([
                ("path", .string(store.path)), ("bytes", .number(Double(size))),
                ("schema_version", .string(try store.schemaVersion())),
                ("tables", .object(counts.map { ($0.0, .number(Double($0.1))) })),
                ("gap_window_days", .number(Double(days))),
                ("locations", .array(perLocation.map { l in
                    .object([
                        ("name", .string(l.name)), ("runs", .number(Double(l.runs))), ("fetches", .number(Double(l.fetches))),
                        ("repeated_fetches", .number(Double(l.repeated))), ("failed_fetches", .number(Double(l.failed))),
                        ("gap_hours", .number(Double(l.gapHours))), ("last_fetch", l.lastFetch.map { .string(CivilTime.isoUTC($0)) } ?? .null),
                    ])
                })),
            ])
            context.out(json.serialized() + "\n")
            return
        }
        if format == "csv" {
            let csv = context.csvWriter()
            csv.header(["location", "runs", "fetches", "repeated_fetches", "failed_fetches", "gap_hours", "last_fetch"])
            for l in perLocation {
                csv.text(l.name)
                csv.integer(l.runs)
                csv.integer(l.fetches)
                csv.integer(l.repeated)
                csv.integer(l.failed)
                csv.integer(Int64(l.gapHours))
                if let last = l.lastFetch { csv.isoUTC(last) } else { csv.empty() }
                csv.endRow()
            }
            try csv.flush()
            return
        }
        context.out("database: \(store.path) (\(bytes(size)), schema \(try store.schemaVersion() ?? "none"))\n\n")
        var table = Table(headers: ["table", "rows"])
        table.rightAligned = [1]
        for (name, count) in counts { table.rows.append([name, String(count)]) }
        context.out(table.render() + "\n")
        var locations = Table(headers: ["location", "runs", "fetches", "repeated", "failed", "gap hours (\(days) d)", "last fetch (UTC)"])
        locations.rightAligned = [1, 2, 3, 4, 5]
        for l in perLocation {
            locations.rows.append([l.name, String(l.runs), String(l.fetches), String(l.repeated), String(l.failed), String(l.gapHours),
                                   l.lastFetch.map(CivilTime.isoUTC) ?? "never"])
        }
        if !perLocation.isEmpty { context.out(locations.render()) }
    }
}

enum DoctorCommand {
    static var command: Command {
        Command(
            name: "doctor",
            abstract: "Check the database: integrity, foreign keys, schema version, WAL size. Changes nothing.",
            run: { _, context in try run(context) }
        )
    }

    static func run(_ context: Context) throws {
        let path = context.databasePath
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError("no database at \(path); nothing to check. Pass the right --db, or create one with 'wxdb locations add'")
        }
        // Look before opening: a file that is not SQLite is reported, never touched.
        if let handle = FileHandle(forReadingAtPath: path) {
            let header = handle.readData(ofLength: 16)
            try? handle.close()
            if header.count > 0 && header != Data("SQLite format 3\u{0}".utf8) {
                throw CLIError("\(path) is not a SQLite database (its first bytes are not the SQLite header). wxdb did not change it. If it should be your wxdb database, restore it from a backup; otherwise pass the right --db")
            }
        }
        var options = Database.Options()
        options.create = false
        options.walMode = false
        let db: Database
        do {
            db = try Database(path: path, options: options)
        } catch let error as SQLiteError {
            throw CLIError("cannot open \(path): \(error.message). wxdb did not change it")
        }
        var problems: [String] = []
        func check(_ label: String, _ body: () throws -> String) {
            do {
                let result = try body()
                context.out(label.padding(toLength: 18, withPad: " ", startingAt: 0) + result + "\n")
            } catch {
                problems.append("\(label): \(error)")
                context.out(label.padding(toLength: 18, withPad: " ", startingAt: 0) + "FAILED: \(error)\n")
            }
        }
        check("file") { "\(path) (\(bytes(fileSize(path))))" }
        check("sqlite") { Database.libraryVersion }
        check("integrity") {
            let rows = try db.rows("PRAGMA integrity_check") { $0.string(0) }
            if rows == ["ok"] { return "ok" }
            problems.append("integrity_check: " + rows.prefix(5).joined(separator: "; "))
            return "DAMAGED: " + rows.prefix(5).joined(separator: "; ")
        }
        check("foreign keys") {
            let rows = try db.rows("PRAGMA foreign_key_check") { "\($0.string(0)) row \($0.int64(1))" }
            if rows.isEmpty { return "ok" }
            problems.append("foreign_key_check: \(rows.count) rows point nowhere")
            return "\(rows.count) rows point nowhere (e.g. \(rows[0]))"
        }
        check("schema") {
            let migrator = Migrator(migrations: Schema.migrations)
            let applied = try migrator.applied(in: db)
            if applied.isEmpty {
                problems.append("no wxdb schema")
                return "no wxdb migrations recorded: this is not a wxdb database"
            }
            do { try migrator.check(db) } catch {
                problems.append("\(error)")
                return "\(error)"
            }
            let pending = try migrator.pending(in: db)
            return "\(applied.last!.name)" + (pending.isEmpty ? " (current)" : " (\(pending.count) migration(s) to apply on next write)")
        }
        check("journal") { try db.scalarText("PRAGMA journal_mode") ?? "?" }
        check("wal") { "\(bytes(fileSize(path + "-wal"))) not yet checkpointed" }
        if !problems.isEmpty {
            throw CLIError("the database has problems (\(problems.joined(separator: "; "))). wxdb changed nothing. Keep a copy of the file before anything else; restore from a backup, or export what still reads with 'wxdb export'")
        }
    }
}
