// One libpq connection. Statements go with their values as parameters in text format (never
// spliced into the SQL); large answers are read row by row (single-row mode), never held whole;
// bulk rows go in with COPY FROM STDIN. libpq is opened at the first connection (see
// Sources/CLibPQ/shim.h), so SQLite commands never load it.
import CLibPQ
import FoundationEssentials

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A value sent as a statement parameter, in PostgreSQL's text format.
public enum PostgresValue: Sendable, Equatable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case bool(Bool)

    /// The text PostgreSQL reads this value from, or nil for NULL.
    public var text: String? {
        switch self {
        case .null: return nil
        case .integer(let value): return String(value)
        case .real(let value): return PostgresValue.text(of: value)
        case .text(let value): return value
        case .bool(let value): return value ? "t" : "f"
        }
    }

    /// A double as float8 input reads it back exactly (Swift prints the shortest exact form).
    public static func text(of value: Double) -> String {
        if value.isNaN { return "NaN" }
        if value.isInfinite { return value < 0 ? "-Infinity" : "Infinity" }
        return value.description
    }
}

/// Swift values that can be statement parameters.
public protocol PostgresBindable { var postgresValue: PostgresValue { get } }
extension PostgresValue: PostgresBindable { public var postgresValue: PostgresValue { self } }
extension Int: PostgresBindable { public var postgresValue: PostgresValue { .integer(Int64(self)) } }
extension Int64: PostgresBindable { public var postgresValue: PostgresValue { .integer(self) } }
extension Int32: PostgresBindable { public var postgresValue: PostgresValue { .integer(Int64(self)) } }
extension Double: PostgresBindable { public var postgresValue: PostgresValue { .real(self) } }
extension String: PostgresBindable { public var postgresValue: PostgresValue { .text(self) } }
extension Bool: PostgresBindable { public var postgresValue: PostgresValue { .bool(self) } }
extension Optional: PostgresBindable where Wrapped: PostgresBindable {
    public var postgresValue: PostgresValue { self?.postgresValue ?? .null }
}

/// One row of an answer, valid only inside the closure it is handed to.
public struct PostgresRow {
    let result: OpaquePointer
    let row: Int32

    init(result: OpaquePointer, row: Int32) {
        self.result = result
        self.row = row
    }

    /// The number of columns.
    public var count: Int { Int(wxdb_pq_nfields(result)) }
    public func isNull(_ column: Int) -> Bool { wxdb_pq_getisnull(result, row, Int32(column)) != 0 }
    /// The column's text ("" for NULL).
    public func string(_ column: Int) -> String { String(cString: wxdb_pq_getvalue(result, row, Int32(column))) }
    public func optionalString(_ column: Int) -> String? { isNull(column) ? nil : string(column) }
    /// The column as an integer (0 for NULL).
    public func int64(_ column: Int) -> Int64 {
        guard let text = wxdb_pq_getvalue(result, row, Int32(column)) else { return 0 }
        return Int64(strtoll(text, nil, 10))
    }
    public func optionalInt64(_ column: Int) -> Int64? { isNull(column) ? nil : int64(column) }
    /// The column as a double (0 for NULL); float8's text output round-trips exactly.
    public func double(_ column: Int) -> Double {
        guard let text = wxdb_pq_getvalue(result, row, Int32(column)) else { return 0 }
        return strtod(text, nil)
    }
    public func optionalDouble(_ column: Int) -> Double? { isNull(column) ? nil : double(column) }
    /// A boolean column (`t` / `f`).
    public func bool(_ column: Int) -> Bool {
        wxdb_pq_getvalue(result, row, Int32(column))?.pointee == CChar(UInt8(ascii: "t"))
    }
}

