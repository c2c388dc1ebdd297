import Foundation
import TestSupport
import Testing

@testable import WxPostgres

@Suite("PostgreSQL connection strings: engine choice and redaction")
struct ConnectionStringTests {
    @Test(
        "--db text selects the engine: PostgreSQL URIs and libpq keyword strings, anything else a SQLite path",
        arguments: [
            ("postgres://localhost/wx", true),
            ("postgresql://u@h:5432/wx?sslmode=require", true),
            ("POSTGRESQL://h/wx", true),
            ("postgresql://", true),
            ("service=wx", true),
            ("host=/tmp dbname=wx", true),
            ("  dbname = 'my db' user=me", true),
            ("wxdb.sqlite", false),
            ("/var/lib/wxdb/a=b.sqlite", false),
            ("a=b.sqlite", false),
            ("postgres.sqlite", false),
            ("./postgres://x", false),
            ("", false)
        ])
    func engineChoice(text: String, postgres: Bool) {
        #expect(ConnectionString.isPostgres(text) == postgres)
        #expect(DatabaseTarget(text) == (postgres ? .postgres(conninfo: text) : .sqlite(path: text)))
    }

    @Test(
        "a password never survives redaction, in any form libpq accepts",
        arguments: [
            ("postgresql://alice:s3cr%40t@db.example:5432/wx", "postgresql://alice@db.example:5432/wx"),
            ("postgres://alice:pw@h/wx?sslmode=require&password=pw2", "postgres://alice@h/wx?sslmode=require"),
            ("postgresql://h/wx?password=only", "postgresql://h/wx"),
            ("postgresql://al:p@ss@h/wx", "postgresql://al@h/wx"),
            ("postgresql://alice@h/wx", "postgresql://alice@h/wx"),
            ("host=h password=hunter2 dbname=wx", "host=h dbname=wx"),
            ("host=h password='two words\\' q' dbname='my db'", "host=h dbname='my db'"),
            ("PASSWORD=hunter3 service=wx sslpassword=y", "service=wx"),
            ("service=wx", "service=wx")
        ])
    func redaction(conninfo: String, shown: String) {
        #expect(ConnectionString.redacted(conninfo) == shown)
        for secret in ConnectionString.secrets(in: conninfo) {
            #expect(!ConnectionString.redacted(conninfo).contains(secret))
        }
    }

    @Test("messages that quote the connection string or the password lose the password")
    func scrubbing() {
        let uri = "postgresql://alice:s3cr%40t@db.example/wx"
        let text = "could not connect to \(uri): password s3cr@t and s3cr%40t rejected"
        let scrubbed = ConnectionString.scrub(text, conninfo: uri)
        #expect(!scrubbed.contains("s3cr"))
        #expect(scrubbed.contains("postgresql://alice@db.example/wx"))
        let keywords = "host=h password='p w' dbname=wx"
        #expect(!ConnectionString.scrub("login with p w failed", conninfo: keywords).contains("p w"))
        #expect(DatabaseTarget(uri).displayName == "postgresql://alice@db.example/wx")
    }

    @Test("every PostgresError names the server without its password")
    func errorsAreRedacted() {
        let target = ConnectionString.redacted("postgresql://u:topsecret@h/wx")
        for kind in [PostgresError.Kind.serverNotRunning, .authentication, .statementTimeout, .connectionLost, .other] {
            let text = PostgresError(kind: kind, message: "m", target: target).description
            #expect(!text.contains("topsecret"))
            #expect(text.contains("postgresql://u@h/wx"))
        }
    }
}

@Suite("COPY text format")
struct CopyFormatTests {
    @Test(
        "values are escaped so no text can end a field, a row or the data",
        arguments: [
            ("plain", "plain"),
            ("tab\there", "tab\\there"),
            ("new\nline", "new\\nline"),
            ("cr\rlf", "cr\\rlf"),
            ("back\\slash", "back\\\\slash"),
            ("\\.", "\\\\."),
            ("\\N", "\\\\N"),
            ("é 雪 🌧", "é 雪 🌧")
        ])
    func escaping(value: String, written: String) throws {
        let writer = CopyWriter(columns: 2) { _ in true }
        try writer.append(value)
        writer.appendNull()
        try writer.endRow()
        #expect(String(decoding: writer.pending, as: UTF8.self) == written + "\t\\N\n")
    }

    @Test("a NUL byte in a text value is refused, not cut short")
    func nul() {
        let writer = CopyWriter(columns: 1) { _ in true }
        #expect(throws: CopyValueError.self) { try writer.append("a\u{0}b") }
    }

    @Test("doubles are written so float8 reads them back exactly")
    func doubles() throws {
        let writer = CopyWriter(columns: 5) { _ in true }
        for value in [0.1, -2.5e-300, Double.infinity, -Double.infinity, Double.nan] { writer.append(value) }
        try writer.endRow()
        #expect(String(decoding: writer.pending, as: UTF8.self) == "0.1\t-2.5e-300\tInfinity\t-Infinity\tNaN\n")
    }
}

@Suite("binary COPY rows")
struct BinaryCopyRowTests {
    @Test("a binary COPY row written whole is byte for byte the row written value by value")
    func wholeRow() throws {
        let floats: [Float?] = [21.3, -0.0, nil, .leastNonzeroMagnitude, .greatestFiniteMagnitude]
        let doubles: [Double?] = [0.1 + 0.2, nil, -0.0, 1e-300, -.greatestFiniteMagnitude]
        func written(whole: Bool) throws -> [UInt8] {
            let writer = BinaryCopyWriter(CopyBuffer(columns: 4) { _ in true })
            for (index, (float, double)) in zip(floats, doubles).enumerated() {
                let number = Int64(index) * -1_234_567_890_123
                if whole {
                    try writer.appendRow { row in
                        row.append(number)
                        if index == 1 { row.appendNull() } else { row.append(Int64(index)) }
                        row.append(float)
                        row.append(double)
                    }
                } else {
                    writer.append(number)
                    if index == 1 { writer.appendNull() } else { writer.append(Int64(index)) }
                    writer.append(float)
                    writer.append(double)
                    try writer.endRow()
                }
            }
            #expect(writer.rows == floats.count)
            return writer.pending
        }
        let expected = try written(whole: false)
        // The signature, flags and header extension are 19 bytes; then per row its field count and values.
        #expect(expected.count > 19 + 5 * 2)
        #expect(try written(whole: true) == expected)
    }
}

@Suite("libpq is opened when used, not linked")
struct LibPQLinkTests {
    @Test(
        "the binary holding WxPostgres does not list libpq among its libraries (it is opened at the first connection)",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ldd"), "needs ldd (Linux)"))
    func notLinked() throws {
        // This test binary links every module wxdb does, CLibPQ included; a `link "pq"` in the
        // module map (or a pkgConfig on the target) would put libpq here and into wxdb.
        let result = try Subprocess.run("/usr/bin/ldd", [CommandLine.arguments[0]])
        let libraries = String(decoding: result.output, as: UTF8.self)
        #expect(libraries.contains("libc.so"), "ldd printed: \(libraries)")
        #expect(!libraries.contains("libpq"), "libpq is linked: \(libraries)")
    }
}
