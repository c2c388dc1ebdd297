import FoundationEssentials
import WxCore
import WxSQLite
import WxStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A wxdb database: opened, checked against this build's migrations, migrated.
///
/// Every SQL statement wxdb runs is behind a named method of `Store` (or `DatabaseInspection`):
/// callers get values, or rows streamed to a visitor, and never see the connection. Like the
/// `Database` it owns, a `Store` is not `Sendable`: use it from one thread at a time (one store per
/// thread, or one serial owner); a second process or thread opens its own.
public final class SQLiteStore {
    let db: Database
    public var path: String { db.path }
    /// Why the database was opened read-only (for a reading command on a file the user cannot
    /// write), or nil when it is writable.
    public private(set) var readOnlyReason: String?
    /// Who keeps `verification_summaries` current for the write running now (see SumsScopes.swift):
    /// set only by `keeping(_:_:)`, which a bulk write wraps around what it writes.
    package internal(set) var sumsKeeping = SumsKeeping.eachWrite

    /// Why a database could not be opened, said so a user knows what to do.
    public enum OpenError: Error, CustomStringConvertible {
        case notADatabase(path: String)
        case cannotOpen(path: String, reason: String)
        case missing(path: String)
        case notWxdb(path: String)
        case notAFile(path: String, what: String)
        case readOnly(path: String, reason: String)

        public var description: String {
            switch self {
            case .notADatabase(let path):
                return
                    "\(path) is not a wxdb database (not SQLite, or damaged). wxdb did not change it; pass another --db, or run 'wxdb doctor --db \(path)' for details"
            case .cannotOpen(let path, let reason):
                return
                    "cannot open the database \(path): \(reason). Check the path and its permissions, or pass another --db"
            case .notWxdb(let path):
                return
                    "\(path) is a SQLite database, but not a wxdb one (it holds tables wxdb did not create). wxdb did not change it; pass another --db"
            case .notAFile(let path, let what):
                return
                    "--db \(path.isEmpty ? "''" : path) \(what); pass the path of a database file (it is created on first use)"
            case .readOnly(let path, let reason):
                return
                    "the database \(path) is read-only for you (\(reason)) and this command writes to it. Run it as the file's owner, or make the file and its folder writable; reading commands (query, export, stats, doctor) still work"
            case .missing(let path):
                return
                    "no database at \(path). Add a location with 'wxdb locations add' to create it, or pass the right --db"
            }
        }
    }

    /// What a command will do with the database.
    public typealias Access = StoreAccess