/// A connection to one PostgreSQL database. Not shared between threads.
///
/// A session the server ended while the connection was idle (a server restart, an administrator's
/// `pg_terminate_backend`) is opened again with the same connection string before the next
/// transaction or statement outside one, never inside a transaction: a transaction cut off is
/// rolled back by the server and its error reaches the caller, who may run it again whole.
/// Session settings (`SET`, session advisory locks) do not survive a reconnect; wxdb's own
/// (`synchronousCommit`) are applied again, and statements are prepared again as they come.
///
/// Statements run more than once are prepared once per session (PQprepare) and then executed by
/// name, so the server parses and plans them once, not on every call: a stored run repeats the same
/// few statements thousands of times in an import.
public final class PostgresConnection {
    let handle: OpaquePointer
    /// The connection string as it may be shown (no password).
    public let target: String
    private let conninfo: String
    /// How many `transaction` bodies are running (a reconnect waits for none).
    private var transactionDepth = 0
    /// How many times the connection was opened again after the server ended the session.
    public private(set) var reconnects = 0
    /// The `synchronous_commit` this session commits with: `off` unless someone chose a value for
    /// it (see `sessionSettingsSQL`).
    public private(set) var synchronousCommit = ""
    /// Statement text → the name it is prepared under in this session.
    private var prepared: [String: String] = [:]
    /// Texts run once so far: a text is prepared the second time it comes (a multi-row statement
    /// of one particular size may never come again).
    private var seenOnce: Set<String> = []
    private var preparedCount = 0
    /// At most this many statements are kept prepared per session; the rest run unprepared.
    static let preparedLimit = 256

    /// Connects with a libpq connection string: a `postgres://` / `postgresql://` URI, `keyword=value`
    /// pairs (`service=wx`), or "" for the PG* environment alone.
    public init(conninfo: String) throws {
        self.conninfo = conninfo
        self.target = conninfo.isEmpty ? "the server named by the PG* environment" : ConnectionString.redacted(conninfo)
        guard wxdb_pq_available() != 0 else {
            throw PostgresError(kind: .libraryMissing, message: "", target: target)
        }
        // Only the URI form and keyword=value text reach libpq; a path never does.
        guard let connection = wxdb_pq_connectdb(conninfo) else {
            throw PostgresError(kind: .other, message: "libpq could not allocate a connection", target: target)
        }
        guard wxdb_pq_status(connection) == CONNECTION_OK else {
            let message = ConnectionString.scrub(
                Self.trimmed(String(cString: wxdb_pq_error_message(connection))), conninfo: conninfo)
            wxdb_pq_finish(connection)
            throw PostgresError(kind: PostgresError.kind(connectionMessage: message), message: message, target: target)
        }
        self.handle = connection
        wxdb_pq_silence_notices(connection)
        try applySessionSettings()
    }

    /// What wxdb sets in each session it opens. `synchronous_commit`: a commit waits for its WAL
    /// to be flushed only when someone asked for that. When the value in force is PostgreSQL's
    /// built-in default, wxdb turns it `off`: the guarantee of SQLite's `synchronous=NORMAL` in WAL
    /// mode, which the SQLite engine uses (a crash of the server's machine may lose the last
    /// fraction of a second of commits; never half a transaction, never a corrupt database). A value
    /// set anywhere (postgresql.conf, the server's command line, `ALTER DATABASE`/`ALTER ROLE … SET`,
    /// `options=-csynchronous_commit=on` in the connection string or `PGOPTIONS`) is kept as it is.
    /// `extra_float_digits`: at least 1, so float4 values print as their shortest exact text (the
    /// views of the store's float4 tables read a value back from that text; a server or role set
    /// lower would print 6 digits). Both in one round trip, on every connect and reconnect.
    static let sessionSettingsSQL =
        "SELECT CASE WHEN source = 'default' THEN set_config('synchronous_commit', 'off', false) ELSE setting END,"
        + " CASE WHEN current_setting('extra_float_digits')::int < 1"
        + " THEN set_config('extra_float_digits', '1', false) END"
        + " FROM pg_settings WHERE name = 'synchronous_commit'"

