import FoundationEssentials
import WxCore
import WxQueries
import WxStore
import WxStoreSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

enum PruneCommand {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var keepDays: Int?
        var dryRun = false
        var vacuum = false

        static var table: [Opt<Options>] {
            [
                .int(
                    "keep-days", "n", "Keep the full rows of runs issued in the last N days.", in: 0...36500,
                    required: true, \.keepDays),
                .flag("dry-run", "Print what would be removed and change nothing.", \.dryRun),
                .flag(
                    "vacuum", "Give the freed space back to the file system afterwards (rewrites the file).", \.vacuum)
            ]
                + DatabaseOption.options(\.database)
        }
    }

    static var command: Command {
        Command(
            name: "prune",
            abstract: "Remove the hourly and daily rows of old runs, keeping their verification sums.",
            discussion: """
                Runs issued more than N days ago lose their hourly and daily rows. Their forecast/observation pairs'
                sums are already in verification_summaries (kept as data is stored), so 'query verify' over those
                days gives the same scores. The run list and the fetch log are kept. Non-default thresholds are not
                kept for pruned runs. The latest run of each location and model always keeps its rows, whatever its
                age: the next fetch continues or repeats it.
                """,
            options: Options.self, run: run)
    }

    /// The ensemble part of prune's summary, said only when there is one.
    static func ensembleClause(_ runs: Int) -> String {
        runs > 0 ? ", and the members of \(runs) ensemble run\(runs == 1 ? "" : "s")" : ""
    }

    static func run(_ options: Options, _ context: Context) throws {
        let keep = options.keepDays!
        let store = try options.database.open(context)
        if options.dryRun {
            let plan = try Pruner.plan(store, keepDays: keep, now: context.nowUnix)
            context.out(
                "Would prune \(plan.runs) runs: \(plan.hourlyRows) hourly and \(plan.dailyRows) daily rows\(ensembleClause(plan.ensembleRuns)) (nothing was changed)\n"
            )
            return
        }
        let before = fileSize(store.path)
        func summary(_ result: PruneResult) -> String {
            "Pruned \(result.runs) runs: \(result.hourlyRows) hourly and \(result.dailyRows) daily rows removed\(ensembleClause(result.ensembleRuns)) (their verification sums are kept)"
        }
        let result: PruneResult
        do {
            result = try Pruner.prune(store, keepDays: keep, now: context.nowUnix)
        } catch let failure as Pruner.Failure {
            throw CLIError(
                "prune stopped partway. \(summary(failure.done)) before it failed; those runs stay pruned with their sums kept. The rest failed: \(reason(failure.underlying)); run it again to finish"
            )
        }
        var line = summary(result)
        guard options.vacuum else {
            context.note(line)
            return
        }
        // VACUUM rewrites a database file: an operation of the SQLite engine, not of every store.
        guard let file = store as? SQLiteStore else {
            throw CLIError("\(line). --vacuum applies to a SQLite database file only; this store is not one")
        }
        if let refusal = vacuumRefusal(
            databaseBytes: before, walBytes: fileSize(store.path + "-wal"),
            freeBytes: file.freeBytesBeside(), keepDays: keep)
        {
            throw CLIError("\(line). \(refusal)")
        }
        let vacuumed: VacuumResult
        do {
            vacuumed = try file.vacuum(busyTimeoutMilliseconds: Context.busyTimeoutMilliseconds)
        } catch {
            throw CLIError("\(line). VACUUM failed: \(reason(error)); the database is as the prune left it")
        }
        line += "; file \(bytes(before)) -> \(bytes(fileSize(store.path)))"
        if vacuumed.walKept {
            line +=
                "; another reader kept the -wal file (\(bytes(vacuumed.walBytes))) from being folded back, so the file shrinks at the next checkpoint after that reader finishes (the next wxdb write does it)"
        }
        context.note(line)
    }

    /// Why VACUUM should not start, or nil. It writes a new copy of the whole database (into the
    /// -wal) before the old pages go: without that much room it would fail at the end, after
    /// minutes of work.
    static func vacuumRefusal(databaseBytes: Int64, walBytes: Int64, freeBytes: Int64?, keepDays: Int) -> String? {
        let needed = databaseBytes + walBytes
        guard let freeBytes, freeBytes < needed else { return nil }
        return
            "Did not VACUUM: it needs about \(bytes(needed)) free beside the database and \(bytes(freeBytes)) is free; the freed pages are reused by new data anyway. Free some space and run 'wxdb prune --keep-days \(keepDays) --vacuum' again"
    }

    /// Why a step failed, without the general "nothing was stored" of a failed command: what
    /// prune did before the failure is said beside it.
    static func reason(_ error: Error) -> String {
        if isDiskFull(error) { return "the disk is full; free some space" }
        return userMessage(for: error)
    }
}

