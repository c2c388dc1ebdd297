import CSQLite

/// A value SQLite can store: one of its five storage classes.
public enum SQLValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob([UInt8])
}

/// Something that binds as one SQL parameter.
public protocol SQLBindable {
    var sqlValue: SQLValue { get }
}

extension SQLValue: SQLBindable { public var sqlValue: SQLValue { self } }
extension Int: SQLBindable { public var sqlValue: SQLValue { .integer(Int64(self)) } }
extension Int64: SQLBindable { public var sqlValue: SQLValue { .integer(self) } }
extension Double: SQLBindable { public var sqlValue: SQLValue { .real(self) } }
extension String: SQLBindable { public var sqlValue: SQLValue { .text(self) } }
extension Bool: SQLBindable { public var sqlValue: SQLValue { .integer(self ? 1 : 0) } }
extension Optional: SQLBindable where Wrapped: SQLBindable {
    public var sqlValue: SQLValue { self?.sqlValue ?? .null }
}

/// An error reported by SQLite: the extended result code, SQLite's own message and the SQL it ran.
public struct SQLiteError: Error, CustomStringConvertible, Sendable {
    /// The extended result code (`SQLITE_CONSTRAINT_UNIQUE`, `SQLITE_BUSY_SNAPSHOT`, ...).
    public let extendedCode: Int32
    public let message: String
    public let sql: String?

    /// The primary result code (`SQLITE_BUSY`, `SQLITE_CONSTRAINT`, ...).
    public var code: Int32 { extendedCode & 0xFF }
    public var isBusy: Bool { code == SQLITE_BUSY || code == SQLITE_LOCKED }
    public var isNotADatabase: Bool { code == SQLITE_NOTADB || code == SQLITE_CORRUPT }
    public var isReadOnly: Bool { code == SQLITE_READONLY }
    /// A full disk: `SQLITE_FULL`, or `SQLITE_IOERR_SHMSIZE` (4874, a macro Swift cannot import):
    /// a WAL file's `-shm` index that cannot grow, which only a disk without room does.
    public var isDiskFull: Bool { code == SQLITE_FULL || extendedCode == 4874 }
    /// A statement stopped by `sqlite3_interrupt` or a progress handler (`Database.limitWork`).
    public var isInterrupted: Bool { code == SQLITE_INTERRUPT }
    public var isCantOpen: Bool { code == SQLITE_CANTOPEN }

    public init(extendedCode: Int32, message: String, sql: String?) {
        self.extendedCode = extendedCode
        self.message = message
        self.sql = sql
    }

    /// The code and message without the SQL, for messages users see.
    public var summary: String { "SQLite error \(extendedCode): \(message)" }

    public var description: String {
        var text = summary
        if let sql { text += " - while executing `\(sql)`" }
        return text
    }
}

/// One connection to a SQLite file, configured for wxdb: WAL, `synchronous=NORMAL`, foreign keys,
/// a busy timeout and extended result codes.
///
/// The concurrency rule: a `Database` is not `Sendable` (it is opened `SQLITE_OPEN_NOMUTEX`, and its
/// statement cache and transaction depth are unguarded). Use one connection per thread, or give
/// it to one serial owner; another thread or process opens its own connection, and WAL plus the
/// busy timeout let them share the file. Its statements and rows are bound to it the same way.
public final class Database {
    /// The path the connection was opened with.
    public let path: String
    let handle: OpaquePointer
    private var statementCache: [String: Statement] = [:]
    private var transactionDepth = 0

    /// How a file is opened.
    public struct Options: Sendable {
        public var readOnly = false
        /// When false, a missing file is an error instead of being created.
        public var create = true
        public var busyTimeoutMilliseconds: Int32 = 5000
        /// Journal in WAL mode. Turned off only to inspect a file without changing it.
        public var walMode = true
        /// Open `path` through a read-only `file:` URI (see `readOnlyURI(path:immutable:)`), so
        /// `mode=ro` holds even if the flags were ignored and URI syntax in the file name is literal.
        public var uri = false
        /// A read-only URI (as `uri`) with `immutable=1`: a file nothing else changes, so SQLite takes
        /// no locks and makes no -wal/-shm files, and a database in a folder the user cannot write
        /// still reads.
        public var immutable = false
        public init() {}

