import Foundation
import Testing
import WxCore

@Suite("observe fetch: a download the connection cuts resumes with Range, in the same run or the next")
struct RangeResumeTests {
    private let path = "/pub/data/noaa/isd-lite/2024/"
    private let fetch = [
        "observe", "fetch", "--location", "Hamburg", "--station", "101470-99999", "--from", "2024-12-30", "--to",
        "2024-12-31"
    ]

    private func sandbox() async throws -> StationArchiveSandbox {
        let s = try StationArchiveSandbox()
        #expect(
            await s.run("locations", "add", "Hamburg", "--lat", "53.55", "--lon", "9.99", "--timezone", "UTC").code == 0
        )
        return s
    }

    @Test("cut once: the rest is asked for from the byte it stopped at, and the hours are those of a whole file")
    func cutOnce() async throws {
        let s = try await sandbox()
        s.server.enqueue(.truncatedBody, times: 1, path: path)
        let result = await s.box.run(fetch)
        #expect(result.code == 0, "\(result.stderrText)")
        let asked = s.requests(path)
        #expect(asked.count == 2, "\(asked)")
        #expect(!(asked.first ?? "").contains("Range:"))
        #expect(asked.last?.contains(" Range: bytes=") == true, "\(asked)")
        #expect(result.stderrText.contains("the connection was cut after"), "\(result.stderrText)")
        #expect(try storedObservations(s.box.db, source: "isd:101470-99999").count == 48)
    }

    @Test("cut every time: exit 1 with the part kept; the next run starts from it")
    func cutAcrossRuns() async throws {
        let s = try await sandbox()
        s.server.enqueue(.truncatedBody, times: 6, path: path)
        let failed = await s.box.run(fetch)
        #expect(failed.code == 1)
        #expect(failed.stderrText.contains("Error: the download of ISD-Lite 101470-99999 2024 was cut 6 times"))
        #expect(failed.stderrText.contains(".gz.part and the same command resumes from there"), "\(failed.stderrText)")
        #expect(try storedObservations(s.box.db, source: "isd:101470-99999").isEmpty)

        s.server.resetFaults()
        let resumed = await s.box.run(fetch)
        #expect(resumed.code == 0, "\(resumed.stderrText)")
        let asked = s.requests(path)
        #expect(asked.count == 1 && asked[0].contains(" Range: bytes="), "\(asked)")
        #expect(resumed.stderrText.contains("resuming the download kept from an earlier run"))
        #expect(try storedObservations(s.box.db, source: "isd:101470-99999").count == 48)
    }
}
