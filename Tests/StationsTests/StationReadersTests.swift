import Foundation
import Testing
import WxCore

@testable import WxStations

let stationFixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("Fixtures/stations")

func fixture(_ name: String) throws -> Data {
    try Data(contentsOf: stationFixtures.appendingPathComponent(name))
}

/// UTC seconds of a civil time.
func utc(_ y: Int, _ mo: Int, _ d: Int, _ h: Int, _ mi: Int = 0) -> Int64 {
    UTCTime.days(fromCivil: y, month: mo, day: d) * 86400 + Int64(h * 3600 + mi * 60)
}

let slot = (
    t: Variables.hourlyIndex(of: "temperature_2m")!, rh: Variables.hourlyIndex(of: "relative_humidity_2m")!,
    td: Variables.hourlyIndex(of: "dew_point_2m")!, p: Variables.hourlyIndex(of: "precipitation")!,
    slp: Variables.hourlyIndex(of: "pressure_msl")!, ws: Variables.hourlyIndex(of: "wind_speed_10m")!,
    wd: Variables.hourlyIndex(of: "wind_direction_10m")!, g: Variables.hourlyIndex(of: "wind_gusts_10m")!
)

/// The stored row of one hour, by variable name (only the values present).
func row(_ result: OfficialImport, _ time: Int64) -> [String: Double]? {
    guard let hour = result.hours.first(where: { $0.time == time }) else { return nil }
    var out: [String: Double] = [:]
    for (i, v) in hour.values.enumerated() { if let v { out[Variables.hourly[i].name] = v } }
    return out
}

func matched(_ reports: [StationReport], _ base: OfficialImport, from: Int64? = nil, to: Int64? = nil)
    -> OfficialImport
{
    var base = base
    base.reportsRead = reports.count
    HourRule.match(reports, into: &base, from: from, to: to)
    return base
}

