import Foundation
import Testing

@testable import WxStore
@testable import WxStoreSQLite

@Suite("Station CSV parsing")
struct StationCSVTests {
    @Test("a station CSV error quotes at most a short piece of a huge field")
    func hugeFieldClipped() throws {
        let huge = String(repeating: "7", count: 100_000)
        for body in [
            "time,temperature_2m\n2026-01-01T00:00Z,\(huge)\n", "time,temperature_2m\n\(huge),1\n", "time,\(huge)\n"
        ] {
            #expect {
                _ = try StationCSV.parse(Data(body.utf8), timezone: nil, skipBadRows: false)
            } throws: { error in
                "\(error)".utf8.count < 600 && "\(error)".hasPrefix("line ")
            }
        }
    }

    @Test("a NUL byte inside a station CSV number is refused, not read as the digits before it")
    func nulInsideNumber() throws {
        let body = "time,temperature_2m\n2026-01-01T00:00Z,1\u{0}2\n"
        #expect(throws: StationCSV.Problem.self) {
            _ = try StationCSV.parse(Data(body.utf8), timezone: nil, skipBadRows: false)
        }
    }
}
