// The replay server's Ensemble API: Open-Meteo's naming, members drawn around the archive's truth,
// and the dispersion knob giving ensembles whose scores are known.
import Foundation
import Testing
import WxCore
import WxFetcher
import WxReplay

@Suite("Replay Ensemble API")
struct ReplayEnsembleTests {
    private func body(_ server: ReplayServer, _ pathAndQuery: String) async throws -> Data {
        try await Support.client(attempts: 1).get(Support.url(server, pathAndQuery)).body
    }

    /// Thirty points spread over Europe.
    static let points: [(Double, Double)] = (0..<30).map { i -> (Double, Double) in
        let k = Double(i)
        return (40 + k * 0.37, -3 + k * 0.61)
    }
    static var coordinates: String {
        let lats: [String] = points.map { String($0.0) }
        let lons: [String] = points.map { String($0.1) }
        return "latitude=" + lats.joined(separator: ",") + "&longitude=" + lons.joined(separator: ",")
    }

    /// Temperature scores of `model`'s members against the archive's hours (2026-07-26 to 28, 30 points).
    private func scores(_ server: ReplayServer, model: String) async throws -> EnsembleScores {
        let members = try await body(
            server,
            "/v1/ensemble?\(Self.coordinates)&hourly=temperature_2m&models=\(model),ncep_gefs025"
                + "&forecast_days=3&timeformat=unixtime")
        let responses = try EnsembleDecoder.decode(members, models: [model, "ncep_gefs025"])
        let truthBody = try await body(
            server,
            "/v1/archive?\(Self.coordinates)&hourly=temperature_2m&start_date=2026-07-26&end_date=2026-07-28"
                + "&timeformat=unixtime")
        let truths = try #require(try Support.json(truthBody) as? [[String: Any]])
        #expect(responses.count == 30 && truths.count == 30)
        var scores = EnsembleScores()
        for (response, truth) in zip(responses, truths) {
            let hourly = try #require(truth["hourly"] as? [String: Any])
            let times = try #require(hourly["time"] as? [Int])
            let observed = try #require(hourly["temperature_2m"] as? [Double])
            let forecast = try #require(response.models.first { $0.model == model })
            let values = try #require(forecast.values[0])
            #expect(forecast.hourlyTimes.map(Int.init) == times)
            for hour in times.indices {
                scores.add(members: values.map { $0[hour] }, observed: observed[hour])
            }
        }
        return scores
    }

    @Test("a calibrated ensemble by default: flat rank histogram, spread-skill near 1; the knob squeezes it")
    func dispersionKnob() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let calibrated = try await scores(server, model: "ecmwf_ifs025_ensemble")
        #expect(calibrated.n == 30 * 72 && calibrated.meanMembers == 51)
        let flat = try #require(calibrated.rankFlatness)
        #expect(flat.pValue > 0.01, "χ² = \(flat.chiSquare) on \(flat.degrees)")
        let ratio = try #require(calibrated.spreadSkillRatio)
        #expect(abs(ratio - 1) < 0.1)

        server.ensembleDispersion = 0.4
        let narrow = try await scores(server, model: "ecmwf_ifs025_ensemble")
        #expect(try #require(narrow.spreadSkillRatio) < 0.8)
        let counts = narrow.rankCounts
        let middle = counts[10..<42].reduce(0, +) / 32
        #expect(counts[0] > 3 * middle && counts[51] > 3 * middle)
        // The centre is the same draw: the ensemble mean's error hardly moves, only the spread.
        let rmse = (try #require(narrow.meanRMSE), try #require(calibrated.meanRMSE))
        #expect(abs(rmse.0 - rmse.1) < 0.05 * rmse.1)
    }

    @Test("Open-Meteo's member naming, the horizon's nulls, and values a pure function of their key")
    func namingAndDeterminism() async throws {
        let server = try Support.server()
        defer { server.stop() }
        let query =
            "/v1/ensemble?latitude=52.52&longitude=13.41&hourly=temperature_2m,precipitation"
            + "&models=icon_d2_eps&forecast_days=4&timeformat=unixtime"
        let first = try await body(server, query)
        #expect(try await body(server, query) == first)
        let object = try #require(try Support.json(first) as? [String: Any])
        let hourly = try #require(object["hourly"] as? [String: Any])
        #expect(hourly["temperature_2m"] != nil && hourly["temperature_2m_member19"] != nil)
        #expect(hourly["temperature_2m_member20"] == nil && hourly["temperature_2m_icon_d2_eps"] == nil)
        // ICON-D2-EPS reaches 48 hours past its run: the rest is null, as Open-Meteo serves it.
        let control = try #require(hourly["temperature_2m"] as? [Any])
        #expect(control.count == 96 && control.last is NSNull && control.first is Double)
        // Members differ from each other.
        let one = try #require(hourly["temperature_2m_member01"] as? [Any])
        #expect(zip(control, one).contains { ($0 as? Double) != ($1 as? Double) })

        // A deterministic model is not an ensemble: refused with Open-Meteo's wording.
        let unknown = Support.url(server, "/v1/ensemble?latitude=1&longitude=2&hourly=temperature_2m&models=gfs025")
        await #expect(throws: FetchError.self) { try await Support.client(attempts: 1).get(unknown) }
    }

    @Test("the control API sets the dispersion")
    func control() async throws {
        let server = try Support.server()
        defer { server.stop() }
        _ = try await body(server, "/_control/ensemble?dispersion=1.7")
        #expect(server.ensembleDispersion == 1.7)
    }
}