func bytes(_ count: Int64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"]
    var value = Double(count)
    var unit = 0
    while value >= 1024 && unit < units.count - 1 {
        value /= 1024
        unit += 1
    }
    return unit == 0 ? "\(count) B" : String(printf: "%.1f", value) + " " + units[unit]
}

enum StatsCommand {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var days: Int?
        var output = FormatOption()

        static var table: [Opt<Options>] {
            [
                .int(
                    "days", "n", "Look for gaps (hours without a successful fetch) in the last N days.", in: 1...3650,
                    default: "7", \.days)
            ]
                + FormatOption.options(\.output, help: "table, csv (one row per location) or json.")
                + DatabaseOption.options(\.database)
        }
    }

    static var command: Command {
        Command(
            name: "stats",
            abstract: "Show the database's size, rows per table, runs and fetches per location, and fetch gaps.",
            discussion: """
                Reads what each location has, not every row of the file: the hourly and daily row counts are summed
                from the runs' own counts (marked *), so stats stays quick on a database of many gigabytes.
                """,
            options: Options.self, run: run)
    }

    static func run(_ options: Options, _ context: Context) throws {
        let days = options.days ?? 7
        let store = try options.database.open(context, access: .read)
        let now = context.nowUnix
        let since = now - Int64(days) * 86400
        let counts = try store.tableCounts()
        let size = try store.databaseBytes()

        struct PerLocation {
            var name: String, runs: Int64, fetches: Int64, repeated: Int64, failed: Int64, gapHours: Int,
                lastFetch: Int64?
        }
        var perLocation: [PerLocation] = []
        let activities = try store.activities()
        for location in try store.locations() {
            let fetchHours = try store.fetchedHours(locationID: location.id, since: since)
            // A gap is an hour since the later of (N days ago, the location's creation) without a good fetch.
            let start = max(since, location.createdAt) / 3600 + 1
            let end = now / 3600
            let have = Set(fetchHours)
            let gaps = start <= end ? (start...end).filter { !have.contains($0) }.count : 0
            let activity = activities[location.id] ?? .none
            perLocation.append(
                PerLocation(
                    name: location.name, runs: Int64(activity.runs), fetches: Int64(activity.fetches),
                    repeated: Int64(activity.repeated), failed: Int64(activity.failed), gapHours: gaps,
                    lastFetch: activity.lastFetch))
        }

        var report = Report(columns: [
            .init("location", .text, json: "name"), .init("runs", .integer), .init("fetches", .integer),
            .init("repeated_fetches", .integer, label: "repeated"), .init("failed_fetches", .integer, label: "failed"),
            .init("gap_hours", .integer, label: "gap hours (\(days) d)"),
            .init("last_fetch", .time, label: "last fetch (UTC)") { cell in
                if case .time(let instant?) = cell { return CivilTime.isoUTC(instant) }
                return "never"
            }
        ])
        report.rows = perLocation.map { l in
            [
                .text(l.name), .integer(l.runs), .integer(l.fetches), .integer(l.repeated), .integer(l.failed),
                .int(l.gapHours), .time(l.lastFetch)
            ]
        }
        switch options.output.format {
        case .json:
            let json = JSON.object([
                ("path", .string(store.path)), ("bytes", .number(Double(size))),
                ("schema_version", .string(try store.schemaVersion())),
                ("tables", .object(counts.map { ($0.0, .number(Double($0.1))) })),
                ("counted_from_runs", .array(store.tablesCountedFromRuns.map { .string($0) })),
                ("gap_window_days", .number(Double(days))),
                ("locations", .array(report.rows.map(report.jsonRow)))
            ])
            context.out(json.serialized() + "\n")
        case .csv:
            try report.writeCSV(context.csvWriter())
        default:
            context.out("database: \(store.path) (\(bytes(size)), schema \(try store.schemaVersion() ?? "none"))\n\n")
            var table = Table(headers: ["table", "rows"])
            table.rightAligned = [1]
            for (name, count) in counts {
                table.rows.append([name + (store.tablesCountedFromRuns.contains(name) ? " *" : ""), String(count)])
            }
            context.out(
                table.render()
                    + "* summed from the runs' own hour and day counts (counting these rows would read the whole file)\n\n"
            )
            if !perLocation.isEmpty { context.out(report.table()) }
        }
    }
}

