import Foundation
import TestSupport
import Testing
import WxSQLite

@Suite("Opening someone else's file read-only")
struct ReadOnlyURITests {
    @Test(
        "a path with URI syntax in it opens the right file, read-only, without creating anything",
        arguments: [
            "plain.db", "with space.db", "what?mode=rw.db", "hash#tag.db", "percent%41.db", "ümlaut.db"
        ])
    func readOnly(_ name: String) throws {
        let folder = Scratch.folder("uri")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent(name).path
        do {
            var options = Database.Options()
            options.walMode = false
            let db = try Database(path: path, options: options)
            try db.execute("CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (42)")
        }
        let before = FileManager.default.contents(atPath: path)
        let db = try Database(path: path, options: .foreignReadOnly)
        #expect(try db.scalarInt("SELECT x FROM t") == 42)
        #expect(throws: SQLiteError.self) { try db.execute("INSERT INTO t VALUES (1)") }
        #expect(FileManager.default.contents(atPath: path) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path) == [name])

        // A file that is not there is not created.
        let missing = folder.appendingPathComponent("missing-" + name).path
        #expect(throws: SQLiteError.self) { try Database(path: missing, options: .foreignReadOnly) }
        #expect(!FileManager.default.fileExists(atPath: missing))
    }
}
