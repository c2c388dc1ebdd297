import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxPostgresStore
import WxStore
import WxStoreSQLite

@testable import WxCLI

// wxdb copy of a whole CLI-built history through PostgreSQL. These need the PostgreSQL schema level with
// SQLite's (migration 0002: direction sums, ensembles), which the engine's writes bring.
@Suite(
    "wxdb copy through PostgreSQL: a whole history there and back",
    .serialized, .enabled(if: PostgresServer.enabled, Comment(rawValue: PostgresServer.skipReason ?? "")))
struct PostgresCopyRoundTripTests {
    @Test("SQLite to PostgreSQL and back to SQLite: the same outputs and the same counts on every side")
    func roundTrip() async throws {
        let server = try PostgresServer.shared()
        let postgres = server.conninfo(database: try server.createDatabase("copy"))
        let replay = try await buildCopyHistory(ensembles: false)
        let there = await replay.box.run(["copy", "--from", replay.box.db, "--to", postgres, "--format", "json"])
        #expect(there.code == 0, "\(there.stderrText)")
        let back = replay.box.folder.appendingPathComponent("back.sqlite").path
        let home = await replay.box.run(["copy", "--from", postgres, "--to", back, "--format", "json"])
        #expect(home.code == 0, "\(home.stderrText)")
        let toCounts = try copiedCounts(there.stdout)
        let backCounts = try copiedCounts(home.stdout)
        for (table, pair) in toCounts {
            #expect(pair.0 == pair.1, "to PostgreSQL, \(table): \(pair)")
            #expect(backCounts[table]?.0 == pair.0 && backCounts[table]?.1 == pair.0, "back, \(table)")
        }
        #expect((toCounts["hourly_forecasts"]?.0 ?? 0) > 0 && (toCounts["verification_summaries"]?.0 ?? 0) > 0)
        let before = await copyOutputs(replay.box, db: replay.box.db, ensembles: false)
        let after = await copyOutputs(replay.box, db: back, ensembles: false)
        for name in before.keys.sorted() {
            #expect(before[name] == after[name], "\(name) differs after SQLite → PostgreSQL → SQLite")
        }
        // A second copy into the now full PostgreSQL database is refused, and changes nothing there.
        let again = await replay.box.run(["copy", "--from", replay.box.db, "--to", postgres])
        #expect(again.code == 1 && again.stderrText.contains("already holds"), "\(again.stderrText)")
    }
}