/// The doctor's report as its checks run (on SQLite here, on PostgreSQL in PostgresTarget): each
/// check is a labelled result line, and one that throws is a problem, shown as FAILED.
final class DoctorChecks {
    /// What is wrong: the failed checks, and what checks found.
    var problems: [String] = []
    private var report = Report(columns: [.init("check", .text), .init("result", .text)])

    func check(_ label: String, _ body: () throws -> String) {
        do {
            report.rows.append([.text(label), .text(try body())])
        } catch {
            problems.append("\(label): \(error)")
            report.rows.append([.text(label), .text("FAILED: \(error)")])
        }
    }

    /// `json`: `{path, ok, checks}`; otherwise one line per check behind an aligned label (easier to
    /// read than a two-column table here).
    func print(_ format: OutputFormat, path: String, ok: Bool, _ context: Context) throws {
        if format == .json {
            report.meta = [("path", .string(path)), ("ok", .bool(ok))]
            report.rowsKey = "checks"
            try report.render(.json, context)
            return
        }
        for row in report.rows {
            guard case .text(let label?) = row[0], case .text(let result?) = row[1] else { continue }
            context.out(padded(label, to: 18) + result + "\n")
        }
    }
}

enum DoctorCommand {
    struct Options: CommandOptions {
        var database = DatabaseOption()
        var output = FormatOption()
        var deep = false
        var repair = false
        var quick = false
        static var table: [Opt<Options>] {
            [
                .flag(
                    "quick",
                    "For large files: SQLite's quick_check (each page read once) instead of integrity_check, and no foreign-key check of the hourly and daily rows.",
                    \.quick),
                .flag(
                    "deep",
                    "Also recompute the verification sums from the stored rows and compare them with the kept ones (reads every pair).",
                    \.deep),
                .flag(
                    "repair", "With --deep: rewrite the sums that differ from the rows (the only change doctor makes).",
                    \.repair)
            ]
                + FormatOption.options(\.output, [.table, .json]) + DatabaseOption.options(\.database)
        }
    }

    static var command: Command {
        Command(
            name: "doctor",
            abstract:
                "Check the database: integrity, foreign keys, schema version, WAL size (--deep: verification sums). Changes nothing unless --repair (but removes killed writers' partial files).",
            discussion: """
                --deep recomputes, for every location, model, source, variable, lead bucket and local day, the
                partial sums query verify reads, from the stored forecast and observation rows, and compares them
                with verification_summaries. Days that pruned runs had forecasts for cannot be recomputed (their
                rows are gone) and are counted as not checkable. Differences exit 1; --deep --repair rewrites those
                groups from the rows.
                """,
            options: Options.self, run: run)
    }

    /// The checks that read every page (integrity, foreign keys), or with `quick` the cheaper
    /// ones: on a file of many gigabytes the full ones take minutes (docs/SCALING.md has figures).
    /// Returns the problems found.
    static func checkPages(_ db: DatabaseInspection, quick: Bool, check: (String, () throws -> String) -> Void)
        -> [String]
    {
        var found: [String] = []
        check(quick ? "integrity (quick)" : "integrity") {
            let rows = try quick ? db.quickCheck() : db.integrityCheck()
            if rows == ["ok"] { return "ok" }
            found.append((quick ? "quick_check: " : "integrity_check: ") + rows.prefix(5).joined(separator: "; "))
            return "DAMAGED: " + rows.prefix(5).joined(separator: "; ")
        }
        check("foreign keys") {
            let rows = try quick ? db.foreignKeyProblemsOutsideRowTables() : db.foreignKeyProblems()
            let skipped = quick ? " (hourly and daily rows not checked: --quick)" : ""
            if rows.isEmpty { return "ok" + skipped }
            found.append("foreign_key_check: \(rows.count) rows point nowhere")
            return "\(rows.count) rows point nowhere (e.g. \(rows[0]))" + skipped
        }
        return found
    }

    /// The "verification sums" line of `doctor --deep` on either engine: the kept sums compared with
    /// (with `repair`, rewritten from) the stored pairs' sums; a difference also sets `problem`.
    static func sumsResult(_ store: any Store, repair: Bool, problem: inout String?) throws -> String {
        let result = try store.checkSums(repair: repair)
        // The ensembles' part first: a difference in the pairs' sums then names the problem.
        let ensembles = try ensembleSumsResult(store, repair: repair, problem: &problem)
        return sumsSentence(result, .pairs, repair: repair, problem: &problem) + ensembles
    }

