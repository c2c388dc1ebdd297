import Foundation
import WxCore
import WxSQLite

/// A wxdb database: opened, checked against this build's migrations, migrated.
///
/// Every SQL statement wxdb runs is behind a named method of `Store` (or `DatabaseInspection`):
/// callers get values, or rows streamed to a visitor, and never see the connection. Like the
/// `Database` it owns, a `Store` is not `Sendable`: use it from one thread at a time (one store per
/// thread, or one serial owner); a second process or thread opens its own.
public final class Store {
    let db: Database
    public var path: String { db.path }

    /// Why a database could not be opened, said so a user knows what to do.
    public enum OpenError: Error, CustomStringConvertible {
        case notADatabase(path: String)
        case cannotOpen(path: String, reason: String)
        case missing(path: String)
        case notWxdb(path: String)

        public var description: String {
            switch self {
            case .notADatabase(let path):
                return "\(path) is not a wxdb database (not SQLite, or damaged). wxdb did not change it; pass another --db, or run 'wxdb doctor --db \(path)' for details"
            case .cannotOpen(let path, let reason):
                return "cannot open the database \(path): \(reason). Check the path and its permissions, or pass another --db"
            case .notWxdb(let path):
                return "\(path) is a SQLite database, but not a wxdb one (it holds tables wxdb did not create). wxdb did not change it; pass another --db"
            case .missing(let path):
                return "no database at \(path). Add a location with 'wxdb locations add' to create it, or pass the right --db"
            }
        }
    }

    /// Opens the database at `path`, creating it (and its folder) when `create` is true, and applies
    /// pending migrations. A file written by a newer wxdb, or not a database, is refused untouched.
    public static func open(path: String, create: Bool = true, busyTimeoutMilliseconds: Int32 = 5000) throws -> Store {
        let fm = FileManager.default
        if !fm.fileExists(atPath: path) {
            guard create else { throw OpenError.missing(path: path) }
            let folder = (path as NSString).deletingLastPathComponent
            if !folder.isEmpty && !fm.fileExists(atPath: folder) {
                do {
                    try fm.createDirectory(atPath: folder, withIntermediateDirectories: true)
                } catch {
                    throw OpenError.cannotOpen(path: path, reason: "its folder \(folder) cannot be created")
                }
            }
        }
        var options = Database.Options()
        options.walMode = false  // not before the migration check: a refused file must stay byte-for-byte
        options.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        let db: Database
        do {
            db = try Database(path: path, options: options)
        } catch let error as SQLiteError {
            throw error.isNotADatabase ? OpenError.notADatabase(path: path) : OpenError.cannotOpen(path: path, reason: error.message)
        }
        let migrator = Migrator(migrations: Schema.migrations)
        do {
            try migrator.check(db)
            // A SQLite file with no wxdb history but tables of its own belongs to someone else.
            if try migrator.applied(in: db).isEmpty, (try db.scalarInt("SELECT count(*) FROM sqlite_schema") ?? 0) > 0 {
                throw OpenError.notWxdb(path: path)
            }
            if try migrator.pending(in: db).isEmpty == false || (try db.scalarText("PRAGMA journal_mode")) != "wal" {
                _ = try db.scalarText("PRAGMA journal_mode = WAL")
            }
            try db.execute("PRAGMA synchronous = NORMAL")
            try migrator.migrate(db, now: Int64(Date().timeIntervalSince1970))
        } catch let error as SQLiteError where error.isNotADatabase {
            throw OpenError.notADatabase(path: path)
        } catch let error as SQLiteError where error.isCantOpen || error.isReadOnly {
            // SQLite opens lazily: a read-only file system or folder shows here, when the -wal/-shm files cannot be made.
            let folder = (path as NSString).deletingLastPathComponent
            let where_ = folder.isEmpty ? "the current folder" : folder
            throw OpenError.cannotOpen(path: path, reason: FileManager.default.isWritableFile(atPath: folder.isEmpty ? "." : folder)
                ? "SQLite could not open it or its -wal/-shm files (\(error.message))"
                : "\(where_) is read-only (a read-only file system, or no write permission), and SQLite must write its -wal and -shm files beside the database")
        }
        return Store(db: db)
    }

    init(db: Database) { self.db = db }

    /// The name of the newest migration applied.
    public func schemaVersion() throws -> String? {
        try db.scalarText("SELECT max(name) FROM schema_migrations")
    }
}

/// The default database path: `$XDG_DATA_HOME/wxdb/wxdb.sqlite`, else `~/.local/share/wxdb/wxdb.sqlite`.
public func defaultDatabasePath(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
    if let xdg = environment["XDG_DATA_HOME"], !xdg.isEmpty {
        return xdg + "/wxdb/wxdb.sqlite"
    }
    let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
    return home + "/.local/share/wxdb/wxdb.sqlite"
}

// Stated, not just implied: a store is used from one thread at a time (see `Store`).
@available(*, unavailable)
extension Store: Sendable {}
