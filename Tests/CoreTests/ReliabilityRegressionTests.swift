import Foundation
import Testing
@testable import WxCore

/// Defects found by the reliability suite (issue #7), one test each.
@Suite("Core regressions found by Scripts/reliability")
struct CoreReliabilityRegressionTests {
    @Test("a finite value that overflows in the unit conversion is refused, not stored as infinity",
          arguments: [("°F", "1.7976931348623157e308"), ("°F", "-1.7e308"), ("m/s", "1e308"), ("kn", "1.7e308"), ("inch", "1e307")])
    func conversionOverflowRefused(_ unit: String, _ value: String) throws {
        let variable = unit == "°F" ? "temperature_2m" : unit == "inch" ? "precipitation" : "wind_speed_10m"
        let hourly = #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly_units":{"\#(variable)":"\#(unit)"},"hourly":{"time":[0],"\#(variable)":[\#(value)]}}"#
        #expect(throws: DecodeError.self) { try ForecastDecoder.decodeSingle(Array(hourly.utf8), defaultModel: "m") }
        let current = #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"current_units":{"\#(variable)":"\#(unit)"},"current":{"time":0,"\#(variable)":\#(value)},"hourly":{"time":[0],"\#(variable)":[1]}}"#
        #expect(throws: DecodeError.self) { try ForecastDecoder.decodeSingle(Array(current.utf8), defaultModel: "m") }
    }

    @Test("an error message quotes at most a short piece of a huge hostile text")
    func hugeTextClipped() throws {
        let huge = String(repeating: "x", count: 200_000)
        let bodies = [
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":["# + "\"\(huge)\"" + #"]}}"#,
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":[0],"temperature_2m":["# + "\"\(huge)\"" + #"]}}"#,
            #"{"error":true,"reason":"# + "\"\(huge)\"" + "}",
        ]
        for body in bodies {
            do {
                _ = try ForecastDecoder.decodeSingle(Array(body.utf8), defaultModel: "m")
                Issue.record("accepted")
            } catch let error as DecodeError {
                #expect(error.description.utf8.count < 600, "\(error.description.prefix(100))")
                #expect(!error.description.contains(String(repeating: "x", count: 201)))
            }
        }
    }
}