    /// The ensemble part of the "verification sums" line (empty where no ensemble is stored): the kept
    /// ensemble sums against every stored member's (with `repair`, the differing groups rewritten from
    /// the members); a difference left sets `problem`.
    static func ensembleSumsResult(_ store: any Store, repair: Bool, problem: inout String?) throws -> String {
        guard let auditable = store as? any EnsembleSumsAuditable else { return "" }
        let result = try auditable.checkEnsembleSums(repair: repair)
        guard result.checked + result.notCheckable > 0 else { return "" }
        return sumsSentence(result, .ensembles, repair: repair, problem: &problem)
    }

    /// The words that differ between the two parts of the "verification sums" line.
    struct SumsWording {
        /// Before the sentence, and before its "ok: " (only the pairs' part says it).
        var lead: String
        var ok: String
        /// What the sums are checked against ("rows", "members").
        var source: String
        /// What the problem calls a group ("verification sum", "ensemble sum").
        var group: String
        /// Where verify may answer wrongly.
        var wrongWhere: String
        /// Around the count of groups that cannot be checked (said only when there are some).
        var notCheckable: (before: String, after: String)

        static let pairs = SumsWording(
            lead: "", ok: "ok: ", source: "rows", group: "verification sum", wrongWhere: "there",
            notCheckable: ("; ", " group(s) not checkable (pruned runs had pairs in them; their rows are gone)"))
        static let ensembles = SumsWording(
            lead: "; ensembles: ", ok: "", source: "members", group: "ensemble sum", wrongWhere: "for that ensemble",
            notCheckable: (", ", " not checkable (pruned runs' members are gone; their cases live only in the sums)"))
    }

    /// One part of the "verification sums" line: ok, repaired or DIFFERENT, then the groups not
    /// checkable; DIFFERENT also sets `problem`.
    static func sumsSentence(_ result: SumsCheck, _ words: SumsWording, repair: Bool, problem: inout String?)
        -> String
    {
        let skipped =
            result.notCheckable > 0
            ? words.notCheckable.before + "\(result.notCheckable)" + words.notCheckable.after : ""
        if result.differing.isEmpty {
            return "\(words.lead)\(words.ok)\(result.checked) group(s) match the \(words.source)" + skipped
        }
        let examples = result.differing.prefix(3).joined(separator: "; ")
        if repair {
            return
                "\(words.lead)repaired \(result.repaired) of \(result.checked) group(s) from the \(words.source) (e.g. \(examples))"
                + skipped
        }
        problem =
            "\(result.differing.count) of \(result.checked) \(words.group) group(s) differ from the stored \(words.source) (e.g. \(examples)), so query verify may answer wrongly \(words.wrongWhere). Run 'wxdb doctor --deep --repair' to recompute them from the \(words.source)"
        return "\(words.lead)DIFFERENT: \(result.differing.count) of \(result.checked) group(s) (e.g. \(examples))"
            + skipped
    }

    /// The "verify by day" line of `doctor --deep`: verify over whole local days counts the pairs the
    /// kept sums hold; a difference also sets (or adds to) `problem`.
    static func wholeDaysResult(_ store: any Store, problem sumsProblem: inout String?) throws -> String {
        if try store.sumsPending() { return "not checked: the sums of older data are not added yet" }
        let result = try VerifyQuery.checkWholeDays(store)
        guard !result.differing.isEmpty else {
            return result.checked == 0
                ? "ok: every kept day is a local day of its location's zone"
                : "ok: \(result.checked) day(s) where kept sums of an earlier zone's days overlap answer as kept"
        }
        let examples = result.differing.prefix(3).joined(separator: "; ")
        sumsProblem =
            (sumsProblem.map { $0 + "; " } ?? "")
            + "query verify over \(result.differing.count) whole local day(s) counts other pairs than the kept sums hold (e.g. \(examples)); this is a wxdb bug, report it"
        return "DIFFERENT: \(result.differing.count) of \(result.checked) day(s) (e.g. \(examples))"
    }

