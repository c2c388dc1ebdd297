import Foundation
import TestSupport
import Testing

@testable import WxCore
@testable import WxSQLite
@testable import WxStore
@testable import WxStoreSQLite

@Suite("Ensemble storage")
struct EnsembleStoreTests {
    /// A 51-member, 16-day run of every ensemble variable, with one member all missing and a few holes.
    static func run(model: String = "ecmwf_ifs025_ensemble", members: Int = 51, hours: Int = 384, shift: Double = 0)
        -> EnsembleForecast
    {
        let times = (0..<hours).map { Int64(1_785_024_000 + $0 * 3600) }
        let values: [[[Double]]?] = EnsembleModels.variables.enumerated().map { v, _ in
            (0..<members).map { m in
                (0..<hours).map { h in
                    if m == 7 || (m == 3 && h % 50 == 0) { return .nan }
                    return shift + Double(v) * 10 + sin(Double(h) / 9 + Double(m)) * 3 + Double(m) / 100
                }
            }
        }
        return EnsembleForecast(model: model, hourlyTimes: times, values: values)
    }

    func open() throws -> (SQLiteStore, Location, String) {
        let path = temporaryDatabase()
        let store = try SQLiteStore.open(path: path)
        let location = try store.addLocation(
            name: "Bern", latitude: 46.95, longitude: 7.45, elevation: nil, timezone: "Europe/Zurich",
            models: ["ecmwf_ifs025_ensemble"], now: 0)
        return (store, location, path)
    }

    @Test("a run stored and read back: every member, missing ones as NaN, Float32 precision")
    func roundTrip() throws {
        let (store, location, path) = try open()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let forecast = Self.run()
        let outcome = try store.storeEnsemble(
            forecast, grid: (46.95, 7.45, 540), for: location, issuedAt: 1_785_024_000, fetchedAt: 1_785_050_000)
        guard case .stored(let id) = outcome else {
            Issue.record("not stored: \(outcome)")
            return
        }
        let runs = try store.ensembleRuns(locationID: location.id, model: "ecmwf_ifs025_ensemble")
        #expect(runs.map(\.id) == [id] && runs[0].memberCount == 51 && runs[0].hourCount == 384)
        #expect(runs[0].issuedAt == 1_785_024_000 && runs[0].issuedAtSource == "model_run")
        let back = try #require(try store.ensembleMembers(runID: id, variable: "temperature_2m"))
        #expect(back.count == 384 && back.allSatisfy { $0.count == 51 })
        #expect(back.allSatisfy { $0[7].isNaN } && back[0][3].isNaN && back[1][3].isFinite)
        let original = try #require(forecast.values[0])
        #expect(abs(Double(back[100][20]) - original[20][100]) < 1e-5)
        #expect(try store.ensembleMembers(runID: id, variable: "weather_code") == nil)
    }

    @Test("the same content again is no new run; other content is; a removed location stores nothing")
    func deduplicated() throws {
        let (store, location, path) = try open()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let first = try store.storeEnsemble(
            Self.run(hours: 48), grid: (46.95, 7.45, nil), for: location, issuedAt: nil, fetchedAt: 1_785_050_000)
        let again = try store.storeEnsemble(
            Self.run(hours: 48), grid: (46.95, 7.45, nil), for: location, issuedAt: nil, fetchedAt: 1_785_060_000)
        #expect(again == .repeated(runID: first.runID))
        let next = try store.storeEnsemble(
            Self.run(hours: 48, shift: 0.5), grid: (46.95, 7.45, nil), for: location, issuedAt: nil,
            fetchedAt: 1_785_070_000)
        #expect(next == .stored(runID: next.runID) && next.runID != first.runID)
        let runs = try store.ensembleRuns(locationID: location.id, model: "ecmwf_ifs025_ensemble")
        #expect(runs.count == 2)
        // No initialisation time given: the latest run on the 6-hour cadence 6 hours before the fetch.
        #expect(runs[0].issuedAtSource == "cadence" && runs[0].issuedAt == 1_785_024_000)
        _ = try store.removeLocation(named: "Bern", purge: true)
        #expect(throws: (any Error).self) {
            try store.storeEnsemble(
                Self.run(hours: 48, shift: 1), grid: (46.95, 7.45, nil), for: location, issuedAt: nil,
                fetchedAt: 1_785_080_000)
        }
        #expect(try store.db.scalarInt("SELECT count(*) FROM ensemble_runs") == 0)
        #expect(try store.db.scalarInt("SELECT count(*) FROM ensemble_values") == 0)
    }

    @Test("a 51-member 16-day run takes at most 3 bytes per member value on disk (packed; 4.02 raw)")
    func bytesPerValue() throws {
        let (store, location, path) = try open()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        func used() throws -> Int64 {
            let pages = try store.db.scalarInt("PRAGMA page_count") ?? 0
            let free = try store.db.scalarInt("PRAGMA freelist_count") ?? 0
            return (pages - free) * (try store.db.scalarInt("PRAGMA page_size") ?? 0)
        }
        _ = try store.db.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        let before = try used()
        for shift in 0..<3 {
            _ = try store.storeEnsemble(
                Self.run(shift: Double(shift)), grid: (46.95, 7.45, nil), for: location, issuedAt: nil,
                fetchedAt: 1_785_050_000 + Int64(shift) * 21600)
        }
        _ = try store.db.scalarInt("PRAGMA wal_checkpoint(TRUNCATE)")
        let values = 3 * 51 * 384 * EnsembleModels.variables.count
        let perValue = Double(try used() - before) / Double(values)
        #expect(perValue <= 3, "\(perValue) bytes per member value")
    }
}
