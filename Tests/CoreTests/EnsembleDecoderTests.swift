import Foundation
import Testing

@testable import WxCore

@Suite("Ensemble API decoder")
struct EnsembleDecoderTests {
    @Test(
        "keys split by Open-Meteo's naming: control bare, _memberNN, model suffix after the member",
        arguments: [
            ("temperature_2m", 0, nil as String?),
            ("temperature_2m_member01", 1, nil),
            ("temperature_2m_member50", 50, nil),
            ("temperature_2m_ecmwf_ifs025_ensemble", 0, "ecmwf_ifs025_ensemble"),
            ("temperature_2m_member07_ncep_gefs025", 7, "ncep_gefs025"),
            ("windspeed_10m_member02", 2, nil)
        ])
    func splitsKeys(key: String, member: Int, model: String?) throws {
        let names = EnsembleModels.variables.enumerated().flatMap { index, variable in
            ([variable.name] + variable.aliases).map { (name: $0, variable: index) }
        }.sorted { $0.name.count > $1.name.count }
        let parts = try #require(EnsembleDecoder.split(key, names: names))
        #expect(parts.member == member && parts.model == model)
    }

    @Test("a two-model answer: every member kept, all-null and absent members as missing, not zero")
    func multiModelFixture() throws {
        let body = try fixture("SYNTHETIC-ensemble-multi-model-members-berlin.json")
        let models = ["ecmwf_ifs025_ensemble", "ncep_gefs025"]
        let responses = try EnsembleDecoder.decode(body, models: models)
        let response = try #require(responses.first)
        #expect(responses.count == 1 && response.models.map(\.model) == models)
        let temperature = try #require(EnsembleModels.variables.firstIndex { $0.name == "temperature_2m" })
        let wind = try #require(EnsembleModels.variables.firstIndex { $0.name == "wind_speed_10m" })
        let ifs = response.models[0]
        let gefs = response.models[1]
        #expect(ifs.memberCount == 51 && gefs.memberCount == 31)
        #expect(ifs.hourlyTimes.count == 6 && ifs.hourlyTimes.first == 1_764_547_200)
        let ifsTemperature = try #require(ifs.values[temperature])
        #expect(ifsTemperature[3][5].isNaN && ifsTemperature[3][4].isFinite)
        #expect(ifsTemperature.allSatisfy { $0.count == 6 })
        // GEFS member 17 is all null: kept as a member with every value missing.
        let gefsTemperature = try #require(gefs.values[temperature])
        #expect(gefsTemperature[17].allSatisfy { $0.isNaN })
        #expect(gefsTemperature[16].allSatisfy { $0.isFinite } && gefsTemperature[18].allSatisfy { $0.isFinite })
        // A variable the answer does not have is absent, not a column of zeros.
        #expect(ifs.values[wind] == nil)
        // The control is the bare name plus the model suffix.
        let json = try JSONSerialization.jsonObject(with: body) as? [String: Any]
        let hourly = try #require(json?["hourly"] as? [String: Any])
        let control = try #require(hourly["temperature_2m_ecmwf_ifs025_ensemble"] as? [Double])
        #expect(ifsTemperature[0] == control)
    }

    @Test("one model: no suffix, members beyond the answer's up to the table's count are missing")
    func singleModel() throws {
        let body = Data(
            """
            {"latitude":47.0,"longitude":8.0,"utc_offset_seconds":0,"timezone":"GMT",
             "hourly_units":{"time":"unixtime","temperature_2m":"°F","temperature_2m_member01":"°F",
               "precipitation_hours":"h"},
             "hourly":{"time":[0,3600],"temperature_2m":[50,null],"temperature_2m_member01":[32,41],
               "precipitation_hours":[1,2]}}
            """.utf8)
        let response = try #require(try EnsembleDecoder.decode(body, models: ["icon_d2_eps"]).first)
        let forecast = try #require(response.models.first)
        #expect(forecast.memberCount == 20)
        let temperature = try #require(forecast.values[0])
        #expect(abs(temperature[0][0] - 10) < 1e-9 && temperature[0][1].isNaN)  // °F stored as °C
        #expect(abs(temperature[1][0]) < 1e-9 && abs(temperature[1][1] - 5) < 1e-9)
        #expect(temperature[2...].allSatisfy { $0.allSatisfy { $0.isNaN } })
        // precipitation_hours is not precipitation's member or model.
        let precipitation = try #require(EnsembleModels.variables.firstIndex { $0.name == "precipitation" })
        #expect(forecast.values[precipitation] == nil)
    }

    @Test("a regional model outside its domain (NaN coordinates) and an API error are errors, not empty runs")
    func refusals() {
        let outside = Data(#"{"latitude":NaN,"longitude":NaN,"utc_offset_seconds":0,"hourly":{"time":[]}}"#.utf8)
        #expect(throws: DecodeError.self) { try EnsembleDecoder.decode(outside, models: ["icon_d2_eps"]) }
        let error = Data(
            #"{"error":true,"reason":"Cannot initialize EnsembleMultiDomains from invalid String value"}"#.utf8)
        #expect(
            throws: DecodeError.apiError(reason: "Cannot initialize EnsembleMultiDomains from invalid String value")
        ) {
            try EnsembleDecoder.decode(error, models: ["nope"])
        }
    }

    @Test("the model table: cited members and cadence, no name shared with the deterministic models")
    func table() throws {
        #expect(EnsembleModels.model(named: "ecmwf_ifs025_ensemble")?.members == 51)
        #expect(EnsembleModels.model(named: "ncep_gefs025")?.members == 31)
        #expect(EnsembleModels.model(named: "icon_d2_eps")?.cadenceHours == 3)
        #expect(EnsembleModels.maxMembers == 64)
        #expect(Set(EnsembleModels.names).count == EnsembleModels.table.count)
        #expect(!EnsembleModels.isEnsemble("icon_seamless"))
    }
}
