// A `--db` (or `WXDB_DB`) that names a PostgreSQL server: a `postgres://` / `postgresql://` URI or
// libpq `keyword=value` text (`service=wxdb`). `doctor` checks it (server, login, schema, Citus
// placement); the other commands open the PostgreSQL engine behind the Store interface. A
// PostgreSQL URI is never taken for a SQLite path. Passwords never reach any output: every message names the server
// by `ConnectionString.redacted`.
import FoundationEssentials
import WxPostgres
import WxPostgresStore
import WxStore

enum PostgresTarget {
    /// The connection string when `text` names PostgreSQL, else nil (a SQLite path).
    static func conninfo(_ text: String) -> String? {
        if case .postgres(let conninfo) = DatabaseTarget(text) { return conninfo }
        return nil
    }

    /// Connects, or throws the connection's failure as an `Error:` line saying what to do.
    static func connect(_ conninfo: String) throws -> PostgresConnection {
        do {
            return try PostgresConnection(conninfo: conninfo)
        } catch let error as PostgresError {
            throw CLIError(error.description)
        }
    }

    /// Connects and opens the engine: a writing command applies pending migrations, a reading one
    /// only checks the schema; a foreign, newer or edited schema is refused, nothing written.
    static func open(_ conninfo: String, access: StoreAccess) throws -> any Store {
        do {
            return try PostgresEngine(
                conninfo: conninfo, migrate: access == .write, now: Int64(Date().timeIntervalSince1970))
        } catch let error as PostgresSchemaError {
            throw CLIError(error.description)
        } catch let error as PostgresError {
            throw CLIError(error.description)
        }
    }

    /// `wxdb doctor` on PostgreSQL: where, which server and client, the schema, the Citus placement.
    static func doctor(_ conninfo: String, _ args: DoctorCommand.Options, _ context: Context) throws {
        let db = try connect(conninfo)
        let checks = DoctorChecks()
        let check = checks.check
        check("database") { db.target }
        check("engine") { try PostgresSchema.engine(on: db) }
        check("libpq") { versionText(PostgresConnection.libraryVersion) + " (opened at the first connection)" }
        check("schema") {
            let pending = try PostgresSchema.pending(on: db)
            let applied = PostgresSchema.migrations.map(\.name).filter { !pending.contains($0) }
            guard let last = applied.last else {
                return "no wxdb schema yet: an empty database (the first command that stores creates it)"
            }
            return last + (pending.isEmpty ? " (current)" : " (\(pending.count) migration(s) to apply on next write)")
        }
        check("citus") {
            guard let distribution = try PostgresSchema.distribution(on: db) else { return "not installed" }
            if distribution.distributed.isEmpty && distribution.reference.isEmpty {
                return "installed; no wxdb table distributed yet"
            }
            return distribution.summary
        }
        // --deep: the kept sums against the stored pairs, and verify over whole days, as on SQLite.
        var sumsProblem: String?
        var runRowsProblem: String?
        if args.deep || args.repair {
            var store: (any Store)?
            // The hourly and daily rows have no foreign key to their run here (migration 0005):
            // rows whose run is gone are found (and with --repair deleted) by wxdb.
            check("run rows") {
                guard checks.problems.isEmpty else { return "not checked (fix the problems above first)" }
                let opened = try open(conninfo, access: args.repair ? .write : .read)
                store = opened
                guard let engine = opened as? PostgresEngine else { return "not checked: not the PostgreSQL engine" }
                return try runRowsResult(engine, repair: args.repair, problem: &runRowsProblem)
            }
            check("verification sums") {
                guard checks.problems.isEmpty else { return "not checked (fix the problems above first)" }
                let opened = try store ?? open(conninfo, access: args.repair ? .write : .read)
                store = opened
                if !args.repair, try opened.sumsPending() {
                    return
                        "not checked: the sums of data stored before this wxdb version are not added yet (any wxdb command that writes adds them)"
                }
                return try DoctorCommand.sumsResult(opened, repair: args.repair, problem: &sumsProblem)
            }
            if checks.problems.isEmpty, let store {
                check("verify by day") { try DoctorCommand.wholeDaysResult(store, problem: &sumsProblem) }
            }
        }
        let deepProblems = [runRowsProblem, sumsProblem].compactMap { $0 }
        try checks.print(
            args.output.format, path: db.target, ok: checks.problems.isEmpty && deepProblems.isEmpty, context)
        if checks.problems.isEmpty, !deepProblems.isEmpty { throw CLIError(deepProblems.joined(separator: "; ")) }
        if !checks.problems.isEmpty {
            throw CLIError(
                "the database has problems (\(checks.problems.joined(separator: "; "))). wxdb changed nothing")
        }
    }

    /// The "run rows" line of `doctor --deep`: hourly and daily rows whose run does not exist
    /// (orphans), which no wxdb command reads but which take space; with `repair` they are deleted.
    static func runRowsResult(_ engine: PostgresEngine, repair: Bool, problem: inout String?) throws -> String {
        let orphans = try engine.orphanRunRows(repair: repair)
        if orphans.runs.isEmpty { return "ok: every hourly and daily row belongs to a stored run" }
        let examples = orphans.runs.prefix(3).map { "location \($0.location) run \($0.run)" }.joined(separator: ", ")
        let counts =
            "\(orphans.hourlyRows) hourly and \(orphans.dailyRows) daily row(s) of \(orphans.runs.count) run(s) that do not exist (e.g. \(examples))"
        if repair { return "deleted " + counts }
        problem =
            counts
            + " are left over: no wxdb command reads them, but they take space. Run 'wxdb doctor --deep --repair' to delete them"
        return "ORPHANS: " + counts
    }

    /// 150018 → "15.18" (PostgreSQL's numbering since version 10).
    static func versionText(_ number: Int) -> String { "\(number / 10000).\(number % 10000)" }
}
