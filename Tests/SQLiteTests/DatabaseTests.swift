import Foundation
import TestSupport
import Testing

@testable import WxSQLite

func temporaryPath(_ name: String = "test.sqlite") -> String {
    let folder = Scratch.folder("sqlite")
    return folder.appendingPathComponent(name).path
}

@Suite("SQLite layer")
struct DatabaseTests {
    @Test("a new connection is in WAL mode with foreign keys on and synchronous NORMAL")
    func configuration() throws {
        let db = try Database(path: temporaryPath())
        #expect(try db.scalarText("PRAGMA journal_mode") == "wal")
        #expect(try db.scalarInt("PRAGMA foreign_keys") == 1)
        #expect(try db.scalarInt("PRAGMA synchronous") == 1)
        #expect(try db.scalarInt("PRAGMA busy_timeout") == 5000)
    }

    @Test(
        "a full disk is SQLITE_FULL or a WAL index that cannot grow (SQLITE_IOERR_SHMSIZE); other I/O errors are not",
        arguments: [(13, true), (13 | (1 << 8), true), (4874, true), (10, false), (778, false), (5, false)])
    func diskFull(code: Int32, full: Bool) {
        #expect(SQLiteError(extendedCode: code, message: "", sql: nil).isDiskFull == full)
    }

    @Test("errors carry the extended code, SQLite's message and the SQL")
    func typedErrors() throws {
        let db = try Database(path: temporaryPath())
        try db.execute("CREATE TABLE t (x INTEGER NOT NULL UNIQUE) STRICT")
        try db.run("INSERT INTO t (x) VALUES (?)", [.integer(1)])
        do {
            try db.run("INSERT INTO t (x) VALUES (?)", [.integer(1)])
            Issue.record("duplicate accepted")
        } catch let error as SQLiteError {
            #expect(error.extendedCode == 2067)  // SQLITE_CONSTRAINT_UNIQUE
            #expect(error.code == 19)
            #expect(error.message.contains("UNIQUE constraint failed"))
            #expect(error.sql == "INSERT INTO t (x) VALUES (?)")
        }
    }

    @Test(
        "a statement takes exactly one argument per parameter: a missing one is an error, never NULL",
        arguments: [
            ("SELECT count(*) FROM t WHERE (? IS NULL OR x = ?)", [SQLValue.integer(1)]),
            ("SELECT count(*) FROM t WHERE (? IS NULL OR x = ?)", [SQLValue.integer(1), .integer(1), .integer(1)]),
            ("SELECT count(*) FROM t WHERE (?1 IS NULL OR x = ?1) AND x < ?3", [SQLValue.integer(1), .integer(2)]),
            ("SELECT count(*) FROM t", [SQLValue.null])
        ])
    func argumentCount(sql: String, arguments: [SQLValue]) throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let db = try Database(path: path)
        try db.execute("CREATE TABLE t (x INTEGER) STRICT")
        do {
            _ = try db.scalarInt(sql, arguments)
            Issue.record("\(arguments.count) argument(s) accepted for \(sql)")
        } catch let error as SQLiteError {
            #expect(error.code == 25)  // SQLITE_RANGE
            #expect(error.sql == sql)
            #expect(error.message.contains("\(arguments.count) argument(s)"))
        }
        // The same statement runs when the count is right.
        let right = try db.makeStatement(sql).parameterCount
        #expect(try db.scalarInt(sql, Array(repeating: .integer(1), count: right)) == 0)
    }

    @Test("a bind that SQLite refuses (an index out of range) throws with the code and the SQL")
    func bindReturnCode() throws {
        let path = temporaryPath()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let db = try Database(path: path)
        let statement = try db.makeStatement("SELECT ?")
        for bind in [
            { try statement.bind(Int64(1), at: 2) }, { try statement.bind(Double?.none, at: 0) },
            { try statement.bind(.text("x"), at: 5) }
        ] {
            do {
                try bind()
                Issue.record("an out-of-range bind was accepted")
            } catch let error as SQLiteError {
                #expect(error.code == 25)  // SQLITE_RANGE
                #expect(error.sql == "SELECT ?")
            }
        }
    }

    @Test("STRICT tables refuse a value of the wrong type")
    func strict() throws {
        let db = try Database(path: temporaryPath())
        try db.execute("CREATE TABLE t (x REAL) STRICT")
        #expect(throws: SQLiteError.self) { try db.run("INSERT INTO t VALUES (?)", [.text("wet")]) }
    }

    @Test("a failing transaction rolls back everything and rethrows the first error")
    func rollback() throws {
        struct Boom: Error {}
        let db = try Database(path: temporaryPath())
        try db.execute("CREATE TABLE t (x INTEGER) STRICT")
        #expect(throws: Boom.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES (?)", [.integer(1)])
                throw Boom()
            }
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 0)
        #expect(!db.isInTransaction)
    }

    @Test("nested transactions use savepoints")
    func nested() throws {
        struct Boom: Error {}
        let db = try Database(path: temporaryPath())
        try db.execute("CREATE TABLE t (x INTEGER) STRICT")
        try db.transaction {
            try db.run("INSERT INTO t VALUES (1)")
            try? db.transaction {
                try db.run("INSERT INTO t VALUES (2)")
                throw Boom()
            }
        }
        #expect(try db.rows("SELECT x FROM t") { $0.int(0) } == [1])
    }

    @Test("cached statements are reused")
    func cache() throws {
        let db = try Database(path: temporaryPath())
        let a = try db.cachedStatement("SELECT 1")
        let b = try db.cachedStatement("SELECT 1")
        #expect(a === b)
    }

    @Test("a second writer waits on the busy timeout instead of failing at once")
    func busyTimeout() throws {
        let path = temporaryPath()
        let a = try Database(path: path)
        try a.execute("CREATE TABLE t (x INTEGER) STRICT")
        var options = Database.Options()
        options.busyTimeoutMilliseconds = 200
        let b = try Database(path: path, options: options)
        try a.execute("BEGIN IMMEDIATE")
        let start = Date()
        do {
            try b.transaction { try b.run("INSERT INTO t VALUES (1)") }
            Issue.record("second writer got the lock")
        } catch let error as SQLiteError {
            #expect(error.isBusy)
            #expect(Date().timeIntervalSince(start) >= 0.15)
        }
        try a.execute("ROLLBACK")
    }
}

