import Foundation
import Testing
import WxCore

/// Imports of real files copied from public repositories (see Fixtures/SOURCES.md), checked against the
/// files' own numbers converted by hand.
@Suite("Official stations: real sample files")
struct OfficialStationSampleTests {
    /// UTC seconds of a civil time.
    static func utc(_ y: Int, _ mo: Int, _ d: Int, _ h: Int) -> Int64 {
        UTCTime.days(fromCivil: y, month: mo, day: d) * 86400 + Int64(h * 3600)
    }

    @Test("import-metar: a real IEM asos.py CSV (OTHH, missing=null) stores °F as °C and knots as km/h")
    func iemCSV() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run("locations", "add", "Doha", "--lat", "25.27", "--lon", "51.61", "--timezone", "Asia/Qatar")
                .code == 0)
        let result = await box.run(
            "observe", "import-metar", box.fixture("stations/iem-asos-OTHH-2023-02-14.csv"), "--location", "Doha")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(result.stderrText.contains("Stored 4 of 4 hours for Doha (source metar:OTHH)"), "\(result.stderrText)")
        let stored = try storedObservations(box.db, source: "metar:OTHH")
        #expect(stored.count == 4)
        // 00:00 — 66.20 °F = 19.0 °C, 62.60 °F = 17.0 °C, 9 kn = 16.668 km/h; mslp and gust are "null".
        // The first report's p01i cannot be shown to cover the whole hour, so it is not stored.
        #expect(
            stored[Self.utc(2023, 2, 14, 0)] == [
                "temperature_2m": 19, "dew_point_2m": 17, "relative_humidity_2m": 88.18, "wind_speed_10m": 16.67,
                "wind_direction_10m": 360
            ])
        // 01:00 — 64.40 °F = 18.0 °C, 7 kn = 12.964 km/h, p01i 0.00 in.
        #expect(
            stored[Self.utc(2023, 2, 14, 1)] == [
                "temperature_2m": 19, "dew_point_2m": 18, "relative_humidity_2m": 93.92, "wind_speed_10m": 12.96,
                "wind_direction_10m": 20, "precipitation": 0
            ])
        // 03:00 — 3 kn = 5.556 km/h from 80°.
        #expect(stored[Self.utc(2023, 2, 14, 3)]?["wind_speed_10m"] == 5.56)
        #expect(stored[Self.utc(2023, 2, 14, 3)]?["wind_direction_10m"] == 80)
    }

    @Test("import-isd: a real GHCNh by-year .psv (header STATION|..., FM15, direction 999) is read, not rejected")
    func ghcnhPSV() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run(
                "locations", "add", "Phoenix", "--lat", "33.69", "--lon", "-112.07", "--timezone", "America/Phoenix"
            ).code == 0)
        let file = box.fixture("stations/GHCNh_USW00003184_2020-head-excerpt.psv")
        let result = await box.run("observe", "import-isd", file, "--location", "Phoenix")
        #expect(result.code == 0, "\(result.stderrText)")
        #expect(
            result.stderrText.contains("Stored 3 of 3 hours for Phoenix (source ghcnh:USW00003184)"),
            "\(result.stderrText)")
        #expect(result.stderrText.contains("1 calm"), "\(result.stderrText)")
        let stored = try storedObservations(box.db, source: "ghcnh:USW00003184")
        // The 00:53 report stands for 01:00: 12.8 °C, dew point 0.0 °C, 42 %, 1015.6 hPa, calm
        // (speed 0.0, direction 999 = none), precipitation 0.0 mm.
        #expect(
            stored[Self.utc(2020, 1, 1, 1)] == [
                "temperature_2m": 12.8, "dew_point_2m": 0, "relative_humidity_2m": 42, "pressure_msl": 1015.6,
                "wind_speed_10m": 0, "precipitation": 0
            ])
        // 02:53 → 03:00: 9.4 °C, 1.7 °C, 59 %, 1017.0 hPa, 2.1 m/s = 7.56 km/h from 120°.
        #expect(
            stored[Self.utc(2020, 1, 1, 3)] == [
                "temperature_2m": 9.4, "dew_point_2m": 1.7, "relative_humidity_2m": 59, "pressure_msl": 1017,
                "wind_speed_10m": 7.56, "wind_direction_10m": 120, "precipitation": 0
            ])
        #expect(stored.count == 3)
    }
}