    /// Refuses a `--db` that cannot be a database file: empty, `:memory:` or a URI (nothing would be
    /// kept), a folder, a fifo (opening it would hang), a device or socket. A missing path is fine.
    public static func checkPath(_ path: String) throws {
        if path.isEmpty { throw OpenError.notAFile(path: path, what: "is empty") }
        if path == ":memory:" || path.hasPrefix("file:") {
            throw OpenError.notAFile(
                path: path, what: "names an in-memory or URI database, where nothing would be kept")
        }
        var info = stat()
        guard stat(path, &info) == 0 else { return }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return
        case S_IFDIR:
            throw OpenError.notAFile(
                path: path,
                what:
                    "is a folder, not a database file (did you mean \(PathText.join(path, "wxdb.sqlite"))?)"
            )
        case S_IFIFO: throw OpenError.notAFile(path: path, what: "is a named pipe (fifo), not a database file")
        default: throw OpenError.notAFile(path: path, what: "is a device or socket, not a database file")
        }
    }

    /// Why the user cannot write the database file or the folder its -wal/-shm files go in, or nil.
    public static func readOnlyReason(_ path: String) -> String? {
        let folder = PathText.folder(of: path)
        if access(path, W_OK) != 0 {
            return errno == EROFS ? "it is on a read-only file system" : "no write permission on the file"
        }
        if access(folder.isEmpty ? "." : folder, W_OK) != 0 {
            return errno == EROFS
                ? "it is on a read-only file system"
                : "no write permission on its folder \(folder.isEmpty ? "." : folder)"
        }
        return nil
    }

    /// Opens the database at `path`, creating it (and its folder) when `create` is true, and applies
    /// pending migrations. A file written by a newer wxdb, or not a database, is refused untouched.
    /// With `.read`, a file the user cannot write is opened read-only instead (see `readOnlyReason`).
    public static func open(
        path: String, create: Bool = true, busyTimeoutMilliseconds: Int32 = 5000,
        access mode: Access = .write
    ) throws -> SQLiteStore {
        try checkPath(path)
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) {
            guard create else { throw OpenError.missing(path: path) }
            let folder = PathText.folder(of: path)
            if !folder.isEmpty && !fm.fileExists(atPath: folder) {
                do {
                    try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
                } catch {
                    throw OpenError.cannotOpen(path: path, reason: "its folder \(folder) cannot be created")
                }
            }
        } else if let reason = readOnlyReason(path) {
            guard mode == .read else { throw OpenError.readOnly(path: path, reason: reason) }
            let store = SQLiteStore(
                db: try openForReading(path: path, busyTimeoutMilliseconds: busyTimeoutMilliseconds))
            store.readOnlyReason = reason
            return store
        }
        var options = Database.Options()
        options.walMode = false  // not before the migration check: a refused file must stay byte-for-byte
        options.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        let db: Database
        do {
            db = try Database(path: path, options: options)
        } catch let error as SQLiteError {
            throw error.isNotADatabase
                ? OpenError.notADatabase(path: path) : OpenError.cannotOpen(path: path, reason: error.message)
        }
        let migrator = Migrator(migrations: Schema.migrations)
        do {
            // Read once: every command opens the database, most find nothing to migrate.
            let records = try migrator.applied(in: db)
            try migrator.check(db, records: records)
            let applied = Set(records.map(\.name))
            // A SQLite file with no wxdb history but tables of its own belongs to someone else.
            if applied.isEmpty, (try db.scalarInt("SELECT count(*) FROM sqlite_schema") ?? 0) > 0 {
                throw OpenError.notWxdb(path: path)
            }
            let pending = migrator.migrations.contains { !applied.contains($0.name) }
            if try pending || db.scalarText("PRAGMA journal_mode") != "wal" {
                _ = try db.scalarText("PRAGMA journal_mode = WAL")
            }
            try db.execute("PRAGMA synchronous = NORMAL")
            if pending { try migrator.migrate(db, now: Int64(Date().timeIntervalSince1970)) }
            try Self.finishPendingWork(db)
        } catch let error as SQLiteError where error.isNotADatabase {
            throw OpenError.notADatabase(path: path)
        } catch let error as SQLiteError where error.isCantOpen || error.isReadOnly {
            // SQLite opens lazily: a read-only file system or folder shows here, when the -wal/-shm files cannot be made.
            let folder = PathText.folder(of: path)
            let where_ = folder.isEmpty ? "the current folder" : folder
            throw OpenError.cannotOpen(
                path: path,
                reason: FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder)
                    ? "SQLite could not open it or its -wal/-shm files (\(error.message))"
                    : "\(where_) is read-only (a read-only file system, or no write permission), and SQLite must write its -wal and -shm files beside the database"
            )
        }
        return SQLiteStore(db: db)
    }

    /// Opens an existing database without writing anything to it or beside it: through a read-only
    /// URI, and immutable when SQLite cannot make its -shm file (then a non-empty -wal, which only a
    /// writer can fold in, is refused rather than silently skipped). Checked against this build's
    /// migrations; a schema that still needs a migration is refused, since that needs a write.
    static func openForReading(path: String, busyTimeoutMilliseconds: Int32 = 5000, checkSchema: Bool = true) throws
        -> Database
    {
        var options = Database.Options.foreignReadOnly
        options.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        func attempt(_ immutable: Bool) throws -> Database {
            options.immutable = immutable
            let db = try Database(path: path, options: options)
            _ = try db.scalarInt("SELECT count(*) FROM sqlite_schema")
            return db
        }
        let db: Database
        do {
            do {
                db = try attempt(false)
            } catch let error as SQLiteError where error.isCantOpen || error.isReadOnly {
                if fileSize(path + "-wal") > 0 {
                    throw OpenError.cannotOpen(
                        path: path,
                        reason:
                            "its -wal file holds changes not yet folded into it, and reading them needs write access to its folder. Run any wxdb command as the file's owner once"
                    )
                }
                db = try attempt(true)
            }
        } catch let error as SQLiteError {
            throw error.isNotADatabase
                ? OpenError.notADatabase(path: path) : OpenError.cannotOpen(path: path, reason: error.message)
        }
        guard checkSchema else { return db }
        let migrator = Migrator(migrations: Schema.migrations)
        do {
            try migrator.check(db)
            if try migrator.applied(in: db).isEmpty { throw OpenError.notWxdb(path: path) }
            if let next = try migrator.pending(in: db).first {
                throw OpenError.cannotOpen(
                    path: path,
                    reason:
                        "it needs migration \(next) from this wxdb, which must write to it; run any wxdb command as the file's owner once"
                )
            }
        } catch let error as SQLiteError where error.isNotADatabase {
            throw OpenError.notADatabase(path: path)
        }
        return db
    }

    init(db: Database) { self.db = db }

    /// What migrations left to finish after they committed (sums to rebuild, rows to move), asked
    /// in one statement since every command opens the database and almost never finds any.
    static func finishPendingWork(_ db: Database) throws {
        let work = try db.firstRow(
            """
            SELECT EXISTS (SELECT 1 FROM verification_sums_pending), EXISTS (SELECT 1 FROM ensemble_sums_pending),
              EXISTS (SELECT 1 FROM migration_0012_pending), EXISTS (SELECT 1 FROM migration_0013_pending)
            """
        ) { row in (0..<4).map { row.int64($0) != 0 } }
        guard let work, work.contains(true) else { return }
        let store = SQLiteStore(db: db)
        if work[0] { try store.rebuildPendingSums() }
        if work[1] { try store.rebuildPendingEnsembleSums() }
        if work[2] { _ = try store.finishMigration0012() }
        if work[3] { _ = try store.finishMigration0013() }
    }

    /// Opens an existing, current database strictly read-only (nothing is migrated or written),
    /// for checks such as `wxdb doctor --deep`.
    public static func openReadOnly(path: String) throws -> SQLiteStore {
        SQLiteStore(db: try openForReading(path: path))
    }

    /// The name of the newest migration applied.
    public func schemaVersion() throws -> String? {
        try db.scalarText("SELECT max(name) FROM schema_migrations")
    }
}

/// The size of the file at `path`, 0 when there is none.
public func fileSize(_ path: String) -> Int64 {
    var info = stat()
    return stat(path, &info) == 0 ? Int64(info.st_size) : 0
}

/// The default database path: `$XDG_DATA_HOME/wxdb/wxdb.sqlite`, else `~/.local/share/wxdb/wxdb.sqlite`.
public func defaultDatabasePath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
        return xdg + "/wxdb/wxdb.sqlite"
    }
    let home =
        environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? FileManager.default.homeDirectoryForCurrentUser.path
    return home + "/.local/share/wxdb/wxdb.sqlite"
}

// Stated, not just implied: a store is used from one thread at a time (see `Store`).
@available(*, unavailable)
extension SQLiteStore: Sendable {}

/// The SQLite engine fills the interface every command uses.
extension SQLiteStore: Store {}