@Suite("Migrator")
struct MigratorTests {
    let one = Migration(name: "0001_a", sql: "CREATE TABLE a (x INTEGER) STRICT;")
    let two = Migration(name: "0002_b", sql: "CREATE TABLE b (x INTEGER) STRICT;")

    @Test("applies pending migrations once, in order")
    func applies() throws {
        let db = try Database(path: temporaryPath())
        #expect(try Migrator(migrations: [one]).migrate(db, now: 1) == ["0001_a"])
        #expect(try Migrator(migrations: [one, two]).migrate(db, now: 2) == ["0002_b"])
        #expect(try Migrator(migrations: [one, two]).migrate(db, now: 3) == [])
    }

    @Test("a database from a newer build is refused, naming the migration")
    func newer() throws {
        let db = try Database(path: temporaryPath())
        try Migrator(migrations: [one, two]).migrate(db, now: 1)
        #expect(throws: MigrationError.unknownMigration(name: "0002_b", path: db.path)) {
            try Migrator(migrations: [one]).migrate(db, now: 2)
        }
    }

    @Test("an edited migration is refused")
    func edited() throws {
        let db = try Database(path: temporaryPath())
        try Migrator(migrations: [one]).migrate(db, now: 1)
        let edited = Migration(name: "0001_a", sql: "CREATE TABLE a (x TEXT) STRICT;")
        #expect(throws: MigrationError.checksumMismatch(name: "0001_a", path: db.path)) {
            try Migrator(migrations: [edited]).migrate(db, now: 2)
        }
    }

    @Test("numbers this build does not carry are no gap: 0001-0004, 0006 and 0008 migrate, reopen and upgrade")
    func sparseNumbers() throws {
        let names = ["0001_a", "0002_b", "0003_c", "0004_d", "0006_f", "0008_h"]
        let all = names.map { Migration(name: $0, sql: "CREATE TABLE t\($0) (x INTEGER) STRICT;") }
        let fresh = try Database(path: temporaryPath())
        #expect(try Migrator(migrations: all).migrate(fresh, now: 1) == names)
        try Migrator(migrations: all).check(fresh)
        #expect(try Migrator(migrations: all).migrate(fresh, now: 2) == [])

        // A database from a build that had only 0001-0004 takes 0006 and 0008.
        let older = try Database(path: temporaryPath())
        try Migrator(migrations: Array(all.prefix(4))).migrate(older, now: 1)
        #expect(try Migrator(migrations: all).migrate(older, now: 2) == ["0006_f", "0008_h"])

        // A record this build carries, missing below a later one, is still caught.
        try older.run("DELETE FROM schema_migrations WHERE name = ?", [.text("0006_f")])
        #expect(throws: MigrationError.missingRecord(name: "0006_f", later: "0008_h", path: older.path)) {
            try Migrator(migrations: all).check(older)
        }
    }

    @Test("a failing migration leaves nothing behind")
    func failing() throws {
        let db = try Database(path: temporaryPath())
        let bad = Migration(name: "0001_bad", sql: "CREATE TABLE ok (x INTEGER) STRICT; CREATE TABLE broken (;")
        #expect(throws: SQLiteError.self) { try Migrator(migrations: [bad]).migrate(db, now: 1) }
        #expect(try db.scalarInt("SELECT count(*) FROM sqlite_schema WHERE name = 'ok'") == 0)
    }
}
