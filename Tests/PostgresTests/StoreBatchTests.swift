import Foundation
import TestSupport
import Testing
import WxCore
import WxStore
import WxStoreSQLite

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `storeAll` is one loop for both engines (WxStore's `storeBatch`); PostgreSQL's side, which makes
/// the next chunk ahead, is `PostgresSessionTests.importMakesAhead`. SQLite's makes each chunk on
/// the caller's thread once the chunk before is stored.
@Suite("storeAll on SQLite: chunk by chunk on the caller's thread, all or nothing")
struct StoreBatchTests {
    @Test("every chunk is made after the one before is stored, in order; a failure in the last stores nothing")
    func sqliteChunks() throws {
        let path = Scratch.path("store-batch", suffix: ".sqlite")
        let store = try SQLiteStore.open(path: path)
        let berlin = try store.addLocation(
            name: "Berlin", latitude: 52.52, longitude: 13.41, elevation: 34, timezone: "Europe/Berlin", models: [],
            now: 0)
        let chunk = 64
        let items = Array(0..<(2 * chunk + 20))
        let caller = pthread_self()
        var madeElsewhere = 0
        var made: [Int] = []
        var stored: [Int] = []
        var storedBeforeMaking: [Int] = []
        func make(_ item: Int) throws -> (response: ForecastResponse, fetch: FetchRecord) {
            if pthread_equal(pthread_self(), caller) == 0 { madeElsewhere += 1 }
            made.append(item)
            storedBeforeMaking.append(stored.count)
            let start = t0 + Int64(item) * 3 * hour
            return (
                try syntheticResponse(models: ["best_match"], start: start, hours: 24, seed: item + 1, current: start),
                FetchRecord(fetchedAt: start, origin: .import)
            )
        }
        let outcomes = try store.storeAll(items, for: berlin, make: make) { item, _ in stored.append(item) }
        #expect(outcomes.count == items.count && outcomes.allSatisfy { $0.kind == .stored })
        #expect(made == items && stored == items)
        #expect(madeElsewhere == 0)
        // Item k is made once every chunk before its own is stored, and none of its own chunk.
        #expect(storedBeforeMaking == items.map { $0 / chunk * chunk })
        #expect(try store.runCount(locationID: berlin.id) == items.count)

        struct Unreadable: Error {}
        let bern = try store.addLocation(
            name: "Bern", latitude: 46.95, longitude: 7.45, elevation: 540, timezone: "Europe/Zurich", models: [],
            now: 0)
        #expect(throws: Unreadable.self) {
            _ = try store.storeAll(items, for: bern) { item in
                if item == items.count - 5 { throw Unreadable() }
                return try make(item)
            }
        }
        #expect(try store.runCount(locationID: bern.id) == 0)
    }
}
