import Foundation
import Testing
import WxCore
import WxStore
import WxStoreSQLite

@testable import WxCLI

// What a database holds, read the way a user reads it: `stats`, `query runs` and `query verify` JSON.
// Tests that check state use these rather than SQL, so they hold for any storage engine; the few that
// must look at the rows themselves, or tamper with the file, go through TestSupport's SQLiteBackdoor.

extension Sandbox {
    /// The sandbox's database opened for reading, on whichever engine it is.
    func readStore() throws -> any Store {
        guard PostgresTarget.conninfo(db) != nil else { return try SQLiteStore.openReadOnly(path: db) }
        return try StoreEngines.open(db, create: false, busyTimeoutMilliseconds: 5000, access: .read)
    }

    /// The row counts `wxdb stats --format json` prints, by table. The hourly and daily forecasts are
    /// counted from the stored runs' own counts (pruned runs have none), as `stats` counts them.
    func tableCounts() async throws -> [String: Int64] {
        let result = await run("stats", "--format", "json")
        #expect(result.code == 0, "stats: \(result.stderrText)")
        let tables = try #require(try parseJSON(result.stdout)["tables"]?.objectValue)
        var counts: [String: Int64] = [:]
        for (table, value) in zip(tables.keys, tables.values) {
            counts[table] = Int64(try #require(value.numberValue))
        }
        return counts
    }

    /// How many rows `stats` counts in `table`.
    func count(_ table: String) async throws -> Int64 {
        try #require(try await tableCounts()[table], "stats has no table \(table)")
    }

    /// Every location's runs, in the order they were stored, as the Store describes them to every
    /// engine's callers (`query runs` prints the same fields): issue time and its source, fetches, hours.
    func storedRuns() throws -> [RunSummary] {
        let store = try readStore()
        return try store.locations().flatMap {
            try store.runSummaries(locationID: $0.id, model: nil, issuedFrom: .min, issuedTo: .max)
        }.sorted { $0.id < $1.id }
    }

    /// Every saved location as the Store keeps it (zone, elevation, models), in the order added.
    func storedLocations() throws -> [Location] {
        let store = try readStore()
        return try store.locations()
    }

    /// Each location's failed fetches in the fetch log, by name, as `stats` and `locations list` count them.
    func failedFetches() throws -> [String: Int] {
        let store = try readStore()
        let activities = try store.activities()
        return Dictionary(uniqueKeysWithValues: try store.locations().map { ($0.name, activities[$0.id]?.failed ?? 0) })
    }

    /// The names of the locations that have at least one stored run.
    func locationsWithRuns() throws -> [String] {
        let store = try readStore()
        return try store.locations().filter { try store.runCount(locationID: $0.id, model: nil) > 0 }.map(\.name)
    }

    /// The hours of `source`'s observations of `location` that `wxdb export observations` prints (its
    /// time column), as the user reads them back.
    func exportedObservationTimes(_ location: String, source: String) async throws -> [String] {
        let result = await run("export", "observations", "--location", location, "--source", source)
        #expect(result.code == 0, "export observations: \(result.stderrText)")
        let lines = result.stdout.split(separator: "\r\n")
        let header = lines.first?.split(separator: ",") ?? []
        let time = try #require(header.firstIndex(of: "time"), "no time column in \(lines.first ?? "")")
        return lines.dropFirst().map { String($0.split(separator: ",", omittingEmptySubsequences: false)[time]) }
    }

    /// The forecast hours (instants of `valid_time`) that `wxdb export hourly` prints for `location`.
    func exportedForecastHours(_ location: String) async throws -> [Int64] {
        let result = await run("export", "hourly", "--location", location, "--var", "temperature_2m")
        #expect(result.code == 0, "export hourly: \(result.stderrText)")
        let lines = result.stdout.split(separator: "\r\n")
        let column = try #require(lines.first?.split(separator: ",").firstIndex(of: "valid_time"))
        return try lines.dropFirst().map { line in
            let text = String(line.split(separator: ",", omittingEmptySubsequences: false)[column])
            let parsed = try #require(CivilTime.parse(text), "valid_time \(text)")
            return parsed.wallSeconds - Int64(parsed.offset ?? 0)
        }
    }

    /// The observation sources stored for `location`, sorted.
    func observationSources(_ location: String) throws -> [String] {
        let store = try readStore()
        let found = try #require(try store.location(named: location))
        return try store.observationSources(locationID: found.id).sorted()
    }

    /// `wxdb doctor --format json`'s verdict: integrity, foreign keys and schema all fine.
    func doctorSaysOK() async throws -> Bool {
        let result = await run("doctor", "--format", "json")
        #expect(result.code == 0, "doctor: \(result.stderrText)")
        return try parseJSON(result.stdout)["ok"]?.boolValue == true
    }

    /// The runs of `location` as `wxdb query runs --format json` lists them (empty when it has none).
    func runs(_ location: String) async throws -> [JSON] {
        let result = await run("query", "runs", "--location", location, "--format", "json")
        if result.code == 1 && result.stderrText.contains("no runs of") { return [] }
        #expect(result.code == 0, "query runs: \(result.stderrText)")
        return try #require(try parseJSON(result.stdout)["runs"]?.arrayValue)
    }

    /// Every numeric field of every row of `query verify --format json` for Testville, by row and key.
    func verifyNumbers(_ extra: [String] = []) async throws -> [[String: Double]] {
        let result = await run(["query", "verify", "--location", "Testville", "--format", "json"] + extra)
        #expect(result.code == 0, "\(result.stderrText)")
        let rows = try #require(try parseJSON(result.stdout)["rows"]?.arrayValue)
        return rows.map { row in
            var numbers: [String: Double] = [:]
            for (key, value) in zip(row.objectValue!.keys, row.objectValue!.values) {
                if let number = value.numberValue { numbers[key] = number }
            }
            return numbers
        }
    }
}

/// The same rows, the same n and each of `keys` within 1e-9 of its size: verify answers alike before
/// and after something that must not change the scores (a prune, a vacuum).
func expectSameScores(
    _ before: [[String: Double]], _ after: [[String: Double]],
    keys: [String] = ["bias", "mae", "rmse", "error_sd", "correlation"],
    sourceLocation: SourceLocation = #_sourceLocation
) throws {
    #expect(before.count == after.count, sourceLocation: sourceLocation)
    for (b, a) in zip(before, after) {
        let bucket = b["lead_from_h"] ?? -1
        #expect(b["lead_from_h"] == a["lead_from_h"], sourceLocation: sourceLocation)
        #expect(b["n"] == a["n"], "n in bucket \(bucket)", sourceLocation: sourceLocation)
        for key in keys {
            let x = try #require(b[key], sourceLocation: sourceLocation)
            let y = try #require(a[key], sourceLocation: sourceLocation)
            #expect(
                abs(x - y) <= 1e-9 * max(1, abs(x)), "\(key) \(x) vs \(y) in bucket \(bucket)",
                sourceLocation: sourceLocation)
        }
    }
}
