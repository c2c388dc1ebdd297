import Foundation
import TestSupport
import Testing
import WxCore
import WxPostgres
import WxReplay

@testable import WxCLI

/// Issue 30 for issue 31's ensembles: the same history, built through the CLI and the replay server
/// with both clocks pinned, prints the same bytes on PostgreSQL as on SQLite — verify, the rank
/// histogram, reliability, compare, export members, verif's ensemble columns, prune and what is kept
/// after it, and a copy of the PostgreSQL database back to SQLite.
@Suite("Ensembles on both engines", .serialized)
struct EnsembleEnginesTests {
    /// What a user reads of the ensemble, before and after a prune.
    static let before: [(String, [String])] = [
        ("verify-json", ["query", "verify", "--location", "Bern", "--model", "icon_d2_eps", "--format", "json"]),
        (
            "verify-csv",
            [
                "query", "verify", "--location", "Bern", "--model", "icon_d2_eps", "--source", "station", "--format",
                "csv"
            ]
        ),
        ("verify-table", ["query", "verify", "--location", "Bern"]),
        ("ensemble-json", ["query", "ensemble", "--location", "Bern", "--source", "station", "--format", "json"]),
        ("ranks-csv", ["query", "ensemble", "--location", "Bern", "--show", "ranks", "--format", "csv"]),
        (
            "reliability-json",
            [
                "query", "ensemble", "--location", "Bern", "--show", "reliability", "--threshold", "15", "--format",
                "json"
            ]
        ),
        (
            "compare-json",
            [
                "query", "compare", "--location", "Bern", "--models", "icon_d2_eps,icon_seamless", "--source",
                "station", "--format", "json"
            ]
        ),
        ("members", ["export", "members", "--location", "Bern"]),
        (
            "verif",
            [
                "export", "pairs", "--location", "Bern", "--model", "icon_d2_eps", "--source", "station", "--format",
                "verif"
            ]
        ),
        ("prune-dry-run", ["prune", "--keep-days", "4", "--dry-run"])
    ]
    static let after: [(String, [String])] = [
        ("prune", ["prune", "--keep-days", "4"]),
        ("pruned-verify-json", before[0].1), ("pruned-ensemble-json", before[3].1), ("pruned-ranks-csv", before[4].1),
        ("pruned-members", before[7].1)
    ]

    /// Each command's exit code, stdout and stderr (where the database is named, as <db>).
    func outputs(_ box: Sandbox, _ commands: [(String, [String])]) async -> [String: String] {
        var answers: [String: String] = [:]
        let db = box.environment["WXDB_DB"] ?? box.db
        for (name, arguments) in commands {
            let result = await box.run(arguments)
            answers[name] = "exit \(result.code)\n\(result.stdout)\n-- stderr --\n\(result.stderrText)"
                .replacing(db, with: "<db>")
        }
        return answers
    }

