import Foundation
import TestSupport
import Testing
import WxCore
import WxFetcher
import WxStore
import WxStoreSQLite

@Suite("Ensemble API request")
struct EnsembleRequestTests {
    func locations(_ count: Int) throws -> ([Location], URL) {
        let folder = Scratch.folder("ensemble-request")
        let store = try SQLiteStore.open(path: folder.appendingPathComponent("wxdb.sqlite").path)
        let list = try (0..<count).map { i -> Location in
            try store.addLocation(
                name: "P\(i)", latitude: 40 + Double(i) / 100, longitude: 8.25, elevation: i == 0 ? 410 : nil,
                timezone: "Europe/Zurich", models: ["ecmwf_ifs025_ensemble"], now: 0)
        }
        return (list, folder)
    }

    @Test("the query asks every continuous variable per member, metric units, unix times, the location lists")
    func query() throws {
        let (list, folder) = try locations(2)
        defer { try? FileManager.default.removeItem(at: folder) }
        let request = EnsembleRequest(
            locations: list, models: ["ecmwf_ifs025_ensemble", "ncep_gefs025"], forecastDays: 16)
        let items = Dictionary(uniqueKeysWithValues: request.query)
        #expect(items["latitude"] == "40,40.01" && items["longitude"] == "8.25,8.25")
        #expect(items["models"] == "ecmwf_ifs025_ensemble,ncep_gefs025")
        #expect(items["hourly"]?.split(separator: ",").count == EnsembleModels.variables.count)
        #expect(items["hourly"]?.contains("precipitation_probability") == false)
        #expect(items["current"] == nil && items["daily"] == nil)
        #expect(items["timeformat"] == "unixtime" && items["elevation"] == "410,nan")
    }

    @Test("with a key the request goes to the customer- host with apikey=; WXDB_ENSEMBLE_URL points elsewhere")
    func hosts() throws {
        let (list, folder) = try locations(1)
        defer { try? FileManager.default.removeItem(at: folder) }
        let request = EnsembleRequest(locations: list, models: ["icon_d2_eps"], forecastDays: 2)
        let keyed = Endpoints.from(environment: [:], apiKey: "k")
        let url = try keyed.url(keyed.ensemble, request.query).absoluteString
        #expect(url.hasPrefix("https://customer-ensemble-api.open-meteo.com/v1/ensemble?"))
        #expect(url.hasSuffix("&apikey=k"))
        let local = Endpoints.from(environment: ["WXDB_ENSEMBLE_URL": "http://127.0.0.1:9/v1/ensemble"])
        #expect(local.ensemble == "http://127.0.0.1:9/v1/ensemble")
        #expect(Endpoints.from(environment: [:]).ensemble == "https://ensemble-api.open-meteo.com/v1/ensemble")
    }

    // v = 9 variables × 51 members = 459: 45.9 calls up to 14 days, × 16/14 for 16 days.
    static let weights: [([String], Int, Double)] = [
        (["ecmwf_ifs025_ensemble"], 14, 45.9),
        (["ecmwf_ifs025_ensemble"], 16, 45.9 * 16 / 14),
        (["ecmwf_ifs025_ensemble", "ncep_gefs025"], 7, 9.0 * 82 / 10),
        (["some_new_ensemble"], 7, 9.0 * 64 / 10),
        (["ukmo_uk_ensemble_2km"], 1, 2.7)
    ]

    @Test("the weight counts every member; an unknown ensemble counts as the largest", arguments: weights)
    func weight(models: [String], days: Int, expected: Double) {
        #expect(EnsembleModels.variables.count == 9)
        #expect(abs(EnsembleRequest.weightPerLocation(models: models, days: days) - expected) < 1e-9)
    }

    @Test("batches stay under Open-Meteo's per-request weight limit and 100 locations")
    func batches() throws {
        let (list, folder) = try locations(250)
        defer { try? FileManager.default.removeItem(at: folder) }
        let heavy = EnsembleRequest.batches(
            locations: list, models: ["ecmwf_ifs025_ensemble", "ncep_gefs025"], forecastDays: 16)
        #expect(heavy.allSatisfy { $0.weight <= EnsembleRequest.maxWeight })
        #expect(heavy.map(\.locations.count).reduce(0, +) == 250 && heavy.count == 5)
        #expect(heavy.flatMap(\.locations).map(\.id) == list.map(\.id))
        let light = EnsembleRequest.batches(locations: list, models: ["ukmo_uk_ensemble_2km"], forecastDays: 2)
        #expect(light.map(\.locations.count) == [100, 100, 50])
    }
}
