import Foundation
import TestSupport
import Testing
import WxCore
import WxStore
import WxStoreSQLite

@testable import WxQueries

@Suite("Ensemble verification from stored members")
struct EnsembleVerifyTests {
    @Test("stored runs against stored observations: the scores of the same cases in memory, by lead")
    func storedMatchesMemory() throws {
        let folder = Scratch.folder("ensemble-verify")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(path: folder.appendingPathComponent("wxdb.sqlite").path)
        let location = try store.addLocation(
            name: "Bern", latitude: 46.95, longitude: 7.45, elevation: nil, timezone: "GMT",
            models: ["icon_d2_eps"], now: 0)
        var random = GaussianRandom(seed: 99)
        let start: Int64 = 1_785_024_000
        // The truth: one value an hour over five days.
        var truth: [Int64: Double] = [:]
        for hour in 0..<(5 * 24) {
            let time = start + Int64(hour) * 3600
            truth[time] = 12 + 4 * sin(Double(hour) / 7)
            var values = [Double?](repeating: nil, count: Variables.hourly.count)
            values[0] = truth[time]
            try store.upsertObservation(
                locationID: location.id, source: "station", time: time, values: values, recordedAt: time)
        }
        var expected = EnsembleScores()
        var expectedShort = EnsembleScores()
        // Twelve runs, 3 hours apart, 48 hours each: members around the truth, calibrated.
        for run in 0..<12 {
            let issued = start + Int64(run) * 3 * 3600
            let times = (0..<48).map { issued + Int64($0) * 3600 }
            var rows = [[Double]](repeating: [], count: 20)
            for (h, time) in times.enumerated() {
                let y = truth[time] ?? .nan
                let centre = y - 1.2 * random.next()
                for m in 0..<20 { rows[m].append(Double(Float(centre + 1.2 * random.next()))) }
                if y.isFinite {
                    expected.add(members: rows.map { $0[h] }, observed: y)
                    if h < 6 { expectedShort.add(members: rows.map { $0[h] }, observed: y) }
                }
            }
            var values: [[[Double]]?] = Array(repeating: nil, count: EnsembleModels.variables.count)
            values[0] = rows
            _ = try store.storeEnsemble(
                EnsembleForecast(model: "icon_d2_eps", hourlyTimes: times, values: values),
                grid: (46.95, 7.45, nil), for: location, issuedAt: issued, fetchedAt: issued + 7200)
        }
        let temperature = try #require(Variables.hourlyVariable(named: "temperature_2m"))
        let result = try EnsembleVerify.run(
            store: store, location: location, model: "icon_d2_eps", variable: temperature, source: "station",
            thresholds: [14])
        #expect(result.runs == 12 && result.total.n == expected.n && expected.n > 0)
        let crps = (try #require(result.total.crps), try #require(expected.crps))
        let fair = (try #require(result.total.fairCRPS), try #require(expected.fairCRPS))
        #expect(abs(crps.0 - crps.1) < 1e-9 && abs(fair.0 - fair.1) < 1e-9)
        #expect(result.total.rankCounts == expected.rankCounts)
        let short = try #require(result.byLead.first)
        #expect(short.bucket.from == 0 && short.scores.n == expectedShort.n)
        #expect(result.events.first?.n == expected.n)
        let ratio = try #require(result.total.spreadSkillRatio)
        #expect(abs(ratio - 1) < 0.15)
    }
}