    private func applySessionSettings() throws {
        let result = wxdb_pq_exec(handle, Self.sessionSettingsSQL)
        defer { wxdb_pq_clear(result) }
        try check(result)
        guard let result, wxdb_pq_ntuples(result) == 1 else { return }
        synchronousCommit = String(cString: wxdb_pq_getvalue(result, 0, 0))
    }

    deinit { wxdb_pq_finish(handle) }

    /// The server's version as PostgreSQL numbers it (150018 for 15.18).
    public var serverVersion: Int { Int(wxdb_pq_server_version(handle)) }
    /// libpq's own version, same numbering.
    public static var libraryVersion: Int { Int(wxdb_pq_lib_version()) }
    /// The server process serving this connection (for `pg_terminate_backend` in tests and doctor).
    public var backendPID: Int32 { wxdb_pq_backend_pid(handle) }
    /// Whether a transaction is open (or failed and not yet rolled back).
    public var isInTransaction: Bool {
        let status = wxdb_pq_transaction_status(handle)
        return status == PQTRANS_INTRANS || status == PQTRANS_INERROR || status == PQTRANS_ACTIVE
    }
    /// Whether the connection still works (false once the server ended it).
    public var isOpen: Bool { wxdb_pq_status(handle) == CONNECTION_OK }

    // MARK: Statements

    /// Runs SQL without parameters; it may hold several statements (a migration). Statements
    /// prepared before are dropped after it: a plan kept across a change of a table's columns
    /// would fail ("cached plan must not change result type").
    public func execute(_ sql: String) throws {
        try control(sql)
        if !prepared.isEmpty {
            try control("DEALLOCATE ALL")
            forgetPrepared()
        }
    }

    /// Runs a statement without parameters, prepared statements untouched (BEGIN, COMMIT, …).
    private func control(_ sql: String) throws {
        try reconnectIfEnded()
        let result = wxdb_pq_exec(handle, sql)
        defer { wxdb_pq_clear(result) }
        try check(result)
    }

    /// Drops the plan `sql` is prepared with in this session, if any: it is prepared again as it
    /// comes, planned from the tables as they are then (a generic plan is made once, from the
    /// tables as they were, and a long transaction may grow a table a hundredfold meanwhile).
    public func replan(_ sql: String) throws {
        guard let name = prepared[sql] else { return }
        try control("DEALLOCATE " + name)
        prepared[sql] = nil
    }

    private func forgetPrepared() {
        prepared = [:]
        seenOnce = []
    }

    /// The name `sql` is prepared under in this session, preparing it now on its second use; nil
    /// while it runs unprepared (its first use, or past `preparedLimit`).
    private func preparedName(_ sql: String, parameters: Int) throws -> String? {
        if let name = prepared[sql] { return name }
        guard prepared.count < Self.preparedLimit else { return nil }
        guard seenOnce.contains(sql) else {
            if seenOnce.count >= 4 * Self.preparedLimit { seenOnce = [] }
            seenOnce.insert(sql)
            return nil
        }
        preparedCount += 1
        let name = "wxdb_\(preparedCount)"
        let result = wxdb_pq_prepare(handle, name, sql, Int32(parameters))
        defer { wxdb_pq_clear(result) }
        try check(result)
        seenOnce.remove(sql)
        prepared[sql] = name
        return name
    }

    /// Runs one statement, by name when it is prepared.
    private func execParams(_ sql: String, _ arguments: [PostgresValue], prepare: Bool = true) throws
        -> OpaquePointer?
    {
        let name = prepare ? try preparedName(sql, parameters: arguments.count) : nil
        return try withParameters(arguments) { values in
            if let name {
                return wxdb_pq_exec_prepared(handle, name, Int32(arguments.count), values)
            }
            return wxdb_pq_exec_params(handle, sql, Int32(arguments.count), values)
        }
    }

