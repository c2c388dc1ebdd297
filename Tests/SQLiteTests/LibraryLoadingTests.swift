import Foundation
import TestSupport
import Testing

@testable import WxSQLite

@Suite("libsqlite3 is opened when a database is, not linked")
struct LibraryLoadingTests {
    @Test(
        "the binary holding WxSQLite does not list libsqlite3 among its libraries",
        .enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/ldd"), "needs ldd (Linux)"))
    func notLinked() throws {
        // This test binary links every module wxdb does, CSQLite included; a `link "sqlite3"` in the
        // module map (or a pkgConfig on the target) would put libsqlite3 here and into every wxdb start.
        let result = try Subprocess.run("/usr/bin/ldd", [CommandLine.arguments[0]])
        let libraries = String(decoding: result.output, as: UTF8.self)
        #expect(libraries.contains("libc.so"), "ldd printed: \(libraries)")
        #expect(!libraries.contains("libsqlite3"), "libsqlite3 is linked: \(libraries)")
    }

    @Test(
        "opening a database loads libsqlite3, and its version and errors read as before",
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/maps"), "needs /proc (Linux)"))
    func loadedByOpen() throws {
        let db = try Database(path: temporaryPath())
        #expect(try db.scalarInt("SELECT 40 + 2") == 42)
        let maps = try String(contentsOfFile: "/proc/self/maps", encoding: .utf8)
        #expect(maps.contains("libsqlite3"))
        #expect(Database.libraryVersion == (try db.scalarText("SELECT sqlite_version()")))
        #expect(throws: SQLiteError.self) { try db.execute("SELECT * FROM no_such_table") }
    }
}