        /// Options for reading someone else's file: read-only, never created, no journal-mode
        /// change, opened through a `mode=ro` URI so read-only holds even if the flags were ignored.
        public static var foreignReadOnly: Options {
            var options = Options()
            options.readOnly = true
            options.create = false
            options.walMode = false
            options.uri = true
            return options
        }
    }

    /// A `file:` URI that opens `path` read-only (`mode=ro`, and `immutable=1` when asked).
    /// Characters SQLite reads as URI syntax (`?`, `#`, `%`) and anything not printable ASCII are
    /// percent-encoded.
    public static func readOnlyURI(path: String, immutable: Bool = false) -> String {
        var encoded = ""
        for byte in path.utf8 {
            switch byte {
            case UInt8(ascii: "?"), UInt8(ascii: "#"), UInt8(ascii: "%"), 0...0x20, 0x7F...0xFF:
                encoded += "%" + (byte < 16 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            default:
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            }
        }
        // An empty authority before an absolute path, so "//host/x" is not read as a host; a
        // relative path stays relative to the working folder.
        return (path.hasPrefix("/") ? "file://" : "file:") + encoded + "?mode=ro" + (immutable ? "&immutable=1" : "")
    }

    /// Opens (or creates) the file at `path`, a plain path (with `uri`, wxdb makes the URI).
    public init(path: String, options: Options = Options()) throws {
        var db: OpaquePointer?
        var flags = options.readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE
        if options.create && !options.readOnly { flags |= SQLITE_OPEN_CREATE }
        flags |= SQLITE_OPEN_NOMUTEX
        var name = path
        if options.uri || options.immutable {
            flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI
            name = Self.readOnlyURI(path: path, immutable: options.immutable)
        }
        let rc = sqlite3_open_v2(name, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(rc))
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(extendedCode: rc, message: message, sql: nil)
        }
        self.handle = db
        self.path = path
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, options.busyTimeoutMilliseconds)
        do {
            try execute("PRAGMA foreign_keys = ON")
            if options.walMode && !options.readOnly && !options.uri && !options.immutable {
                let mode = try scalarText("PRAGMA journal_mode = WAL")
                guard mode?.lowercased() == "wal" else {
                    throw SQLiteError(
                        extendedCode: SQLITE_ERROR,
                        message: "could not switch to WAL (journal_mode is \(mode ?? "unknown"))",
                        sql: "PRAGMA journal_mode = WAL")
                }
                try execute("PRAGMA synchronous = NORMAL")
            }
        } catch {
            statementCache.removeAll()
            sqlite3_close_v2(db)
            throw error
        }
    }

    deinit {
        statementCache.removeAll()
        if workBudget != nil { sqlite3_progress_handler(handle, 0, nil, nil) }
        sqlite3_close_v2(handle)
    }

    /// The SQLite library version, e.g. "3.40.1".
    public static var libraryVersion: String { String(cString: sqlite3_libversion()) }

    // MARK: Statements

    /// A cached prepared statement for `sql`, reset and with its bindings cleared.
    public func cachedStatement(_ sql: String) throws -> Statement {
        if let statement = statementCache[sql] {
            statement.reset()
            return statement
        }
        let statement = try Statement(database: self, sql: sql, persistent: true)
        statementCache[sql] = statement
        return statement
    }

    /// A new statement that is not cached, for SQL that runs once.
    public func makeStatement(_ sql: String) throws -> Statement {
        try Statement(database: self, sql: sql, persistent: false)
    }

    /// Runs one or more statements that take no parameters (schema, pragmas).
    public func execute(_ sql: String) throws {
        var errorMessage: UnsafeMutablePointer<CChar>?
        let rc = sqlite3_exec(handle, sql, nil, nil, &errorMessage)
        if rc != SQLITE_OK {
            let message = errorMessage.map { String(cString: $0) } ?? lastErrorMessage
            sqlite3_free(errorMessage)
            throw SQLiteError(extendedCode: sqlite3_extended_errcode(handle), message: message, sql: sql)
        }
    }

    /// Runs one statement with bound arguments, for writes.
    public func run(_ sql: String, _ arguments: [SQLValue] = []) throws {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        try statement.runToCompletion()
    }

    /// Runs a query and maps each row.
    public func rows<T>(_ sql: String, _ arguments: [SQLValue] = [], _ map: (Row) throws -> T) throws -> [T] {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        var result: [T] = []
        while let row = try statement.step() { result.append(try map(row)) }
        return result
    }

    /// The first row of a query, if any.
    public func firstRow<T>(_ sql: String, _ arguments: [SQLValue] = [], _ map: (Row) throws -> T) throws -> T? {
        let statement = try cachedStatement(sql)
        try statement.bind(arguments)
        defer { statement.reset() }
        guard let row = try statement.step() else { return nil }
        return try map(row)
    }

    public func scalarInt(_ sql: String, _ arguments: [SQLValue] = []) throws -> Int64? {
        try firstRow(sql, arguments) { $0.optionalInt64(0) } ?? nil
    }

    public func scalarText(_ sql: String, _ arguments: [SQLValue] = []) throws -> String? {
        try firstRow(sql, arguments) { $0.optionalString(0) } ?? nil
    }

    /// Caps the work the connection's statements may do from now on at about `steps` virtual
    /// machine instructions in all, and any one text or blob at `valueBytes`: a file from elsewhere
    /// can hold a view over an endless recursive query, and reading it must end. A statement that
    /// passes the cap fails with `SQLITE_INTERRUPT` and `workLimitReached` turns true.
    public func limitWork(steps: Int64, valueBytes: Int32) {
        let budget = WorkBudget(remaining: max(1, steps / WorkBudget.stride))
        workBudget = budget
        sqlite3_limit(handle, SQLITE_LIMIT_LENGTH, valueBytes)
        sqlite3_progress_handler(
            handle, Int32(WorkBudget.stride),
            { context in
                let budget = Unmanaged<WorkBudget>.fromOpaque(context!).takeUnretainedValue()
                budget.remaining -= 1
                if budget.remaining > 0 { return 0 }
                budget.exceeded = true
                return 1
            }, Unmanaged.passUnretained(budget).toOpaque())
    }

    /// True once a statement was stopped by `limitWork`.
    public var workLimitReached: Bool { workBudget?.exceeded ?? false }
    private var workBudget: WorkBudget?

    /// How long a statement waits for another connection's lock before failing with busy.
    public func setBusyTimeout(milliseconds: Int32) {
        sqlite3_busy_timeout(handle, milliseconds)
    }

    public var lastInsertRowID: Int64 { sqlite3_last_insert_rowid(handle) }
    public var changes: Int { Int(sqlite3_changes(handle)) }
    public var isInTransaction: Bool { sqlite3_get_autocommit(handle) == 0 }

    var lastErrorMessage: String { String(cString: sqlite3_errmsg(handle)) }

    func error(_ rc: Int32, sql: String?) -> SQLiteError {
        SQLiteError(
            extendedCode: sqlite3_extended_errcode(handle) != 0 ? sqlite3_extended_errcode(handle) : rc,
            message: lastErrorMessage, sql: sql)
    }

    // MARK: Transactions

    /// The kind of transaction to begin.
    public enum TransactionKind: String, Sendable {
        case deferred = "BEGIN DEFERRED"
        case immediate = "BEGIN IMMEDIATE"
    }

    /// Runs `body` in a transaction: `BEGIN IMMEDIATE` by default, so a writer takes the write lock
    /// up front and waits on the busy timeout instead of failing at its first write. Commits when
    /// `body` returns; rolls back and rethrows the first error otherwise. Nested calls use savepoints.
    @discardableResult
    public func transaction<T>(_ kind: TransactionKind = .immediate, _ body: () throws -> T) throws -> T {
        if transactionDepth > 0 {
            let name = "wxdb_sp\(transactionDepth)"
            try execute("SAVEPOINT \(name)")
            transactionDepth += 1
            defer { transactionDepth -= 1 }
            do {
                let value = try body()
                try execute("RELEASE \(name)")
                return value
            } catch {
                try? execute("ROLLBACK TO \(name)")
                try? execute("RELEASE \(name)")
                throw error
            }
        }
        try execute(kind.rawValue)
        transactionDepth = 1
        defer { transactionDepth = 0 }
        do {
            let value = try body()
            try execute("COMMIT")
            return value
        } catch {
            if isInTransaction { try? execute("ROLLBACK") }
            throw error
        }
    }
}

// Stated, not just implied: a connection must not cross threads (see `Database`).
@available(*, unavailable)
extension Database: Sendable {}

/// What is left of a `limitWork` budget, counted in handler calls of `stride` instructions each.
final class WorkBudget {
    static let stride: Int64 = 1000
    var remaining: Int64
    var exceeded = false
    init(remaining: Int64) { self.remaining = remaining }
}
