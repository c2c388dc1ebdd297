// A `--db` (or `WXDB_DB`) that names a PostgreSQL server: a `postgres://` / `postgresql://` URI or
// libpq `keyword=value` text (`service=wxdb`). `doctor` checks it (server, login, schema, Citus
// placement); the other commands connect, check the schema and then refuse, saying so, until the
// PostgreSQL engine stands behind the Store interface (issue #30's next step): a PostgreSQL URI is
// never taken for a SQLite path. Passwords never reach any output: every message names the server
// by `ConnectionString.redacted`.
import WxPostgres
import WxPostgresStore

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

    /// For every command but doctor: checks the server and the schema (so a wrong password or a
    /// foreign database is named as such), then refuses; nothing is written.
    static func refuse(_ conninfo: String) throws -> Never {
        let db = try connect(conninfo)
        do {
            try PostgresSchema.check(db)
        } catch let error as PostgresSchemaError {
            throw CLIError(error.description)
        } catch let error as PostgresError {
            throw CLIError(error.description)
        }
        throw CLIError(
            "\(db.target) is a PostgreSQL database; this wxdb checks PostgreSQL with 'wxdb doctor' but does not store or read there yet (the engine is issue #30's next step). Nothing was changed; use a SQLite --db for this command"
        )
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
        if args.deep || args.repair {
            check("verification sums") { "not checked: doctor --deep does not read PostgreSQL yet (issue #30)" }
        }
        try checks.print(args.output.format, path: db.target, ok: checks.problems.isEmpty, context)
        if !checks.problems.isEmpty {
            throw CLIError(
                "the database has problems (\(checks.problems.joined(separator: "; "))). wxdb changed nothing")
        }
    }

    /// 150018 → "15.18" (PostgreSQL's numbering since version 10).
    static func versionText(_ number: Int) -> String { "\(number / 10000).\(number % 10000)" }
}
