import Foundation
import TestSupport
import Testing
import WxCore
import WxFetcher
import WxReplay
import WxStore
import WxStoreSQLite

@Suite("Ensemble ingest")
struct EnsembleIngestTests {
    @Test("through the replay server: every member stored, a repeat adds no run, the weight is in the budget")
    func ingestAndRepeat() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let folder = Scratch.folder("ensemble-ingest")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(path: folder.appendingPathComponent("wxdb.sqlite").path)
        let coordinates: [(String, Double, Double)] = [("Bern", 46.95, 7.45), ("Oslo", 59.91, 10.75)]
        var places: [Location] = []
        for (name, lat, lon) in coordinates {
            places.append(
                try store.addLocation(
                    name: name, latitude: lat, longitude: lon, elevation: nil, timezone: "Europe/Zurich",
                    models: ["ecmwf_ifs025_ensemble", "ncep_gefs025"], now: 0))
        }
        var endpoints = Endpoints.from(environment: [:])
        endpoints.ensemble = server.baseURL + "/v1/ensemble"
        endpoints.meta = server.baseURL + "/data"
        let now = Int64(Support.fixedNow.timeIntervalSince1970)
        let models = ["ecmwf_ifs025_ensemble", "ncep_gefs025"]
        let first = await EnsembleIngest.run(
            store: store, client: Support.client(attempts: 1), endpoints: endpoints, locations: places,
            models: models, forecastDays: 3, now: now)
        #expect(first.failures.isEmpty && first.stored == 4 && first.repeated == 0)
        let expected = EnsembleRequest(locations: places, models: models, forecastDays: 3).weight
        #expect(abs(first.weight - expected) < 1e-9)
        #expect(abs(try BudgetUse.read(store, now: now).day - expected) < 1e-9)

        let runs = try store.ensembleRuns(locationID: places[0].id, model: "ecmwf_ifs025_ensemble")
        #expect(runs.count == 1 && runs[0].memberCount == 51 && runs[0].hourCount == 72)
        // The initialisation time is the one meta.json names for the model's domain, the run served.
        let served = try #require(EnsembleReplay.latestRun(model: "ecmwf_ifs025_ensemble", at: Int(now)))
        #expect(runs[0].issuedAt == Int64(served) && runs[0].issuedAtSource == "model_run")
        #expect(server.requestCount(path: "/data/ecmwf_ifs025_ensemble/static/meta.json") == 1)
        #expect(server.requestCount(path: "/data/ncep_gefs025/static/meta.json") == 1)
        let members = try #require(try store.ensembleMembers(runID: runs[0].id, variable: "temperature_2m"))
        // Every member has its own values: the control and member 50 differ somewhere.
        #expect(members.contains { $0[0] != $0[50] })
        let gefs = try store.ensembleRuns(locationID: places[1].id, model: "ncep_gefs025")
        #expect(gefs.first?.memberCount == 31)

        let again = await EnsembleIngest.run(
            store: store, client: Support.client(attempts: 1), endpoints: endpoints, locations: places,
            models: models, forecastDays: 3, now: now + 60)
        #expect(again.stored == 0 && again.repeated == 4)
        #expect(try store.ensembleRuns(locationID: places[0].id, model: "ecmwf_ifs025_ensemble").count == 1)
        #expect(server.requestCount(path: "/v1/ensemble") == 2)
    }

    @Test("an unknown ensemble is a failure said per request, and nothing is stored")
    func unknownModel() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let folder = Scratch.folder("ensemble-ingest")
        defer { try? FileManager.default.removeItem(at: folder) }
        let store = try SQLiteStore.open(path: folder.appendingPathComponent("wxdb.sqlite").path)
        let place = try store.addLocation(
            name: "Bern", latitude: 46.95, longitude: 7.45, elevation: nil, timezone: "GMT",
            models: ["not_an_ensemble"], now: 0)
        var endpoints = Endpoints.from(environment: [:])
        endpoints.ensemble = server.baseURL + "/v1/ensemble"
        let summary = await EnsembleIngest.run(
            store: store, client: Support.client(attempts: 1), endpoints: endpoints, locations: [place],
            models: ["not_an_ensemble"], forecastDays: 2, now: Int64(Support.fixedNow.timeIntervalSince1970))
        #expect(summary.stored == 0 && summary.failures.count == 1)
        #expect(summary.failures.first?.contains("not_an_ensemble") == true)
        #expect(try store.ensembleRuns(locationID: place.id, model: "not_an_ensemble").isEmpty)
    }
}