    /// Runs one statement with parameters `$1`, `$2`, …; returns the rows it changed.
    @discardableResult
    public func run(_ sql: String, _ arguments: [PostgresValue] = []) throws -> Int {
        try reconnectIfEnded()
        let result = try execParams(sql, arguments)
        defer { wxdb_pq_clear(result) }
        try check(result)
        return Int(String(cString: wxdb_pq_cmd_tuples(result))) ?? 0
    }

    /// Every row of a (small) answer, each mapped by `map`. With `prepare: false` the statement is
    /// planned on every call with its values, never from a plan prepared earlier in the session:
    /// for a query whose best plan changes as a long transaction fills a table that has no
    /// statistics yet (a prepared statement's generic plan is made once, from the table as it was).
    public func rows<T>(
        _ sql: String, _ arguments: [PostgresValue] = [], prepare: Bool = true, _ map: (PostgresRow) throws -> T
    ) throws -> [T] {
        try reconnectIfEnded()
        let result = try execParams(sql, arguments, prepare: prepare)
        defer { wxdb_pq_clear(result) }
        try check(result)
        guard let result else { return [] }
        var out: [T] = []
        let count = wxdb_pq_ntuples(result)
        out.reserveCapacity(Int(count))
        for index in 0..<count { out.append(try map(PostgresRow(result: result, row: index))) }
        return out
    }

    /// The first row of an answer, mapped, or nil when there is none.
    public func firstRow<T>(
        _ sql: String, _ arguments: [PostgresValue] = [], _ map: (PostgresRow) throws -> T
    ) throws -> T? {
        try rows(sql, arguments, map).first
    }

    /// The first column of the first row as an integer (nil when no row or NULL).
    public func scalarInt(_ sql: String, _ arguments: [PostgresValue] = []) throws -> Int64? {
        try firstRow(sql, arguments) { $0.optionalInt64(0) } ?? nil
    }

    /// The first column of the first row as text (nil when no row or NULL).
    public func scalarText(_ sql: String, _ arguments: [PostgresValue] = []) throws -> String? {
        try firstRow(sql, arguments) { $0.optionalString(0) } ?? nil
    }

    /// Hands the rows of an answer to `body` one at a time as the server sends them (libpq's
    /// single-row mode): memory stays one row whatever the answer's size. When `body` throws,
    /// the statement is cancelled on the server and the error is rethrown.
    public func stream(
        _ sql: String, _ arguments: [PostgresValue] = [], _ body: (PostgresRow) throws -> Void
    ) throws {
        try reconnectIfEnded()
        let name = try preparedName(sql, parameters: arguments.count)
        let sent = try withParameters(arguments) { values in
            if let name { return wxdb_pq_send_query_prepared(handle, name, Int32(arguments.count), values) }
            return wxdb_pq_send_query_params(handle, sql, Int32(arguments.count), values)
        }
        guard sent == 1 else { throw connectionError() }
        _ = wxdb_pq_set_single_row_mode(handle)
        var failure: Error?
        var stopped = false
        // Every result must be read, whatever happened, before the connection takes another statement.
        while let result = wxdb_pq_get_result(handle) {
            defer { wxdb_pq_clear(result) }
            let status = wxdb_pq_result_status(result)
            if status == PGRES_SINGLE_TUPLE {
                guard !stopped else { continue }
                do {
                    try body(PostgresRow(result: result, row: 0))
                } catch {
                    failure = error
                    stopped = true
                    _ = wxdb_pq_cancel(handle)
                }
            } else if status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK, failure == nil {
                failure = error(from: result)
            }
        }
        if let failure { throw failure }
        if !isOpen { throw connectionError() }
    }

    // MARK: Transactions

