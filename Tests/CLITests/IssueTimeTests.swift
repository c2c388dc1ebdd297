import Foundation
import TestSupport
import Testing
import WxCore
import WxReplay
import WxSQLite

@testable import WxCLI

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Issue 25 §3: issue times the best source can correct.
@Suite("issue times: imported runs, --issued-at, answers for another run", .serialized)
struct IssueTimeTests {
    /// 2026-07-25T17:20Z, on the server and in wxdb.
    static let now: Int64 = 1_785_000_000

    func sandbox() throws -> ReplaySandbox {
        let replay = try ReplaySandbox()
        let clock = Date(timeIntervalSince1970: TimeInterval(Self.now))
        replay.box.now = clock
        replay.server.now = { clock }
        replay.box.environment["WXDB_SINGLE_RUNS_URL"] = replay.server.baseURL + ReplayServer.singleRunsPath
        return replay
    }

    func addField(_ replay: ReplaySandbox) async {
        #expect(
            await replay.run(
                "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin",
                "--models", "icon_seamless"
            ).code == 0)
    }

    /// (issued_at, issued_at_source) of every run, in the order stored.
    func runs(_ replay: ReplaySandbox) throws -> [(Int64, String)] {
        try replay.box.storedRuns().map { ($0.issuedAt, $0.issuedAtSource) }
    }

    func singleRunRequests(_ replay: ReplaySandbox) -> [String] {
        replay.server.requests.filter { $0.hasPrefix(ReplayServer.singleRunsPath) }
    }

    /// The archive's answer for the one run a one-day, once-a-day backfill asks for, saved as a file
    /// (what a user saved from the Single Runs API, or from the live API while that run was the latest),
    /// and that run's time.
    func savedAnswer(_ replay: ReplaySandbox) async throws -> (path: String, run: Int64) {
        let scout = Sandbox()
        defer { scout.remove() }
        scout.environment = replay.box.environment
        scout.environment["WXDB_DB"] = scout.db
        scout.now = replay.box.now
        await scout.run(
            "locations", "add", "Field", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin", "--models",
            "icon_seamless")
        #expect(await scout.run("backfill", "--location", "Field", "--days", "1", "--every", "24").code == 0)
        let request = try #require(singleRunRequests(replay).last)
        let (data, _) = try await URLSession.shared.data(
            from: try #require(URL(string: replay.server.baseURL + request)))
        replay.server.resetLog()
        let path = try replay.box.write("saved-run.json", String(decoding: data, as: UTF8.self))
        let run = try #require(try scout.storedRuns().first?.issuedAt)
        return (path, run)
    }

    @Test("backfill corrects an imported run's issue time to the run's and asks nothing the next time")
    func backfillCorrectsImportedRun() async throws {
        let replay = try sandbox()
        await addField(replay)
        let saved = try await savedAnswer(replay)
        let fetched = saved.run + 8 * 3600
        #expect(
            await replay.run("import", saved.path, "--location", "Field", "--fetched-at", CivilTime.isoUTC(fetched))
                .code == 0)
        #expect(try runs(replay).map(\.1) == ["first_fetch"])
        let listed = await replay.run("query", "runs", "--location", "Field", "--format", "json")
        #expect(listed.stderrText.contains("measured from their first fetch"), "\(listed.stderrText)")
        #expect(
            try parseJSON(listed.stdout)["runs"]?.arrayValue?.first?["measured_from_fetch"]?.numberValue == 1,
            "\(listed.stdout)")

        let first = await replay.run("backfill", "--location", "Field", "--days", "1", "--every", "24")
        #expect(first.code == 0, "\(first.stderrText)")
        #expect(singleRunRequests(replay).count == 1)
        // Before: the run kept issued_at = the fetch (8 h of lead too few) and its source first_fetch.
        let corrected = try runs(replay)
        #expect(corrected.count == 1)
        #expect(corrected.first?.0 == saved.run && corrected.first?.1 == "single_run", "\(corrected)")
        let deep = await replay.run("doctor", "--deep")
        #expect(deep.code == 0, "\(deep.stdout)\(deep.stderrText)")

        replay.server.resetLog()
        let again = await replay.run("backfill", "--location", "Field", "--days", "1", "--every", "24")
        #expect(again.code == 0, "\(again.stderrText)")
        // Before: the run was asked for again on every rerun.
        #expect(singleRunRequests(replay).isEmpty, "\(replay.server.requests)")
        #expect(again.stderrText.contains("1 already present"), "\(again.stderrText)")
    }

    @Test("a run ingested without model metadata is recognised in the archive's answer and takes its time")
    func backfillCorrectsIngestedRun() async throws {
        let replay = try sandbox()
        await addField(replay)
        // No meta.json: the live run is measured from its fetch.
        let meta = replay.box.environment["WXDB_META_URL"]
        replay.box.environment["WXDB_META_URL"] = "http://127.0.0.1:9/data"
        #expect(await replay.run("ingest").code == 0)
        replay.box.environment["WXDB_META_URL"] = meta
        let live = try runs(replay)
        #expect(live.map(\.1) == ["first_fetch"] && live.first?.0 == Self.now, "\(live)")
        let latest = Int64(replay.server.latestRun(model: "icon_seamless"))

        let first = await replay.run("backfill", "--location", "Field", "--days", "1", "--every", "6")
        #expect(first.code == 0, "\(first.stderrText)")
        let after = try runs(replay)
        // Before: the live run kept issued_at = its fetch, beside the archive's runs.
        #expect(after.contains { $0 == (latest, "single_run") }, "\(after)")
        #expect(!after.contains { $0.1 == "first_fetch" }, "\(after)")
        replay.server.resetLog()
        #expect(await replay.run("backfill", "--location", "Field", "--days", "1", "--every", "6").code == 0)
        #expect(singleRunRequests(replay).isEmpty)
    }

    @Test("import --issued-at gives the run its initialisation time, also to a run imported before")
    func importIssuedAt() async throws {
        let replay = try sandbox()
        await addField(replay)
        let saved = try await savedAnswer(replay)
        let fetched = CivilTime.isoUTC(saved.run + 8 * 3600)
        let after = await replay.run(
            "import", saved.path, "--location", "Field", "--fetched-at", fetched, "--issued-at",
            CivilTime.isoUTC(saved.run + 9 * 3600))
        #expect(after.code == 1 && after.stderrText.contains("is after --fetched-at"), "\(after.stderrText)")
        #expect(try runs(replay).isEmpty)

        #expect(await replay.run("import", saved.path, "--location", "Field", "--fetched-at", fetched).code == 0)
        let given = await replay.run(
            "import", saved.path, "--location", "Field", "--fetched-at", fetched, "--issued-at",
            CivilTime.isoUTC(saved.run))
        #expect(given.code == 0, "\(given.stderrText)")
        #expect(try runs(replay).map(\.0) == [saved.run])
        #expect(try runs(replay).map(\.1) == ["model_run"])
        let listed = await replay.run("query", "runs", "--location", "Field")
        #expect(!listed.stderrText.contains("measured from their first fetch"))
        // A known issue time: the backfill has it already.
        let backfill = await replay.run("backfill", "--location", "Field", "--days", "1", "--every", "24")
        #expect(backfill.code == 0)
        #expect(singleRunRequests(replay).isEmpty)
    }

    @Test(
        "an answer holding another run's hours is refused, not stored as the run asked for",
        arguments: [72 * 3600, -48 * 3600, 48 * 3600])
    func otherRunRefused(_ shift: Int) async throws {
        let replay = try sandbox()
        await addField(replay)
        replay.server.enqueue(.otherRun(seconds: shift), path: ReplayServer.singleRunsPath)
        let result = await replay.run("backfill", "--location", "Field", "--days", "1", "--every", "24")
        // Before: stored with issued_at = the run asked for, its hours days away from it.
        #expect(result.code != 0)
        #expect(result.stderrText.contains("not the window of run"), "\(result.stderrText)")
        #expect(try runs(replay).isEmpty)
    }
}