@Suite("Official station readers")
struct StationReadersTests {
    @Test("ISD-Lite: the real Delhi excerpt gives the official hours, ×10 scaling, calm and gaps counted")
    func isdLiteDelhi() throws {
        let reports = try ISD.readLite(try fixture("421820-99999-2019-excerpt"))
        #expect(reports.count == 20)
        let result = matched(reports, OfficialImport(format: "ISD-Lite", variables: ISD.liteVariables))
        // The rcrea test's official temperatures and pressures (°C, hPa) for these UTC hours.
        let official: [(Int64, Double, Double)] = [
            (utc(2019, 6, 30, 15), 37.4, 994.5), (utc(2019, 6, 30, 18), 34.6, 996.4),
            (utc(2019, 6, 30, 21), 33.2, 996.2), (utc(2019, 7, 1, 0), 31.6, 997.3), (utc(2019, 7, 1, 3), 33.8, 998.6),
            (utc(2019, 7, 1, 6), 38.6, 997.2), (utc(2019, 7, 1, 9), 41, 994.8), (utc(2019, 7, 1, 12), 40.4, 992.0),
            (utc(2019, 7, 1, 15), 36.8, 994.5), (utc(2019, 7, 1, 18), 34.2, 996.5)
        ]
        for (time, t, p) in official {
            #expect(row(result, time)?["temperature_2m"] == t)
            #expect(row(result, time)?["pressure_msl"] == p)
        }
        // 03 UTC: 228 → 22.8 °C dew point, 10 → 1.0 m/s = 3.6 km/h from 200°.
        #expect(
            row(result, utc(2019, 7, 1, 3)) == [
                "temperature_2m": 33.8, "dew_point_2m": 22.8, "pressure_msl": 998.6, "wind_speed_10m": 3.6,
                "wind_direction_10m": 200
            ])
        // 18 UTC: direction 0 with speed 0 is calm: speed 0 stored, no direction.
        #expect(row(result, utc(2019, 7, 1, 18))?["wind_speed_10m"] == 0)
        #expect(row(result, utc(2019, 7, 1, 18))?["wind_direction_10m"] == nil)
        #expect(result.missing[slot.wd]?[.calm] == 1)
        // 13 UTC June 30 to 21 UTC July 1 is 33 hours; 20 have a line, 13 have none.
        #expect(result.hoursConsidered == 33)
        #expect(result.missing[slot.t]?[.noReport] == 13)
        #expect(result.stored[slot.t] == 20)
        #expect(result.stored[slot.p] == nil)
        #expect(result.missing[slot.p]?[.noValue] == 20)
        #expect(ISD.stationID(fileName: "/x/421820-99999-2019-excerpt.gz") == "421820-99999")
    }

    @Test("gzip: the .gz excerpt reads as the plain one; a truncated one is refused")
    func gzip() throws {
        let gz = try fixture("421820-99999-2019-excerpt.gz")
        #expect(Gzip.isGzip(gz))
        #expect(try Gzip.decompress(gz) == (try fixture("421820-99999-2019-excerpt")))
        let cut = gz.prefix(gz.count - 12)
        #expect(throws: StationFormatError.self) { try Gzip.decompress(Data(cut)) }
        let message = (try? Gzip.decompress(Data(cut))).map { _ in "" } ?? ""
        #expect(message.isEmpty)
        do {
            _ = try Gzip.decompress(Data(cut))
        } catch let error as StationFormatError {
            #expect(error.message.contains("truncated"))
        }
    }

    @Test("ISD-Lite: trace (−1) is 0 mm counted, tenths of mm otherwise; a bad line names its number")
    func isdLiteEdges() throws {
        let text = """
            2024 01 01 00    50    20 10132    90    41     8    -1 -9999
            2024 01 01 01    55    21 10130    90    41     8    13 -9999

            """
        let reports = try ISD.readLite(Data(text.utf8))
        let result = matched(reports, OfficialImport(format: "ISD-Lite", variables: ISD.liteVariables))
        #expect(row(result, utc(2024, 1, 1, 0))?["precipitation"] == 0)
        #expect(row(result, utc(2024, 1, 1, 1))?["precipitation"] == 1.3)
        #expect(result.traceHours == 1)
        #expect(row(result, utc(2024, 1, 1, 0))?["wind_speed_10m"] == 14.76)

        let cases: [(String, Int, String)] = [
            ("station,valid,tmpf\nDSM,2024-01-01 00:54,30\n", 1, "not an ISD-Lite file"),
            ("2024 01 01 00    50    20 10132    90    41     8    -1 -9999\n2024 01 01 01 55\n", 2, "twelve"),
            ("2024 01 01 00   800    20 10132    90    41     8    -1 -9999\n", 1, "temperature_2m of 80.0 °C"),
            ("2024 01 01 00    50    20 10132    90    41     8   -25 -9999\n", 1, "precipitation of -2.5 mm")
        ]
        for (input, line, phrase) in cases {
            do {
                _ = try ISD.readLite(Data(input.utf8))
                Issue.record("accepted \(input)")
            } catch let error as StationFormatError {
                #expect(error.line == line, "\(input)")
                #expect(error.message.contains(phrase), "\(error.message)")
            }
        }
    }

    @Test("Hour rule: routine before special, nearest within 15 minutes, earlier on a tie, off-hour not used")
    func hourRule() {
        func report(_ minute: Int64, _ kind: ReportKind, _ t: Double, line: Int) -> StationReport {
            var r = StationReport(time: utc(2024, 3, 1, 12) + minute * 60, kind: kind, line: line)
            r.values[slot.t] = t
            return r
        }
        let cases: [(String, [StationReport], Double?)] = [
            (
                "routine at −7 beats a special at 0",
                [report(-7, .routine, 1, line: 1), report(0, .special, 2, line: 2)], 1
            ),
            ("nearest routine", [report(-14, .routine, 1, line: 1), report(5, .routine, 2, line: 2)], 2),
            ("tie: the earlier", [report(10, .routine, 1, line: 1), report(-10, .routine, 2, line: 2)], 2),
            (
                "high-frequency only when nothing else",
                [report(1, .highFrequency, 3, line: 1), report(12, .special, 4, line: 2)], 4
            ),
            ("16 minutes off is no hour's report", [report(16, .routine, 5, line: 1)], nil),
            (
                "same minute: the later line (a correction)",
                [report(0, .routine, 6, line: 1), report(0, .routine, 7, line: 2)], 7
            )
        ]
        for (name, reports, expected) in cases {
            let result = matched(reports, OfficialImport(format: "x", variables: [slot.t]))
            #expect(row(result, utc(2024, 3, 1, 12))?["temperature_2m"] == expected, "\(name)")
        }
    }

    @Test("Hour rule: a METAR amount counts for the hour only after a routine report the hour before")
    func hourRulePrecipitation() {
        func report(_ hour: Int, _ minute: Int, _ kind: ReportKind, _ mm: Double) -> StationReport {
            var r = StationReport(time: utc(2024, 3, 1, hour, minute), kind: kind, line: hour)
            r.values[slot.p] = mm
            r.precipitationPeriod = .sinceLastRoutine
            return r
        }
        let reports = [report(9, 53, .routine, 0.5), report(10, 53, .routine, 1.0), report(12, 53, .routine, 2.0)]
        let result = matched(reports, OfficialImport(format: "x", variables: [slot.p]))
        #expect(row(result, utc(2024, 3, 1, 11))?["precipitation"] == 1.0)
        #expect(row(result, utc(2024, 3, 1, 10)) == nil)
        #expect(row(result, utc(2024, 3, 1, 13)) == nil)
        #expect(result.missing[slot.p] == [.partialHour: 2, .noReport: 1])
    }

    @Test("METAR text: the real ADDS reports, T group tenths, calm, P group, routine over SPECI")
    func metarText() throws {
        let data = try fixture("metar-washington-2018-01-11-awc.txt")
        var base = OfficialImport(format: "METAR text", variables: [])
        let kpwt = try METAR.readText(data, month: (2018, 1), station: "KPWT", into: &base)
        #expect(kpwt.count == 2)
        let result = matched(kpwt, base)
        // The 15:13 METAR, not the 15:06 SPECI: 07/07, 17003KT = 3 × 1.852 km/h; P0005 covers the time since
        // the last routine report, which is not in the file: not stored.
        #expect(
            row(result, utc(2018, 1, 11, 15)) == [
                "temperature_2m": 7, "dew_point_2m": 7, "wind_speed_10m": 5.56, "wind_direction_10m": 170
            ])
        #expect(result.missing[slot.p]?[.partialHour] == 1)
        #expect(result.reportsOutranked == 1)

        var seaBase = OfficialImport(format: "METAR text", variables: [])
        let sea = matched(try METAR.readText(data, month: (2018, 1), station: "KSEA", into: &seaBase), seaBase)
        // ADDS decoded temp_c 7.2 and dewpoint_c 6.1 from T00720061; 13008KT = 14.82 km/h.
        #expect(row(sea, utc(2018, 1, 11, 15))?["temperature_2m"] == 7.2)
        #expect(row(sea, utc(2018, 1, 11, 15))?["dew_point_2m"] == 6.1)
        #expect(row(sea, utc(2018, 1, 11, 15))?["wind_speed_10m"] == 14.82)

        var eatBase = OfficialImport(format: "METAR text", variables: [])
        let eat = matched(try METAR.readText(data, month: (2018, 1), station: "KEAT", into: &eatBase), eatBase)
        // T10061006: −0.6 °C; 00000KT calm.
        #expect(row(eat, utc(2018, 1, 11, 15)) == ["temperature_2m": -0.6, "dew_point_2m": -0.6, "wind_speed_10m": 0])
        #expect(eat.missing[slot.wd]?[.calm] == 1)

        var all = OfficialImport(format: "METAR text", variables: [])
        #expect(throws: StationFormatError.self) { try METAR.readText(data, month: (2018, 1), into: &all) }
        #expect(throws: StationFormatError.self) { try METAR.readText(data, month: nil, station: "KSEA", into: &all) }
    }

    @Test("METAR text: gusts, VRB, SLP, P with the hour before, the trend not read as the wind")
    func metarGroups() throws {
        let text = """
            201801091100 METAR YSCB 091100Z 07008KT 9999 17/13 Q1020 FM0030 27030KT 9999 SCT030
            METAR KDSM 091053Z VRB04G15KT 10SM M02/M05 A3001 RMK AO2 SLP987 P0012 T10221050=
            METAR KDSM 091153Z 00000KT 10SM M03/M05 A3001 RMK AO2 SLP012 P0000 T10331050=
            """
        var base = OfficialImport(format: "METAR text", variables: [])
        let yscb = matched(try METAR.readText(Data(text.utf8), month: nil, station: "YSCB", into: &base), base)
        #expect(
            row(yscb, utc(2018, 1, 9, 11)) == [
                "temperature_2m": 17, "dew_point_2m": 13, "wind_speed_10m": 14.82, "wind_direction_10m": 70
            ])

        var dsmBase = OfficialImport(format: "METAR text", variables: [])
        let dsm = matched(
            try METAR.readText(Data(text.utf8), month: (2018, 1), station: "KDSM", into: &dsmBase), dsmBase)
        // VRB04G15KT: 7.41 km/h, gust 27.78, no direction; SLP987 = 998.7 hPa; T10221050 = −2.2/−5.0.
        #expect(
            row(dsm, utc(2018, 1, 9, 11)) == [
                "temperature_2m": -2.2, "dew_point_2m": -5, "wind_speed_10m": 7.41, "wind_gusts_10m": 27.78,
                "pressure_msl": 998.7
            ])
        #expect(dsm.missing[slot.wd]?[.variableWind] == 1)
        // 11:53's P0000 is a trace over the hour since 10:53's routine report: 0 mm, counted; SLP012 = 1001.2.
        #expect(
            row(dsm, utc(2018, 1, 9, 12)) == [
                "temperature_2m": -3.3, "dew_point_2m": -5, "wind_speed_10m": 0, "pressure_msl": 1001.2,
                "precipitation": 0
            ])
        #expect(dsm.traceHours == 1)
    }

    @Test("IEM CSV: °F, knots and inches; M, null and empty missing; T and 0.0001 trace; specials by report_type")
    func iemImperial() throws {
        let csv = """
            station,valid,tmpf,dwpf,relh,drct,sknt,p01i,mslp,gust,report_type,metar
            DSM,2024-01-01 00:54,32.00,23.00,69.0,270.00,10.00,0.00,1020.1,M,3,KDSM 010054Z
            DSM,2024-01-01 01:54,M,null,,0.00,0.00,T,1019.5,,3,KDSM 010154Z
            DSM,2024-01-01 02:10,40.00,30.00,80.0,90.00,20.00,0.05,1018.0,30.00,4,SPECI KDSM 010210Z
            DSM,2024-01-01 02:54,35.60,30.20,80.5,M,5.00,0.0001,1018.2,M,3,KDSM 010254Z VRB05KT
            DSM,2024-01-01 03:54,50.00,41.00,71.0,180.00,12.00,0.12,1017.0,22.00,3,KDSM 010354Z
            """
        var base = OfficialImport(format: "IEM", variables: [])
        let result = matched(try METAR.readIEM(Data(csv.utf8), into: &base), base)
        #expect(base.station == "DSM")
        // 32 °F = 0 °C; 23 °F = −5 °C; 10 kt = 18.52 km/h.
        #expect(
            row(result, utc(2024, 1, 1, 1)) == [
                "temperature_2m": 0, "dew_point_2m": -5, "relative_humidity_2m": 69, "wind_direction_10m": 270,
                "wind_speed_10m": 18.52, "pressure_msl": 1020.1
            ])
        // 01:54: missing temperatures; calm; trace with a routine report at 00:54: 0 mm.
        #expect(
            row(result, utc(2024, 1, 1, 2)) == ["wind_speed_10m": 0, "precipitation": 0, "pressure_msl": 1019.5])
        // 03:00: the 02:54 routine report beats the 02:10 special; 35.6 °F = 2 °C, 30.2 °F = −1 °C; VRB.
        #expect(
            row(result, utc(2024, 1, 1, 3)) == [
                "temperature_2m": 2, "dew_point_2m": -1, "relative_humidity_2m": 80.5, "wind_speed_10m": 9.26,
                "precipitation": 0, "pressure_msl": 1018.2
            ])
        #expect(result.missing[slot.wd]?[.variableWind] == 1)
        // 04:00: 0.12 in = 3.05 mm; 22 kt gust = 40.74 km/h; 50 °F = 10 °C.
        #expect(row(result, utc(2024, 1, 1, 4))?["precipitation"] == 3.05)
        #expect(row(result, utc(2024, 1, 1, 4))?["wind_gusts_10m"] == 40.74)
        #expect(row(result, utc(2024, 1, 1, 4))?["temperature_2m"] == 10)
        #expect(result.traceHours == 2)
        #expect(result.reportsOutranked == 1)
        #expect(result.reportsOffHour == 0)
    }

    @Test("IEM CSV in America/Chicago across the spring DST change reads to the right UTC hours")
    func iemTimezone() throws {
        // 2024-03-10 01:54 CST = 07:54 UTC; 03:54 CDT = 08:54 UTC (02:xx does not exist that night).
        let csv = """
            station,valid,tmpc,dwpc,sknt,p01m
            ORD,2024-03-10 01:54,1.5,-2.0,8,0.25
            ORD,2024-03-10 03:54,2.0,-1.5,9,1.02
            """
        var base = OfficialImport(format: "IEM", variables: [])
        let result = matched(try METAR.readIEM(Data(csv.utf8), timezone: "America/Chicago", into: &base), base)
        #expect(row(result, utc(2024, 3, 10, 8))?["temperature_2m"] == 1.5)
        #expect(
            row(result, utc(2024, 3, 10, 9)) == [
                "temperature_2m": 2, "dew_point_2m": -1.5, "wind_speed_10m": 16.67, "precipitation": 1.02
            ])
        let skipped = "station,valid,tmpc\nORD,2024-03-10 02:30,1.0\n"
        var other = OfficialImport(format: "IEM", variables: [])
        #expect(throws: StationFormatError.self) {
            try METAR.readIEM(Data(skipped.utf8), timezone: "America/Chicago", into: &other)
        }
    }

    @Test("GHCNh: quality codes reject values, counted; specials by report type; trace; m/s to km/h")
    func ghcnh() throws {
        let psv = """
            Station_ID|Station_name|DATE|Latitude|Longitude|Elevation|temperature|temperature_Measurement_Code|temperature_Quality_Code|temperature_Report_Type|dew_point_temperature|dew_point_temperature_Quality_Code|wind_speed|wind_speed_Quality_Code|wind_direction|wind_direction_Quality_Code|precipitation|precipitation_Measurement_Code|precipitation_Quality_Code
            GMM00010147|HAMBURG FUHLSBUETTEL|2024-01-01T00:50:00|53.6332|9.9881|11.0|5.0||1|FM-15|3.0||5.0||250||0.2||
            GMM00010147|HAMBURG FUHLSBUETTEL|2024-01-01T01:50:00|53.6332|9.9881|11.0|55.0||L|FM-15|3.1|3|0.0||0||0.0|T|
            GMM00010147|HAMBURG FUHLSBUETTEL|2024-01-01T02:00:00|53.6332|9.9881|11.0|6.0||5|FM-16|3.2||4.0|7|260||1.0||o
            """
        var base = OfficialImport(format: "GHCNh", variables: [])
        let result = matched(try ISD.readGHCNh(Data(psv.utf8), into: &base), base)
        #expect(base.station == "GMM00010147")
        #expect(
            base.place
                == StationPlace(latitude: 53.6332, longitude: 9.9881, elevation: 11, name: "HAMBURG FUHLSBUETTEL"))
        #expect(
            row(result, utc(2024, 1, 1, 1)) == [
                "temperature_2m": 5, "dew_point_2m": 3, "wind_speed_10m": 18, "wind_direction_10m": 250,
                "precipitation": 0.2
            ])
        // 02:00: the 01:50 routine report wins over the 02:00 special; its 55 °C carries QC letter L, its dew
        // point ISD code 3 (erroneous): both left out; calm; trace.
        #expect(row(result, utc(2024, 1, 1, 2)) == ["wind_speed_10m": 0, "precipitation": 0])
        #expect(base.erroneousValues == 4)
        #expect(result.missing[slot.t]?[.erroneous] == 1)
        #expect(result.missing[slot.wd]?[.calm] == 1)
        var bad = OfficialImport(format: "GHCNh", variables: [])
        #expect(throws: StationFormatError.self) { try ISD.readGHCNh(Data("a,b,c\n1,2,3\n".utf8), into: &bad) }
    }

    @Test("Meteostat: model-filled values left out and counted unless asked; legacy rows after now dropped")
    func meteostat() throws {
        let csv = """
            time,temp,temp_source,dwpt,dwpt_source,rhum,rhum_source,prcp,prcp_source,wdir,wdir_source,wspd,wspd_source,wpgt,wpgt_source,pres,pres_source
            2024-01-01 00:00:00,5.2,metar,3.1,metar,86,metar,0.4,synop,250,metar,18.4,metar,33.5,metar,1012.3,metar
            2024-01-01 01:00:00,5.0,model,3.0,model,87,model,0.0,model,240,model,16.0,model,,,1012.0,model
            2024-01-01 02:00:00,4.8,synop,,,,,,,,,0.0,synop,,,1011.9,synop
            """
        var base = OfficialImport(format: "Meteostat", variables: [])
        let result = matched(try Meteostat.read(Data(csv.utf8), includeModel: false, now: .max, into: &base), base)
        #expect(
            row(result, utc(2024, 1, 1, 0)) == [
                "temperature_2m": 5.2, "dew_point_2m": 3.1, "relative_humidity_2m": 86, "precipitation": 0.4,
                "wind_direction_10m": 250, "wind_speed_10m": 18.4, "wind_gusts_10m": 33.5, "pressure_msl": 1012.3
            ])
        #expect(row(result, utc(2024, 1, 1, 1)) == nil)
        #expect(row(result, utc(2024, 1, 1, 2)) == ["temperature_2m": 4.8, "wind_speed_10m": 0, "pressure_msl": 1011.9])
        #expect(base.modelFilledRows == 1)
        #expect(base.modelFilledValues == 7)
        #expect(result.missing[slot.t]?[.modelFilled] == 1)

        var kept = OfficialImport(format: "Meteostat", variables: [])
        let withModel = matched(try Meteostat.read(Data(csv.utf8), includeModel: true, now: .max, into: &kept), kept)
        #expect(row(withModel, utc(2024, 1, 1, 1))?["temperature_2m"] == 5.0)

        let legacy = """
            2024-01-01,0,5.2,3.1,86,0.4,,250,18.4,33.5,1012.3,,3
            2024-01-01,1,5.0,3.0,87,0.0,,240,16.0,,1012.0,,3
            """
        var old = OfficialImport(format: "Meteostat", variables: [])
        let legacyResult = matched(
            try Meteostat.read(Data(legacy.utf8), includeModel: false, now: utc(2024, 1, 1, 0, 30), into: &old), old)
        #expect(row(legacyResult, utc(2024, 1, 1, 0))?["wind_speed_10m"] == 18.4)
        #expect(row(legacyResult, utc(2024, 1, 1, 1)) == nil)
        #expect(old.modelFilledRows == 1)
        #expect(old.format.contains("legacy"))
        #expect(Meteostat.stationID(fileName: "/data/10147.csv.gz") == "10147")
    }

    @Test("GHCNh as NOAA writes it: STATION header, FM16 without hyphen is a special, direction 999 is none")
    func ghcnhNOAASpelling() throws {
        let psv = """
            STATION|DATE|temperature|temperature_Report_Type|wind_speed|wind_direction|wind_direction_Quality_Code
            USW00003184|2020-01-01T00:53:00|12.8|FM15|0.0|999|9
            USW00003184|2020-01-01T01:10:00|11.0|FM16|3.0|999|9
            """
        var base = OfficialImport(format: "GHCNh", variables: [])
        let reports = try ISD.readGHCNh(Data(psv.utf8), into: &base)
        #expect(base.station == "USW00003184")
        #expect(reports.map(\.kind) == [.routine, .special])
        #expect(reports.map { $0.values[Slot.windDirection] } == [nil, nil])
        #expect(reports[0].reasons[Slot.windDirection] == .calm)
        #expect(reports[1].reasons[Slot.windDirection] == .noValue)
    }
}
