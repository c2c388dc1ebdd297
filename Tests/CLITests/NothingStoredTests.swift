import Foundation
import Testing
import WxCore

@Suite("station imports that store nothing say so and exit 1")
struct NothingStoredTests {
    @Test("weewx: a --from after the archive's last record is an Error, exit 1, and nothing stored")
    func weewxOutsideRange() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let archive = box.folder.appendingPathComponent("weewx.sdb").path
        let start = try #require(CivilTime.parseLabel("2026-03-01"))
        let records = stride(from: Int64(5), through: 600, by: 5).map { minute in
            WeewxFixture.Record(minute: minute, usUnits: 17, values: ["outTemp": 5])
        }
        try WeewxFixture.write(archive, start: start, records: records)
        #expect(
            await box.run("locations", "add", "Garden", "--lat", "52.5", "--lon", "13.4", "--timezone", "Europe/Berlin")
                .code == 0)
        let result = await box.run(
            "observe", "import-weewx", archive, "--location", "Garden", "--from", "2026-04-01", "--to", "2026-04-02")
        #expect(result.code == 1, "\(result.stderrText)")
        let lines = result.stderrText.split(separator: "\n")
        #expect(lines.last?.hasPrefix("Error: no hour to import from \(archive)") == true, "\(result.stderrText)")
        #expect(result.stderrText.contains("Nothing was stored for Garden"), "\(result.stderrText)")
        #expect(try storedObservations(box.db, source: "weewx").isEmpty)
        // The same archive over its own dates still imports.
        let whole = await box.run("observe", "import-weewx", archive, "--location", "Garden")
        #expect(whole.code == 0, "\(whole.stderrText)")
        #expect(try storedObservations(box.db, source: "weewx").count == 10)
    }
}

@Suite("a station file without coordinates: the cached station list says where it is")
struct StationWithoutCoordinatesTests {
    /// NOAA's isd-history.csv with Delhi's station, where `observe stations` keeps it.
    private func cacheList(_ box: Sandbox) throws {
        let folder = box.folder.appendingPathComponent(".cache/wxdb/stations")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let text = """
            "USAF","WBAN","STATION NAME","CTRY","STATE","ICAO","LAT","LON","ELEV(M)","BEGIN","END"
            "421820","99999","NEW DELHI/SAFDARJUNG","IN","","VIDD","+28.585","+077.206","+0216.0","19290701","20250101"

            """
        try text.write(to: folder.appendingPathComponent("isd-history.csv"), atomically: true, encoding: .utf8)
    }

    @Test("an ISD-Lite file of Delhi imported for Berlin: a warning naming both when the list is cached, else a note")
    func farStation() async throws {
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        #expect(
            await box.run(
                "locations", "add", "Berlin", "--lat", "52.52", "--lon", "13.41", "--timezone", "Europe/Berlin"
            )
            .code == 0)
        let file = box.fixture("stations/421820-99999-2019-excerpt.gz")
        let unchecked = await box.run("observe", "import-isd", file, "--location", "Berlin")
        #expect(unchecked.code == 0, "\(unchecked.stderrText)")
        #expect(
            unchecked.stderrText.contains("station list")
                && unchecked.stderrText.contains("has not been fetched")
                && unchecked.stderrText.contains("cannot check that it is near Berlin"), "\(unchecked.stderrText)")
        #expect(!unchecked.stderrText.contains("Warning:"))

        try cacheList(box)
        let checked = await box.run("observe", "import-isd", file, "--location", "Berlin")
        #expect(checked.code == 0, "\(checked.stderrText)")
        let warning = checked.stderrText.split(separator: "\n").first { $0.hasPrefix("Warning: station 421820-99999") }
        #expect(warning?.contains("28.5850, 77.2060") == true, "\(checked.stderrText)")
        #expect(warning?.contains("km away from Berlin (52.5200, 13.4100") == true, "\(checked.stderrText)")
        #expect(!checked.stderrText.contains("cannot check"))
    }
}
