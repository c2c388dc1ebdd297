import Foundation
import TestSupport
import Testing
import WxPostgres

/// A fresh database on the test server, connected over its socket.
func freshDatabase() throws -> (PostgresConnection, name: String) {
    let server = try PostgresServer.shared()
    let name = try server.createDatabase()
    return (try PostgresConnection(conninfo: server.conninfo(database: name)), name)
}

/// The text strings that break naive SQL, CSV and COPY writers.
let hostileStrings = [
    "", " ", "plain", "O'Brien", "\"quoted\"", "semi;colon", "back\\slash", "\\.", "\\N", "NULL", "tab\there",
    "new\nline", "cr\r\nlf", "trailing\\", "'); DROP TABLE t; --", "$1", "%s", "é 雪 🌧 \u{202E}",
    "\u{1}\u{7F}", String(repeating: "x", count: 100_000)
]

@Suite("PostgreSQL client", .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresClientTests {
    @Test("connects over the socket and over TCP with a password, and says which server it talks to")
    func connects() throws {
        let server = try PostgresServer.shared()
        let socket = try PostgresConnection(conninfo: server.conninfo())
        #expect(socket.serverVersion >= 150_000)
        let tcp = try PostgresConnection(conninfo: server.tcpURI())
        #expect(try tcp.scalarInt("SELECT 1 + 1") == 2)
        #expect(!tcp.target.contains(server.password))
        #expect(PostgresConnection.libraryVersion >= 150_000)
    }

    @Test("parameters carry any text, integer and double exactly, NULL included")
    func parameters() throws {
        let (db, _) = try freshDatabase()
        try db.execute("CREATE TABLE t (i bigint, s text, d double precision)")
        let doubles = [0.1, -0.0, 1e-300, 5e-324, Double.greatestFiniteMagnitude, 1.0 / 3.0, 21.7]
        for (index, text) in hostileStrings.enumerated() {
            let d = doubles[index % doubles.count]
            try db.run("INSERT INTO t (i, s, d) VALUES ($1, $2, $3)", [.integer(Int64(index)), .text(text), .real(d)])
        }
        try db.run("INSERT INTO t (i, s, d) VALUES ($1, $2, $3)", [.integer(Int64.min), .null, .null])
        let back = try db.rows("SELECT i, s, d FROM t WHERE s IS NOT NULL ORDER BY i") {
            (i: $0.int64(0), s: $0.string(1), d: $0.double(2))
        }
        #expect(back.map(\.s) == hostileStrings)
        #expect(
            back.map(\.d).map(\.bitPattern) == hostileStrings.indices.map { doubles[$0 % doubles.count].bitPattern })
        #expect(try db.scalarInt("SELECT i FROM t WHERE s IS NULL") == Int64.min)
        #expect(
            try db.firstRow("SELECT s, d FROM t WHERE s IS NULL") {
                [$0.optionalString(0), $0.optionalDouble(1).map { "\($0)" }]
            } == [nil, nil])
    }

    @Test("COPY stores hostile strings, NULLs and doubles exactly as given")
    func copyRoundTrip() throws {
        let (db, _) = try freshDatabase()
        try db.execute("CREATE TABLE t (i bigint, s text, d double precision)")
        let stored = try db.copy(into: "t", columns: ["i", "s", "d"]) { rows in
            for (index, text) in hostileStrings.enumerated() {
                rows.append(Int64(index))
                try rows.append(text)
                rows.append(index % 3 == 0 ? nil : Double(index) / 7)
                try rows.endRow()
            }
            // Enough rows to cross several 64 kB blocks.
            for index in 0..<20_000 {
                rows.append(Int64(1000 + index))
                try rows.append(nil as String?)
                rows.append(Double(index) * 0.1)
                try rows.endRow()
            }
        }
        #expect(stored == hostileStrings.count + 20_000)
        let back = try db.rows("SELECT s, d FROM t WHERE i < 1000 ORDER BY i") { ($0.string(0), $0.optionalDouble(1)) }
        #expect(back.map(\.0) == hostileStrings)
        #expect(back.map(\.1) == hostileStrings.indices.map { $0 % 3 == 0 ? nil : Double($0) / 7 })
        #expect(try db.scalarInt("SELECT count(*) FROM t WHERE s IS NULL AND i >= 1000") == 20_000)
        #expect(try db.scalarText("SELECT sum(d)::text FROM t WHERE i >= 1000") != nil)
    }

    @Test("a COPY whose rows fail midway stores nothing and leaves the connection usable")
    func copyAborted() throws {
        let (db, _) = try freshDatabase()
        try db.execute("CREATE TABLE t (i bigint PRIMARY KEY, s text)")
        struct Stop: Error {}
        #expect(throws: Stop.self) {
            try db.copy(into: "t", columns: ["i", "s"]) { rows in
                for index in 0..<50_000 {
                    rows.append(Int64(index))
                    try rows.append("row")
                    try rows.endRow()
                }
                throw Stop()
            }
        }
        #expect(throws: CopyValueError.self) {
            try db.copy(into: "t", columns: ["i", "s"]) { rows in
                rows.append(Int64(1))
                try rows.append("bad\u{0}")
                try rows.endRow()
            }
        }
        // The server's own refusal (a duplicate key) is reported as a constraint error.
        let duplicate = #expect(throws: PostgresError.self) {
            try db.copy(into: "t", columns: ["i", "s"]) { rows in
                for _ in 0..<2 {
                    rows.append(Int64(7))
                    try rows.append("twice")
                    try rows.endRow()
                }
            }
        }
        #expect(duplicate?.kind == .constraint)
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 0)
    }

    @Test("a stream hands out rows as they come, before the statement has finished")
    func streams() throws {
        let (db, _) = try freshDatabase()
        var sum: Int64 = 0
        var count = 0
        try db.stream("SELECT i FROM generate_series(1, $1::int) i", [.integer(200_000)]) { row in
            sum += row.int64(0)
            count += 1
        }
        #expect(count == 200_000)
        #expect(sum == 200_000 * 200_001 / 2)
        // The statement fails at its 1,000th row: a buffering reader would get no row at all,
        // a streaming one gets the 999 before it, then the error.
        var seen = 0
        let failure = #expect(throws: PostgresError.self) {
            try db.stream("SELECT 1 / (1000 - i) FROM generate_series(1, 5000) i") { _ in seen += 1 }
        }
        #expect(seen == 999)
        #expect(failure?.sqlState == "22012")
        #expect(try db.scalarInt("SELECT 5") == 5)
    }

    @Test("a reader that stops a stream early cancels it and the connection takes the next statement")
    func streamStoppedEarly() throws {
        let (db, _) = try freshDatabase()
        struct Enough: Error {}
        var seen = 0
        #expect(throws: Enough.self) {
            try db.stream("SELECT i FROM generate_series(1, 10000000) i") { _ in
                seen += 1
                if seen == 10 { throw Enough() }
            }
        }
        #expect(seen == 10)
        #expect(try db.scalarInt("SELECT 42") == 42)
    }

    @Test("a transaction stores all of its writes or none")
    func transactions() throws {
        let (db, _) = try freshDatabase()
        try db.execute("CREATE TABLE t (i bigint PRIMARY KEY)")
        struct Fail: Error {}
        #expect(throws: Fail.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES ($1)", [.integer(1)])
                try db.copy(into: "t", columns: ["i"]) { rows in
                    rows.append(Int64(2))
                    try rows.endRow()
                }
                throw Fail()
            }
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 0)
        #expect(!db.isInTransaction)
        try db.transaction {
            try db.run("INSERT INTO t VALUES ($1)", [.integer(1)])
            try db.run("INSERT INTO t VALUES ($1)", [.integer(2)])
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 2)
        // A failing statement inside aborts the whole transaction.
        #expect(throws: PostgresError.self) {
            try db.transaction {
                try db.run("INSERT INTO t VALUES ($1)", [.integer(3)])
                try db.run("INSERT INTO t VALUES ($1)", [.integer(1)])
            }
        }
        #expect(try db.scalarInt("SELECT count(*) FROM t") == 2)
    }

    @Test("an advisory lock held by one session is refused to another until released")
    func advisoryLocks() throws {
        let server = try PostgresServer.shared()
        let a = try PostgresConnection(conninfo: server.conninfo())
        let b = try PostgresConnection(conninfo: server.conninfo())
        #expect(try a.tryLock(17))
        #expect(try !b.tryLock(17))
        #expect(try b.tryLock(18))
        #expect(try a.unlock(17))
        #expect(try b.tryLock(17))
        #expect(try !a.unlock(17))
        try b.unlock(17)
        try b.unlock(18)
    }
}

