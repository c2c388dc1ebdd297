import Foundation
import TestSupport
import Testing

@testable import WxSQLite

#if canImport(Glibc)
    import Glibc
#endif

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
        .enabled(if: FileManager.default.fileExists(atPath: "/proc/self/maps"), "needs Linux"))
    func loadedByOpen() throws {
        let db = try Database(path: temporaryPath())
        #expect(try db.scalarInt("SELECT 40 + 2") == 42)
        // RTLD_NOLOAD answers only for a library already in the process (reading /proc/self/maps
        // with Foundation came back cut short in a busy test process).
        let handle = dlopen("libsqlite3.so.0", RTLD_NOLOAD | RTLD_LAZY)
        #expect(handle != nil, "libsqlite3.so.0 is not loaded after opening a database")
        if let handle { dlclose(handle) }
        #expect(Database.libraryVersion == (try db.scalarText("SELECT sqlite_version()")))
        #expect(throws: SQLiteError.self) { try db.execute("SELECT * FROM no_such_table") }
    }
}
