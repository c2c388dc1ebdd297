import Foundation
import Testing
import WxCore

/// Time zones as the built binary knows them. The binary links FoundationEssentials only, whose
/// `TimeZone(identifier:)` has no zone data (ICU) behind it, so it knows no named zone; these tests
/// run in a process that links Foundation, where it does. Zones are read with `ZoneTime` (TZif).
@Suite("time zones in the built binary (no ICU)")
struct LeanZoneTests {
    @Test(
        "import-metar --timezone America/Chicago through the binary: the autumn repeat's two 01:53 reports are two UTC hours",
        .enabled(if: LocalSafetyBinaryTests.binary != nil, LocalSafetyBinaryTests.needsBinary))
    func importMetarZone() throws {
        let binary = try #require(LocalSafetyBinaryTests.binary)
        let box = Sandbox()
        defer { try? FileManager.default.removeItem(at: box.folder) }
        let csv = """
            station,valid,tmpf
            ORD,2024-11-02 23:53,50.00
            ORD,2024-11-03 00:53,48.20
            ORD,2024-11-03 01:53,46.40
            ORD,2024-11-03 01:53,44.60
            ORD,2024-11-03 02:53,42.80

            """
        let path = try box.write("asos.csv", csv)
        func run(_ arguments: [String]) throws -> (Int32, String) {
            let process = Process()
            let err = Pipe()
            process.executableURL = URL(fileURLWithPath: binary)
            process.arguments = ["--db", box.db] + arguments
            process.environment = box.environment
            process.standardOutput = FileHandle.nullDevice
            process.standardError = err
            try process.run()
            let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, text)
        }
        let added = try run([
            "locations", "add", "Bremerton", "--lat", "47.49", "--lon", "-122.76", "--timezone", "America/Los_Angeles"
        ])
        #expect(added.0 == 0, "\(added.1)")
        let imported = try run([
            "observe", "import-metar", path, "--location", "Bremerton", "--timezone", "America/Chicago", "--station",
            "KORD"
        ])
        // Before: exit 64, "--timezone 'America/Chicago' is not a time zone name".
        #expect(imported.0 == 0, "\(imported.1)")
        let stored = try storedObservations(box.db, source: "metar:KORD")
        // CDT (UTC−5) until 02:00 local, then CST (UTC−6): 23:53 → 04:53Z, 00:53 → 05:53Z, the first
        // 01:53 → 06:53Z, the repeated 01:53 → 07:53Z, 02:53 → 08:53Z; each the report for the next hour.
        let day = UTCTime.days(fromCivil: 2024, month: 11, day: 3) * 86400
        let expected: [Int64: Double] = [5: 10, 6: 9, 7: 8, 8: 7, 9: 6].reduce(into: [:]) {
            $0[day + Int64($1.key) * 3600] = $1.value
        }
        #expect(stored.mapValues { $0["temperature_2m"] ?? .nan } == expected, "\(stored)")

        // The spring gap: 02:53 does not exist in Chicago on 2024-03-10, so the file was asked for in another zone.
        let spring = try box.write(
            "spring.csv", "station,valid,tmpf\nORD,2024-03-10 01:53,50.0\nORD,2024-03-10 02:53,50.0\n")
        let refused = try run([
            "observe", "import-metar", spring, "--location", "Bremerton", "--timezone", "America/Chicago", "--station",
            "KORD"
        ])
        #expect(refused.0 == 1, "\(refused.1)")
        #expect(
            refused.1.contains(
                "line 3: valid 2024-03-10 02:53 does not exist in America/Chicago (the clocks skip it); give --timezone "
                    + "the zone the file was asked for in. Nothing was stored"), "\(refused.1)")
        #expect(try storedObservations(box.db, source: "metar:KORD") == stored)
    }

    @Test("no Source outside the replay server asks Foundation's TimeZone, which the binary cannot answer")
    func noFoundationTimeZone() throws {
        let root = packageRoot.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: root.path))
        var hits: [String] = []
        for case let file as String in files where file.hasSuffix(".swift") && !file.hasPrefix("Replay/") {
            let text = try String(contentsOfFile: root.appendingPathComponent(file).path, encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
            where line.contains("TimeZone(") && !line.trimmingCharacters(in: .whitespaces).hasPrefix("//") {
                hits.append("\(file):\(number + 1)")
            }
        }
        // Before: ObserveCommand.StationFiles (import-metar --timezone), METAR.swift (the IEM reader) and
        // OptionGroups (relative dates like `today` in the location's zone).
        #expect(hits.isEmpty, "\(hits)")
    }
}
