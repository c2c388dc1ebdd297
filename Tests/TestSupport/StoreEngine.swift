// The engines a Store-level or CLI test runs on, as `@Test(arguments: StoreEngine.all)`: SQLite
// always; PostgreSQL on a fresh database of the suite's throwaway server (PostgresServer) where its
// programs are installed. Where they are not, `all` is SQLite alone and `skipNote` says so once;
// under CI=true PostgreSQL is always in `all`, so a missing server fails the tests instead.
import Foundation

/// A storage engine a test can run on.
public enum StoreEngine: String, Sendable, CaseIterable, CustomStringConvertible {
    case sqlite
    case postgres

    /// The engines tests run on here (see the file's comment).
    public static let all: [StoreEngine] = {
        guard PostgresServer.enabled else {
            if let reason = PostgresServer.skipReason {
                FileHandle.standardError.write(Data("note: tests on both engines run on SQLite only: \(reason)\n".utf8))
            }
            return [.sqlite]
        }
        return [.sqlite, .postgres]
    }()

    public var description: String { self == .sqlite ? "SQLite" : "PostgreSQL" }

    /// A new, empty database of this engine as `--db` names it: a SQLite path (its folder made)
    /// below the test's scratch folder, or a connection string to a new database on the test server
    /// (with `icuLocale`, one whose text sorts by that language's collation).
    public func freshDatabase(_ prefix: String = "t", icuLocale: String? = nil) throws -> String {
        switch self {
        case .sqlite:
            let folder = Scratch.folder(prefix)
            return folder.appendingPathComponent("wxdb.sqlite").path
        case .postgres:
            let server = try PostgresServer.shared()
            return server.conninfo(database: try server.createDatabase(prefix, icuLocale: icuLocale))
        }
    }
}
