import Testing
import WxCore
import WxStore
import WxStoreSQLite

@Suite("Station units to wxdb's metric units")
struct StationUnitsTests {
    @Test(
        "each unit weewx or Home Assistant writes converts to the value computed by hand",
        arguments: [
            (Quantity.temperature, "°F", 212.0, 100.0), (.temperature, "degree_F", 32, 0),
            (.temperature, "K", 273.15, 0),
            (.temperature, "°C", 21.5, 21.5), (.temperature, "degree_C", -3, -3),
            (.pressure, "inHg", 29.92, 1013.21), (.pressure, "mbar", 1013.2, 1013.2), (.pressure, "hPa", 999.9, 999.9),
            (.pressure, "kPa", 101.3, 1013), (.pressure, "Pa", 101_325, 1013.25), (.pressure, "mmHg", 760, 1013.25),
            (.pressure, "psi", 14.7, 1013.53),
            (.speed, "mph", 10, 16.09), (.speed, "mile_per_hour", 25, 40.23), (.speed, "km/h", 18, 18),
            (.speed, "m/s", 5, 18),
            (.speed, "meter_per_second", 1, 3.6), (.speed, "kn", 10, 18.52), (.speed, "knot", 1, 1.85),
            (.speed, "ft/s", 10, 10.97),
            (.precipitation, "in", 0.07, 1.78), (.precipitation, "inch", 1, 25.4), (.precipitation, "cm", 0.25, 2.5),
            (.precipitation, "mm", 0.2, 0.2),
            (.percent, "%", 81, 81), (.percent, "percent", 50, 50), (.direction, "°", 270, 270),
            (.direction, "degree_compass", 90, 90)
        ])
    func converts(_ quantity: Quantity, _ unit: String, _ value: Double, _ expected: Double) throws {
        let converted = try #require(StationUnits.toMetric(value, unit: unit, quantity: quantity))
        #expect(StationUnits.rounded(converted) == expected)
    }

    @Test(
        "a unit of another quantity, or none, does not convert",
        arguments: [
            (Quantity.temperature, "W"), (.temperature, ""), (.pressure, "°C"), (.speed, "mm"),
            (.precipitation, "mm/h"), (.percent, "ppm")
        ])
    func refuses(_ quantity: Quantity, _ unit: String) {
        #expect(StationUnits.toMetric(1, unit: unit, quantity: quantity) == nil)
    }

    @Test(
        "weewx's unit systems give each group its unit, rain included",
        arguments: [
            (1, ["degree_F", "inHg", "inch", "mile_per_hour"]),
            (16, ["degree_C", "mbar", "cm", "km_per_hour"]),
            (17, ["degree_C", "mbar", "mm", "meter_per_second"])
        ])
    func weewxSystems(_ usUnits: Int, _ units: [String]) {
        let groups: [Quantity] = [.temperature, .pressure, .precipitation, .speed]
        #expect(groups.map { StationUnits.weewxUnit(usUnits: usUnits, quantity: $0) } == units)
        #expect(StationUnits.weewxUnit(usUnits: 99, quantity: .temperature) == nil)
    }
}