@Suite(
    "PostgreSQL errors say what to do",
    .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresErrorTests {
    func failure(_ conninfo: String) -> PostgresError? {
        do {
            _ = try PostgresConnection(conninfo: conninfo)
            return nil
        } catch {
            return error as? PostgresError
        }
    }

    @Test("no server at the address: 'start the server', nothing of the password")
    func serverNotRunning() throws {
        let server = try PostgresServer.shared()
        // The server's own folder holds its socket; a port nothing listens on has none.
        let error = try #require(failure("postgresql://wxdb:hunter2@127.0.0.1:1/wx"))
        #expect(error.kind == .serverNotRunning)
        #expect(error.description.contains("Start the server"))
        #expect(!error.description.contains("hunter2"))
        let socket = try #require(failure("host=\(server.folder) port=1 user=wxdb password=hunter2"))
        #expect(socket.kind == .serverNotRunning)
        #expect(!socket.description.contains("hunter2"))
    }

    @Test("a wrong password: 'check your passfile', and the password is not shown")
    func wrongPassword() throws {
        let server = try PostgresServer.shared()
        let error = try #require(failure(server.tcpURI(password: "not-the-password")))
        #expect(error.kind == .authentication)
        #expect(error.description.contains("passfile"))
        #expect(!error.description.contains("not-the-password"))
    }

    @Test("a database that does not exist is named as such")
    func noSuchDatabase() throws {
        let server = try PostgresServer.shared()
        let error = try #require(failure(server.conninfo(database: "no_such_db")))
        #expect(error.kind == .noSuchDatabase)
    }

    @Test("a statement stopped by statement_timeout says so")
    func statementTimeout() throws {
        let (db, _) = try freshDatabase()
        try db.execute("SET statement_timeout = '20ms'")
        let error = #expect(throws: PostgresError.self) { try db.run("SELECT pg_sleep(10)") }
        #expect(error?.kind == .statementTimeout)
        #expect(error?.description.contains("statement_timeout") == true)
        try db.execute("SET statement_timeout = 0")
        #expect(try db.scalarInt("SELECT 3") == 3)
    }

    @Test("a connection the server ends (pg_terminate_backend) reports a lost connection, mid-transaction too")
    func connectionKilled() throws {
        let server = try PostgresServer.shared()
        let (victim, name) = try freshDatabase()
        let admin = try PostgresConnection(conninfo: server.conninfo(database: name))
        try victim.execute("CREATE TABLE t (i bigint)")
        try victim.execute("BEGIN")
        try victim.run("INSERT INTO t VALUES (1)")
        #expect(
            try admin.firstRow("SELECT pg_terminate_backend($1)", [.integer(Int64(victim.backendPID))]) { $0.bool(0) }
                == true)
        let error = #expect(throws: PostgresError.self) { try victim.run("INSERT INTO t VALUES (2)") }
        #expect(error?.kind == .connectionLost)
        #expect(!victim.isOpen)
        #expect(try admin.scalarInt("SELECT count(*) FROM t") == 0)
    }
}