    /// Runs `body` in one transaction: committed when it returns, rolled back when it throws
    /// (or when the commit itself fails), so its writes land whole or not at all.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try begin()
        transactionDepth += 1
        defer { transactionDepth -= 1 }
        let value: T
        do {
            value = try body()
        } catch {
            if isOpen { try? control("ROLLBACK") }
            throw error
        }
        do {
            try control("COMMIT")
        } catch {
            if isOpen, isInTransaction { try? control("ROLLBACK") }
            throw error
        }
        return value
    }

    /// BEGIN, on a new session when the server ended the old one: nothing of this transaction was
    /// sent yet, so beginning it again there is safe. Inside another transaction it only reports.
    private func begin() throws {
        do {
            try control("BEGIN")
        } catch let error as PostgresError where error.kind == .connectionLost && transactionDepth == 0 {
            try reconnect()
            try control("BEGIN")
        }
    }

    /// Opens the connection again when the server ended the session since the last statement:
    /// what it sent meanwhile is read without waiting (a closed socket shows as CONNECTION_BAD).
    /// Only between transactions; inside one the statement fails and the caller hears of it.
    func reconnectIfEnded() throws {
        guard transactionDepth == 0, !isInTransaction else { return }
        // A session the server ended sent its FATAL message, then closed: the first read takes the
        // message, a second one meets the end of the stream, which is when libpq marks the
        // connection bad. Both return at once when the session is alive (nothing to read).
        for _ in 0..<2 where wxdb_pq_status(handle) == CONNECTION_OK { _ = wxdb_pq_consume_input(handle) }
        if wxdb_pq_status(handle) != CONNECTION_OK { try reconnect() }
    }

    /// PQreset: the same connection string, a new session.
    private func reconnect() throws {
        wxdb_pq_reset(handle)
        guard wxdb_pq_status(handle) == CONNECTION_OK else {
            let message = ConnectionString.scrub(
                Self.trimmed(String(cString: wxdb_pq_error_message(handle))), conninfo: conninfo)
            let kind = PostgresError.kind(connectionMessage: message)
            throw PostgresError(kind: kind == .other ? .connectionLost : kind, message: message, target: target)
        }
        reconnects += 1
        // A new session: nothing is prepared in it, and wxdb's settings are to be made again.
        forgetPrepared()
        try applySessionSettings()
    }

    // MARK: COPY

    /// Loads rows into `table` with `COPY … FROM STDIN` (text format): `fill` appends them to
    /// the writer it is given. Returns the number of rows the server stored. When `fill` throws,
    /// the COPY is aborted on the server (nothing of it stays) and the error is rethrown.
    /// `table` and `columns` are identifiers from code, checked to be plain lower-case names.
    @discardableResult
    public func copy(into table: String, columns: [String], _ fill: (CopyWriter) throws -> Void) throws -> Int {
        precondition(
            ([table] + columns).allSatisfy(Self.isPlainIdentifier), "COPY takes identifiers from code only")
        try startCopy("COPY \(table) (\(columns.joined(separator: ", "))) FROM STDIN")
        let writer = CopyWriter(copyBuffer(columns: columns.count))
        var failure: Error?
        do {
            try fill(writer)
            try writer.flush()
        } catch {
            failure = error
        }
        return try finishCopy(failure: failure)
    }

    static func isPlainIdentifier(_ name: String) -> Bool {
        guard let first = name.utf8.first, (0x61...0x7A).contains(first) || first == UInt8(ascii: "_") else {
            return false
        }
        return name.utf8.allSatisfy {
            (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == UInt8(ascii: "_")
        }
    }

    // MARK: Advisory locks

    /// wxdb's namespace among advisory locks (the first key of PostgreSQL's two-key form), so
    /// its locks never meet another application's on the same database.
    public static let lockNamespace: Int32 = 0x7778_6462 & 0x7FFF_FFFF  // "wxdb"

    /// Takes the session lock on `key` if no other session holds it; false when one does.
    public func tryLock(_ key: Int32) throws -> Bool {
        try firstRow(
            "SELECT pg_try_advisory_lock($1::int4, $2::int4)",
            [.integer(Int64(Self.lockNamespace)), .integer(Int64(key))]
        ) { $0.bool(0) } ?? false
    }

    /// Waits for the session lock on `key`.
    public func lock(_ key: Int32) throws {
        try run(
            "SELECT pg_advisory_lock($1::int4, $2::int4)", [.integer(Int64(Self.lockNamespace)), .integer(Int64(key))])
    }

    /// Releases a session lock taken with `lock` or `tryLock`; false when this session did not hold it.
    @discardableResult
    public func unlock(_ key: Int32) throws -> Bool {
        try firstRow(
            "SELECT pg_advisory_unlock($1::int4, $2::int4)", [.integer(Int64(Self.lockNamespace)), .integer(Int64(key))]
        ) { $0.bool(0) } ?? false
    }

    /// Waits for the lock on `key` until the current transaction ends (migrations).
    public func lockForTransaction(_ key: Int32) throws {
        try run(
            "SELECT pg_advisory_xact_lock($1::int4, $2::int4)",
            [.integer(Int64(Self.lockNamespace)), .integer(Int64(key))])
    }

    // MARK: Errors

    private func withParameters<R>(_ arguments: [PostgresValue], _ body: (UnsafePointer<UnsafePointer<CChar>?>?) -> R)
        throws -> R
    {
        // A C string ends at NUL, so such text would be stored cut short; PostgreSQL's text cannot hold one anyway.
        if arguments.contains(where: { $0.text?.utf8.contains(0) == true }) {
            throw PostgresError(
                kind: .other,
                message: "a text value holds a NUL byte, which PostgreSQL cannot store; nothing was stored",
                target: target)
        }
        var pointers: [UnsafeMutablePointer<CChar>?] = arguments.map { value in value.text.map { strdup($0) } }
        defer { for pointer in pointers { free(pointer) } }
        for (value, pointer) in zip(arguments, pointers) where value != .null && pointer == nil {
            throw PostgresError(kind: .other, message: "out of memory", target: target)
        }
        return pointers.withUnsafeMutableBufferPointer { buffer in
            buffer.withMemoryRebound(to: UnsafePointer<CChar>?.self) { body($0.baseAddress) }
        }
    }

    func check(_ result: OpaquePointer?) throws {
        guard let result else { throw connectionError() }
        let status = wxdb_pq_result_status(result)
        switch status {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_SINGLE_TUPLE, PGRES_EMPTY_QUERY: return
        default: throw error(from: result)
        }
    }

    func error(from result: OpaquePointer) -> PostgresError {
        let state = wxdb_pq_result_error_field(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) }
        let primary = wxdb_pq_result_error_field(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
        let message = ConnectionString.scrub(
            Self.trimmed(primary ?? String(cString: wxdb_pq_result_error_message(result))), conninfo: conninfo)
        if let state {
            return PostgresError(
                kind: PostgresError.kind(sqlState: state, message: message), sqlState: state, message: message,
                target: target)
        }
        // No SQLSTATE: libpq's own report, usually the connection gone ("server closed the connection unexpectedly").
        return PostgresError(kind: isOpen ? .other : .connectionLost, message: message, target: target)
    }

    func connectionError() -> PostgresError {
        let message = ConnectionString.scrub(
            Self.trimmed(String(cString: wxdb_pq_error_message(handle))), conninfo: conninfo)
        return PostgresError(kind: isOpen ? .other : .connectionLost, message: message, target: target)
    }

    /// libpq's messages end in a newline and may span lines; one line reads better in `Error:`.
    static func trimmed(_ message: String) -> String {
        message.split(whereSeparator: { $0 == "\n" || $0 == "\r" })
            .map { $0.split(separator: "\t", omittingEmptySubsequences: true).joined(separator: " ") }
            .map { String($0).trimmedSpaces }
            .filter { !$0.isEmpty }
            .joined(separator: "; ")
    }
}

extension String {
    fileprivate var trimmedSpaces: String {
        var view = Substring(self)
        while view.first == " " { view.removeFirst() }
        while view.last == " " { view.removeLast() }
        return String(view)
    }
}