    @Test(
        "every ensemble output is byte-identical on PostgreSQL and SQLite, before and after prune",
        .enabled(if: StoreEngine.all.contains(.postgres), "PostgreSQL's programs are not installed"))
    func sameBytes() async throws {
        var printed: [StoreEngine: [String: String]] = [:]
        for engine in [StoreEngine.sqlite, .postgres] {
            let (server, box) = try await EnsembleVerifyCompareTests().setUp(engine: engine)
            defer {
                server.stop()
                box.remove()
            }
            var answers = await outputs(box, Self.before)
            answers.merge(await outputs(box, Self.after)) { a, _ in a }
            printed[engine] = answers
        }
        let sqlite = try #require(printed[.sqlite])
        let postgres = try #require(printed[.postgres])
        for (name, _) in Self.before + Self.after {
            let a = try #require(sqlite[name])
            #expect(a.hasPrefix("exit 0\n"), "\(name) on SQLite: \(a.prefix(300))")
            #expect(
                a == postgres[name],
                "\(name) differs on PostgreSQL:\n\(a.prefix(600))\n---\n\(postgres[name]?.prefix(600) ?? "")")
        }
        // The history is rich enough to mean something: prune took members, and the scores after it are the same.
        #expect(sqlite["prune"]?.contains("and the members of") == true, "\(sqlite["prune"] ?? "")")
        #expect(sqlite["pruned-verify-json"] == sqlite["verify-json"])
        #expect(sqlite["pruned-members"] != sqlite["members"])
    }

    @Test(
        "doctor --deep checks the kept ensemble sums against the members and finds damaged ones, --repair restores them; stats counts them",
        arguments: StoreEngine.all)
    func doctorAndStats(engine: StoreEngine) async throws {
        let (server, box) = try await EnsembleExportReportTests().setUp(engine: engine)
        defer {
            server.stop()
            box.remove()
        }
        let good = await box.run("doctor", "--deep")
        #expect(good.code == 0, "\(good.stdout)\(good.stderrText)")
        #expect(good.stdout.contains(#/ensembles: [1-9][0-9]* group\(s\) match the members/#), "\(good.stdout)")
        let stats = await box.run("stats", "--format", "json")
        for table in ["ensemble_runs", "ensemble_values", "ensemble_summaries"] {
            #expect(stats.stdout.contains("\"\(table)\""), "\(table) not in stats: \(stats.stdout)")
        }
        // What the kept sums answer, before they are damaged and after they are repaired.
        let reads = [
            ["query", "ensemble", "--location", "Bern", "--format", "json"],
            ["query", "ensemble", "--location", "Bern", "--show", "ranks", "--format", "csv"],
            ["query", "verify", "--location", "Bern", "--model", "icon_d2_eps", "--format", "json"]
        ]
        var before: [String] = []
        for read in reads { before.append((await box.run(read)).stdout) }
        // A changed sum in every temperature group, and the first lead bucket's groups gone.
        for damage in [
            "UPDATE ensemble_summaries SET sum_under = sum_under + 1 WHERE variable = 'temperature_2m'",
            "DELETE FROM ensemble_summaries WHERE lead_from_h = 0"
        ] {
            switch engine {
            case .sqlite: try SQLiteBackdoor(box.db).db.run(damage)
            case .postgres: _ = try PostgresConnection(conninfo: try #require(box.environment["WXDB_DB"])).run(damage)
            }
        }
        let bad = await box.run("doctor", "--deep")
        #expect(bad.code == 1)
        #expect(bad.stderrText.contains("ensemble sum group(s) differ from the stored members"), "\(bad.stderrText)")
        #expect(bad.stderrText.contains("wxdb doctor --deep --repair"), "\(bad.stderrText)")
        #expect((await box.run(reads[0])).stdout != before[0], "the damage shows in what query ensemble prints")
        let repair = await box.run("doctor", "--deep", "--repair")
        #expect(repair.code == 0, "\(repair.stdout)\(repair.stderrText)")
        #expect(
            repair.stdout.contains(#/ensembles: repaired [1-9][0-9]* of [1-9][0-9]* group\(s\) from the members/#),
            "\(repair.stdout)")
        let again = await box.run("doctor", "--deep")
        #expect(again.code == 0, "\(again.stdout)\(again.stderrText)")
        #expect(again.stdout.contains(#/ensembles: [1-9][0-9]* group\(s\) match the members/#), "\(again.stdout)")
        for (read, printed) in zip(reads, before) {
            #expect((await box.run(read)).stdout == printed, "\(read.joined(separator: " ")) after the repair")
        }
    }

    /// The scores come from the kept sums, so a copy without ensemble_summaries scored nothing.
    @Test(
        "copy carries ensemble runs, members and kept sums from SQLite to PostgreSQL and back; scores survive",
        .enabled(if: StoreEngine.all.contains(.postgres), "PostgreSQL's programs are not installed"))
    func copyBothWays() async throws {
        let (server, box) = try await EnsembleExportReportTests().setUp(engine: .sqlite)
        defer {
            server.stop()
            box.remove()
        }
        let commands: [(String, [String])] = [
            ("verify", ["query", "verify", "--location", "Bern", "--model", "icon_d2_eps", "--format", "json"]),
            ("ranks", ["query", "ensemble", "--location", "Bern", "--show", "ranks", "--format", "csv"]),
            ("members", ["export", "members", "--location", "Bern"])
        ]
        let original = await outputs(box, commands)
        #expect(original["verify"]?.hasPrefix("exit 0\n") == true, "\(original["verify"] ?? "")")
        let postgres = try StoreEngine.postgres.freshDatabase("ensemble-copy")
        let back = box.folder.appendingPathComponent("back.sqlite").path
        for (from, to) in [(box.db, postgres), (postgres, back)] {
            let copy = await box.run("copy", "--from", from, "--to", to, "--format", "json")
            #expect(copy.code == 0, "\(copy.stderrText)")
            let counts = try copiedCounts(copy.stdout)
            for table in ["ensemble_runs", "ensemble_values", "ensemble_summaries"] {
                let pair = try #require(counts[table], "\(table) not in \(counts.keys.sorted())")
                #expect(pair.0 > 0 && pair.0 == pair.1, "\(table): \(pair)")
            }
        }
        for db in [postgres, back] {
            box.environment["WXDB_DB"] = db
            let copied = await outputs(box, commands)
            for (name, _) in commands { #expect(copied[name] == original[name], "\(name) differs on the copy") }
        }
    }
}
