import Foundation
import TestSupport
import Testing
import WxCore

/// Issue 25 §1 for `current`: the block is the first requested model's, kept as current:<model>.
@Suite("current conditions are kept per model and never score their own model")
struct CurrentPerModelTests {
    static let day = utcMidnight(2026, 7, 20)

    @Test(
        "a two-model response's current block is current:<first model>; that model is not scored against it",
        arguments: StoreEngine.all)
    func currentPerModel(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let ecmwf = { (hour: Int) in 10 + sin(Double(hour) / 3) }
        let response = MultiModelResponse(
            firstLabel: Self.day, hours: 48,
            models: [("ecmwf_ifs025", ecmwf), ("gfs_seamless", { ecmwf($0) + 1.5 })])
        // Open-Meteo's current block is unsuffixed and the first model's: ecmwf's value at 05:00.
        let current = """
            "current_units":{"time":"unixtime","interval":"seconds","temperature_2m":"°C"},
            "current":{"time":\(Self.day + 5 * 3600),"interval":3600,"temperature_2m":\(JSON.numberText(ecmwf(5)))},
            "hourly_units"
            """
        let json = response.json().replacing("\"hourly_units\"", with: current)
        let path = try box.write("run.json", json)
        let stored = await box.run(
            "import", path, "--location", "Here", "--fetched-at", CivilTime.isoUTC(Self.day + 3600))
        #expect(stored.code == 0, "\(stored.stderrText)")
        let sources = try box.observationSources("Here").filter { $0.hasPrefix("current") }
        #expect(sources == ["current:ecmwf_ifs025"])

        let result = await box.run(
            "query", "verify", "--location", "Here", "--source", "current:ecmwf_ifs025", "--by", "model", "--format",
            "json")
        #expect(result.code == 0, "\(result.stderrText)")
        let (rows, n, object) = try reportRows(result)
        // Only gfs is scored against ecmwf's current conditions: 1.5 °C warm at the one hour.
        #expect(n == 1)
        #expect(rows.allSatisfy { $0["model"]?.stringValue == "gfs_seamless" }, "\(rows)")
        #expect(rows.first.flatMap { $0["bias"]?.numberValue }.map { abs($0 - 1.5) < 1e-9 } == true)
        #expect(object["source_is_model_output"]?.boolValue == true)
        #expect(
            object["notes"]?.arrayValue?.first?.stringValue?.contains("ecmwf_ifs025's own current conditions") == true,
            "\(result.stdout)")

        // Asked for ecmwf alone against its own current conditions: no pairs.
        let own = await box.run(
            "query", "verify", "--location", "Here", "--source", "current:ecmwf_ifs025", "--model", "ecmwf_ifs025")
        #expect(own.code == 1, "\(own.stdout)")
    }

    @Test("current:<model> is a name wxdb keeps for itself", arguments: StoreEngine.all)
    func reserved(_ engine: StoreEngine) async throws {
        let box = try Sandbox(engine: engine)
        defer { box.remove() }
        #expect(
            await box.run("locations", "add", "Here", "--lat", "52.5", "--lon", "13.4", "--timezone", "UTC").code == 0)
        let csv = try box.write("s.csv", "time,temperature_2m\n2026-07-20T00:00:00Z,10\n")
        let result = await box.run("observe", "import", csv, "--location", "Here", "--source", "current:icon_seamless")
        #expect(result.code == 64, "\(result.stderrText)")
    }
}
