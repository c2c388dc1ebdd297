import TestSupport
import Testing
import WxStore
import WxStoreSQLite

@testable import WxCLI

@Suite("wxdb ingest --shard K/N", .serialized)
struct IngestShardTests {
    /// How many runs the named location has, as the Store counts them for `query runs`.
    func runs(_ replay: ReplaySandbox, _ name: String) throws -> Int64 {
        let store: any Store = try SQLiteStore.openReadOnly(path: replay.box.db)
        let location = try #require(try store.location(named: name), "no location \(name)")
        return Int64(try store.runCount(locationID: location.id, model: nil))
    }

    @Test("two shards take disjoint locations (id mod N) and together ingest every one exactly once")
    func shardsSplitTheLocations() async throws {
        let replay = try ReplaySandbox()
        try await replay.addThreeRecordedLocations()  // ids 1, 2, 3: Copenhagen, Toronto, Adelaide
        let even = await replay.run("ingest", "--shard", "0/2")
        #expect(even.code == 0, "\(even.stderrText)")
        #expect(try runs(replay, "Toronto") == 1)
        #expect(try runs(replay, "Copenhagen") == 0)
        #expect(try runs(replay, "Adelaide") == 0)
        let odd = await replay.run("ingest", "--shard", "1/2")
        #expect(odd.code == 0, "\(odd.stderrText)")
        #expect(odd.stderrText.contains("2 stored"), "\(odd.stderrText)")
        #expect(try runs(replay, "Copenhagen") == 1)
        #expect(try runs(replay, "Adelaide") == 1)
        #expect(try runs(replay, "Toronto") == 1)
        // A full ingest afterwards finds every location's run already stored.
        let all = await replay.run("ingest")
        #expect(all.stderrText.contains("0 stored, 3 repeated, 0 failed"), "\(all.stderrText)")
    }

    @Test("a shard holding none of the locations says so and exits 0 without fetching")
    func emptyShard() async throws {
        let replay = try ReplaySandbox()
        try await replay.addThreeRecordedLocations()
        let result = await replay.run("ingest", "--shard", "5/8")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("Shard 5/8 holds none of the 3 locations"), "\(result.stderrText)")
        #expect(replay.forecastRequests.isEmpty)
        #expect(try await replay.count("fetch_log") == 0)
    }

    @Test(
        "a --shard that is not K/N with 0 <= K < N is a usage error (exit 64) naming the rule; nothing is fetched",
        arguments: [
            ("2/2", "K from 0 to N-1"), ("3/2", "K from 0 to N-1"), ("0/0", "N of at least 1"),
            ("1", "must be K/N"), ("a/b", "must be K/N"), ("-1/2", "must be K/N"), ("1/2/3", "must be K/N"),
            ("/2", "must be K/N"), ("+1/2", "must be K/N"), ("1 /2", "must be K/N")
        ])
    func badShard(_ value: String, _ message: String) async throws {
        let replay = try ReplaySandbox()
        try await replay.addThreeRecordedLocations()
        let result = await replay.run("ingest", "--shard", value)
        #expect(result.code == 64, "\(value): \(result.code) \(result.stderrText)")
        #expect(result.stderrText.contains("--shard"), "\(result.stderrText)")
        #expect(result.stderrText.contains(message), "\(value): \(result.stderrText)")
        #expect(replay.forecastRequests.isEmpty)
        #expect(try await replay.count("forecast_runs") == 0)
    }
}