    static func run(_ args: Options, _ context: Context) throws {
        let path = args.database.path(context)
        if let conninfo = PostgresTarget.conninfo(path) { return try PostgresTarget.doctor(conninfo, args, context) }
        try SQLiteStore.checkPath(path)
        guard FileManager.default.fileExists(atPath: path) else {
            throw CLIError(
                "no database at \(path); nothing to check. Pass the right --db, or create one with 'wxdb locations add'"
            )
        }
        // Look before opening: a file that is not SQLite is reported, never touched.
        var header = [UInt8](repeating: 0, count: 20)
        let handle = open(path, O_RDONLY | O_CLOEXEC)
        if handle >= 0 {
            let count = read(handle, &header, 20)
            close(handle)
            if count > 0 && (count < 16 || Array(header.prefix(16)) != Array("SQLite format 3\u{0}".utf8)) {
                throw CLIError(
                    "\(path) is not a SQLite database (its first bytes are not the SQLite header). wxdb did not change it. If it should be your wxdb database, restore it from a backup; otherwise pass the right --db"
                )
            }
        }
        // Read-only, so checking never changes the file; and a file the user may only read is
        // checked like any other, not called damaged.
        let db: DatabaseInspection
        do {
            db = try DatabaseInspection(path: path)
        } catch let error as SQLiteStore.OpenError {
            if case .notADatabase = error {
                throw CLIError(
                    "\(path) is damaged or not a SQLite database: SQLite cannot read its schema. wxdb did not change it. Keep a copy of the file before anything else; restore from a backup"
                )
            }
            throw CLIError("\(error). wxdb did not change it")
        }
        if let reason = SQLiteStore.readOnlyReason(path) {
            context.note("Note: \(path) is read-only for you (\(reason)); checking it without changing anything")
        }
        let checks = DoctorChecks()
        let check = checks.check
        check("file") { "\(path) (\(bytes(fileSize(path))))" }
        check("sqlite") { DatabaseInspection.sqliteVersion }
        // The one thing doctor removes: temporary outputs of this user's killed wxdb (SIGKILL, a
        // crash) beside the database and in the current folder, never a live writer's.
        check("partial files") {
            let folders = Set([PathText.folder(of: path), "."].map { $0.isEmpty ? "." : $0 })
            let removed = folders.sorted().flatMap { folder in
                PartialFiles.removeStale(in: folder).map { PathText.join(folder, $0) }
            }
            if removed.isEmpty { return "none left by killed writers" }
            return "removed \(removed.count) left by killed writers (\(removed.prefix(3).joined(separator: ", ")))"
        }
        let pageProblems = checkPages(db, quick: args.quick, check: check)
        checks.problems += pageProblems
        check("schema") {
            let applied = try db.appliedMigrations()
            if applied.isEmpty {
                checks.problems.append("no wxdb schema")
                return "no wxdb migrations recorded: this is not a wxdb database"
            }
            do { try db.checkMigrations() } catch {
                checks.problems.append("\(error)")
                return "\(error)"
            }
            let pending = try db.pendingMigrations()
            return "\(applied.last!)"
                + (pending.isEmpty ? " (current)" : " (\(pending.count) migration(s) to apply on next write)")
        }
        // From the header (bytes 18-19 are 2 in WAL mode): a read-only or immutable connection reports
        // its own journal mode, not the file's.
        check("journal") { header[18] == 2 && header[19] == 2 ? "wal" : try db.journalMode() ?? "?" }
        check("wal") { "\(bytes(fileSize(path + "-wal"))) not yet checkpointed" }
        var sumsProblem: String?
        if args.deep || args.repair {
            check("verification sums") {
                guard checks.problems.isEmpty else { return "not checked (fix the problems above first)" }
                let store: any Store
                if args.repair {
                    store = try SQLiteStore.open(path: path, create: false)
                } else {
                    store = try SQLiteStore.openReadOnly(path: path)
                    if try store.sumsPending() {
                        return
                            "not checked: the sums of data stored before this wxdb version are not added yet (any wxdb command that writes adds them)"
                    }
                }
                return try sumsResult(store, repair: args.repair, problem: &sumsProblem)
            }
        }
        if (args.deep || args.repair) && checks.problems.isEmpty {
            // After the sums: a repair may have changed what verify reads.
            check("verify by day") {
                try wholeDaysResult(try SQLiteStore.openReadOnly(path: path), problem: &sumsProblem)
            }
        }
        try checks.print(args.output.format, path: path, ok: checks.problems.isEmpty && sumsProblem == nil, context)
        if checks.problems.isEmpty, let sumsProblem { throw CLIError(sumsProblem) }
        if !checks.problems.isEmpty {
            throw CLIError(
                "the database has problems (\(checks.problems.joined(separator: "; "))). wxdb changed nothing. Keep a copy of the file before anything else; restore from a backup, or export what still reads with 'wxdb export'"
            )
        }
    }
}
