import Foundation
import Testing

@testable import WxCore

/// The fixtures folder at the package root.
let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures")

func fixture(_ name: String) throws -> Data {
    try Data(contentsOf: fixtures.appendingPathComponent(name))
}

@Suite("Open-Meteo decoder")
struct DecoderTests {
    @Test("Toronto's non-existent 02:00 on the DST day is label minus the fixed offset: 07:00Z")
    func torontoDSTCrossing() throws {
        let response = try ForecastDecoder.decodeSingle(
            try fixture("forecast-current-hourly-daily-imperial-toronto-dst-crossing.json"), defaultModel: "best_match")
        #expect(response.utcOffsetSeconds == -18000)
        let run = try #require(response.models.first)
        #expect(run.hourlyTimes.count == 192)
        let index = try #require(
            run.hourlyTimes.firstIndex(of: Int64(CivilTime.days(year: 2026, month: 3, day: 8) * 86400 + 7 * 3600)))
        #expect(index == 4 * 24 + 2)  // the file starts 2026-03-04T00:00 local
        // Steps are uniform in UTC across the DST change: no gap, no repeat.
        #expect(zip(run.hourlyTimes, run.hourlyTimes.dropFirst()).allSatisfy { $1 - $0 == 3600 })
        // Imperial units are stored metric.
        let temperature = try #require(run.hourly[0])
        #expect(temperature.allSatisfy { $0 == nil || ($0! > -40 && $0! < 40) })
        let sunrise = try #require(run.daily[6])
        #expect(sunrise.count == 8)
    }

    @Test("Copenhagen iso8601 sunrise is a UTC instant")
    func sunriseInstant() throws {
        let response = try ForecastDecoder.decodeSingle(
            try fixture("forecast-current-hourly-daily-iso8601-copenhagen.json"), defaultModel: "best_match")
        let run = try #require(response.models.first)
        #expect(run.dailyDates.first == "2026-07-26")
        // "2026-07-26T05:04" at +02:00 is 03:04Z.
        let expected = Double(CivilTime.days(year: 2026, month: 7, day: 26) * 86400 + 3 * 3600 + 4 * 60)
        #expect(run.daily[6]?.first == expected)
        #expect(response.current?.time == Int64(CivilTime.days(year: 2026, month: 7, day: 26) * 86400 + 21 * 3600))
    }

    @Test("multi-model keys split into one forecast per model")
    func multiModel() throws {
        let response = try ForecastDecoder.decodeSingle(
            try fixture("forecast-multi-model-best_match-gfs_seamless-current-minutely15-hourly-daily-berlin.json"),
            defaultModel: "best_match")
        #expect(response.models.map(\.model) == ["best_match", "gfs_seamless"])
        for model in response.models {
            #expect(model.hourlyTimes.count == 168)
            #expect(model.dailyDates.count == 7)
            #expect(model.hourly[6]?.count == 168)  // weather_code
        }
        #expect(response.current?.values[6] != nil)
    }

    @Test("nulls stay nil: the last ICON day")
    func trailingNulls() throws {
        let response = try ForecastDecoder.decodeSingle(
            try fixture("forecast-current-daily-icon_seamless-trailing-nulls-maryland.json"),
            defaultModel: "icon_seamless")
        let run = try #require(response.models.first)
        #expect(run.daily[1]?.last == .some(nil))
        #expect(run.daily[1]?.first != .some(nil))
    }

    @Test("unixtime and iso8601 encodings of the same data decode to the same instants")
    func unixtimeMatchesISO() throws {
        let iso = try ForecastDecoder.decodeMany(
            try fixture("SYNTHETIC-servertest-multi-location-iso8601.json"), defaultModel: "m")
        let unix = try ForecastDecoder.decodeMany(
            try fixture("SYNTHETIC-servertest-multi-location-unixtime.json"), defaultModel: "m")
        #expect(iso.count == 2)
        #expect(iso.map(\.locationID) == [nil, 1])
        for (a, b) in zip(iso, unix) {
            #expect(a.models.first?.hourlyTimes == b.models.first?.hourlyTimes)
            #expect(a.models.first?.dailyDates == b.models.first?.dailyDates)
        }
    }

    static let badBodies: [(String, String, String)] = [
        (
            "truncated",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":[0,3600],"temperature_2m":[1."#,
            "not valid JSON"
        ),
        (
            "api error",
            #"{"error":true,"reason":"Cannot initialize WeatherVariable from invalid String value tempeture_2m"}"#,
            "tempeture_2m"
        ),
        (
            "unequal",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":[0,3600],"temperature_2m":[1,2,3]}}"#,
            "temperature_2m has 3 values"
        ),
        (
            "string value",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":[0],"precipitation":["wet"]}}"#,
            "precipitation[0] is a string"
        ),
        (
            "bad label",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":["2026-02-30T00:00"],"temperature_2m":[1]}}"#,
            "\"2026-02-30T00:00\""
        ),
        ("empty", "", "empty"),
        ("duplicate key", #"{"latitude":1,"latitude":2}"#, "duplicate key"),
        ("trailing garbage", #"{"latitude":1}Unexpected error while streaming data"#, "after the JSON document"),
        (
            "no variables", #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"timezone":"GMT"}"#,
            "no hourly or daily"
        ),
        (
            "imperial unknown unit",
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly_units":{"temperature_2m":"K"},"hourly":{"time":[0],"temperature_2m":[1]}}"#,
            "unit \"K\""
        )
    ]

    @Test("bad input is refused with a message that names the problem", arguments: badBodies)
    func refusals(_ name: String, _ body: String, _ expected: String) {
        do {
            _ = try ForecastDecoder.decodeSingle(Array(body.utf8), defaultModel: "best_match")
            Issue.record("\(name) was accepted")
        } catch {
            #expect("\(error)".contains(expected), "\(name): \(error)")
        }
    }

    @Test("at a half-hour offset the labels carry the offset, the values are read at whole UTC hours")
    func halfHourOffset() throws {
        let response = try ForecastDecoder.decodeSingle(
            try fixture("forecast-hourly-halfhour-offset-adelaide.json"), defaultModel: "best_match")
        let first = try #require(response.models.first?.hourlyTimes.first)
        // 2026-07-16T00:00 at +09:30 was read under +09:00 (Open-Meteo's `getTimerange2`): 2026-07-15T15:00Z.
        #expect(first == Int64(CivilTime.days(year: 2026, month: 7, day: 15) * 86400 + 15 * 3600))
        #expect(response.models[0].hourlyTimes.allSatisfy { $0 % 3600 == 0 })
    }

    @Test(
        "a finite value that overflows in the unit conversion is refused, not stored as infinity",
        arguments: [
            ("°F", "1.7976931348623157e308"), ("°F", "-1.7e308"), ("m/s", "1e308"), ("kn", "1.7e308"), ("inch", "1e307")
        ])
    func conversionOverflowRefused(_ unit: String, _ value: String) throws {
        let variable = unit == "°F" ? "temperature_2m" : unit == "inch" ? "precipitation" : "wind_speed_10m"
        let hourly =
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly_units":{"\#(variable)":"\#(unit)"},"hourly":{"time":[0],"\#(variable)":[\#(value)]}}"#
        #expect(throws: DecodeError.self) { try ForecastDecoder.decodeSingle(Array(hourly.utf8), defaultModel: "m") }
        let current =
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"current_units":{"\#(variable)":"\#(unit)"},"current":{"time":0,"\#(variable)":\#(value)},"hourly":{"time":[0],"\#(variable)":[1]}}"#
        #expect(throws: DecodeError.self) { try ForecastDecoder.decodeSingle(Array(current.utf8), defaultModel: "m") }
    }

    @Test("an error message quotes at most a short piece of a huge hostile text")
    func hugeTextClipped() throws {
        let huge = String(repeating: "x", count: 200_000)
        let bodies = [
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":["# + "\"\(huge)\"" + #"]}}"#,
            #"{"latitude":1,"longitude":2,"utc_offset_seconds":0,"hourly":{"time":[0],"temperature_2m":["#
                + "\"\(huge)\"" + #"]}}"#,
            #"{"error":true,"reason":"# + "\"\(huge)\"" + "}"
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

@Suite("JSON parser")
struct JSONParserTests {
    @Test("numbers parse exactly", arguments: ["18.3", "0.30", "-0.1", "1013.25", "1e3", "123456789012345678", "0"])
    func numbers(_ text: String) throws {
        let parsed = try JSONParser.parse(Array(text.utf8))
        #expect(parsed == .number(Double(text)!))
    }

    @Test("strings with escapes and unicode")
    func strings() throws {
        #expect(try JSONParser.parse(Array(#""a\"b\\c\u00e9\ud83d\ude00 °""#.utf8)) == .string("a\"b\\cé😀 °"))
    }

    @Test(
        "rejects invalid documents",
        arguments: [
            "[1,]", "{\"a\":}", "01", "nul", "\"\u{01}\"", "[",
            String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        ])
    func invalid(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parse(Array(text.utf8)) }
    }

    @Test(
        "parseEach hands a top-level array's elements one by one, any other document whole",
        arguments: [
            (
                #" [ {"a":1} , [2,3], 4 ] "#,
                [JSON.object([("a", .number(1))]), .array([.number(2), .number(3)]), .number(4)]
            ),
            ("[]", []),
            (#"{"a":[1]}"#, [JSON.object([("a", .array([.number(1)]))])]),
            ("7", [JSON.number(7)])
        ])
    func parseEach(_ text: String, _ expected: [JSON]) throws {
        var seen: [JSON] = []
        try JSONParser.parseEach(Array(text.utf8)) { seen.append($0) }
        #expect(seen == expected)
        if case .array(let whole) = try JSONParser.parse(Array(text.utf8)) { #expect(whole == expected) }
    }

    @Test(
        "parseEach refuses what parse refuses, also after good elements", arguments: ["[1,2,", "[1,2]x", "[1,,2]", ""])
    func parseEachInvalid(_ text: String) {
        #expect(throws: JSONParseError.self) { try JSONParser.parseEach(Array(text.utf8)) { _ in } }
    }

    @Test("rejects invalid UTF-8")
    func invalidUTF8() {
        #expect(throws: JSONParseError.self) { try JSONParser.parse([0x22, 0xC3, 0x28, 0x22]) }
    }

    @Test("serializes whole numbers without a fraction and keeps key order")
    func serialize() {
        let value = JSON.object([("n", .number(412)), ("bias", .number(0.31)), ("s", .string("a\"b"))])
        #expect(value.serialized() == #"{"n":412,"bias":0.31,"s":"a\"b"}"#)
    }
}

@Suite("Civil time")
struct CivilTimeTests {
    @Test(
        "parse",
        arguments: [
            ("2026-11-30T12:00Z", Int64(1_796_040_000), 0 as Int?),
            ("2026-11-30T13:00+01:00", Int64(1_796_043_600), 3600),
            ("2026-11-30", Int64(1_795_996_800), nil)
        ])
    func parse(_ text: String, _ wall: Int64, _ offset: Int?) throws {
        let parsed = try #require(CivilTime.parse(text))
        #expect(parsed.wallSeconds == wall)
        #expect(parsed.offset == offset)
    }

    @Test("round trip days", arguments: [-1, 0, 59, 10_000, 20_000, 730_000])
    func roundTrip(_ days: Int) {
        let (y, m, d) = CivilTime.date(days: days)
        #expect(CivilTime.days(year: y, month: m, day: d) == days)
    }

    @Test("rejects impossible dates", arguments: ["2026-02-29", "2026-13-01", "2026-11-30T25:00", "yesterday"])
    func rejects(_ text: String) {
        #expect(CivilTime.parse(text) == nil)
    }
}
