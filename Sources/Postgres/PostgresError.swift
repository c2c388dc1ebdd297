// What went wrong talking to PostgreSQL, sorted into the cases a user acts on differently. The
// messages name the server by its redacted connection string (never a password) and say what to do.

/// Why a PostgreSQL operation failed.
public struct PostgresError: Error, CustomStringConvertible, Sendable, Equatable {
    /// The cases a user can tell apart and fix.
    public enum Kind: Sendable, Equatable {
        /// libpq (Debian's libpq5) is not installed.
        case libraryMissing
        /// Nothing answers at the address: the server is not running, or the host/port/socket is wrong.
        case serverNotRunning
        /// The server refused the password (or wanted one and none was given).
        case authentication
        /// The database named does not exist on that server.
        case noSuchDatabase
        /// The statement ran longer than `statement_timeout` (SQLSTATE 57014 from the timeout).
        case statementTimeout
        /// The statement was cancelled (SQLSTATE 57014 from a cancel request).
        case cancelled
        /// The connection was lost or the server ended it (terminated, restarted, network).
        case connectionLost
        /// Two transactions conflicted (serialization failure, deadlock): safe to run again.
        case conflict
        /// A row broke a constraint (unique, foreign key, check, not null).
        case constraint
        /// Anything else the server or libpq reported.
        case other
    }

    public let kind: Kind
    /// The five-character SQLSTATE when the server sent one.
    public let sqlState: String?
    /// The server's (or libpq's) message, already scrubbed of passwords.
    public let message: String
    /// The connection string as it may be shown.
    public let target: String

    public init(kind: Kind, sqlState: String? = nil, message: String, target: String) {
        self.kind = kind
        self.sqlState = sqlState
        self.message = message
        self.target = target
    }

    /// The kind of a server error by its SQLSTATE (PostgreSQL's Appendix A), with the message
    /// to tell a statement timeout from a cancel (both are 57014).
    public static func kind(sqlState: String, message: String) -> Kind {
        switch sqlState {
        case "57014": return message.contains("statement timeout") ? .statementTimeout : .cancelled
        case "28P01", "28000": return .authentication
        case "3D000": return .noSuchDatabase
        case "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004": return .connectionLost
        case "40001", "40P01": return .conflict
        default: return sqlState.hasPrefix("23") ? .constraint : .other
        }
    }

    /// The kind of a failed connection attempt, from libpq's message (no SQLSTATE exists before
    /// a session does).
    public static func kind(connectionMessage message: String) -> Kind {
        if message.contains("password authentication failed") || message.contains("no password supplied")
            || message.contains("authentication failed")
        {
            return .authentication
        }
        if message.contains("does not exist") && message.contains("database") { return .noSuchDatabase }
        if message.contains("Connection refused") || message.contains("No such file or directory")
            || message.contains("could not connect") || message.contains("could not translate host name")
            || message.contains("the database system is starting up")
            || message.contains("the database system is shutting down") || message.contains("timeout expired")
        {
            return .serverNotRunning
        }
        return .other
    }

    public var description: String {
        let detail = message.isEmpty ? "" : " (\(message))"
        switch kind {
        case .libraryMissing:
            return
                "PostgreSQL's client library libpq is not installed, so wxdb cannot open \(target). Install it (Debian: apt-get install libpq5) and run the command again"
        case .serverNotRunning:
            return
                "no PostgreSQL server answers at \(target)\(detail). Start the server, or check the host, port and socket in --db (or WXDB_DB / the PG* variables); nothing was changed"
        case .authentication:
            return
                "PostgreSQL refused the login to \(target)\(detail). Check the user and the password in your passfile (~/.pgpass or PGPASSFILE) or service file; do not put the password in --db, where other users can see it"
        case .noSuchDatabase:
            return
                "\(target) names a database the server does not have\(detail). Create it (createdb NAME) or correct the name; nothing was changed"
        case .statementTimeout:
            return
                "a statement on \(target) ran longer than the server's statement_timeout and was stopped\(detail); its transaction was rolled back, so nothing of it was stored. Raise the statement_timeout of the role wxdb connects as, or run the command on less data"
        case .cancelled:
            return
                "a statement on \(target) was cancelled\(detail); its transaction was rolled back, nothing of it was stored"
        case .connectionLost:
            return
                "the connection to \(target) was lost or ended by the server\(detail); the transaction in progress was rolled back, nothing of it was stored. Check that the server is running and run the command again"
        case .conflict:
            return
                "a transaction on \(target) conflicted with another one\(detail) and was rolled back; run the command again"
        case .constraint, .other:
            let state = sqlState.map { " [SQLSTATE \($0)]" } ?? ""
            return "PostgreSQL error on \(target)\(state): \(message)"
        }
    }
}
