// The tz database reader against Foundation's TimeZone (ICU's reading of the same files): every
// zone on this machine, every transition 1970-2037 and the hours around it. Foundation is imported
// here only, as the reference.
import Foundation
import Testing

@testable import WxCore

@Suite("TZif reader")
struct TZifTests {
    /// Every zone file under the tz database folder (the names TimeZone knows, as files).
    static let zoneNames: [String] = {
        let root = TZDatabase.directory
        guard let walker = FileManager.default.enumerator(atPath: root) else { return [] }
        var names: [String] = []
        while let name = walker.nextObject() as? String {
            let path = root + "/" + name
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), !isFolder.boolValue,
                let data = FileManager.default.contents(atPath: path), data.starts(with: Array("TZif".utf8)),
                !name.hasPrefix("posix/"), !name.hasPrefix("right/")
            else { continue }
            names.append(name)
        }
        return names.sorted()
    }()

    /// Zones whose definition ICU's copy of the data and this machine's files disagree on (see below).
    static let dataVersionDifferences: Set<String> = ["EET", "WET"]

    @Test("every zone on this machine gives Foundation's offsets from 1970 to 2037")
    func matchesFoundation() throws {
        #expect(Self.zoneNames.count > 300, "found \(Self.zoneNames.count) zones under \(TZDatabase.directory)")
        let from: Int64 = 0
        let to = Int64(2_145_916_800)  // 2038-01-01
        var mismatches: [String] = []
        var compared = 0
        for name in Self.zoneNames {
            guard let reference = TimeZone(identifier: name) else { continue }
            let zone = try #require(TZDatabase.zone(name), "\(name) did not read")
            // Each transition and a second either side, plus every 30 days (both ends of the range).
            var instants = Set<Int64>(stride(from: from, to: to, by: 30 * 86400))
            for t in zone.transitions where t >= from && t < to {
                instants.formUnion([t - 1, t, t + 1])
            }
            var date = Date(timeIntervalSince1970: TimeInterval(from))
            while let next = reference.nextDaylightSavingTimeTransition(after: date),
                next.timeIntervalSince1970 < Double(to)
            {
                let t = Int64(next.timeIntervalSince1970)
                instants.formUnion([t - 1, t, t + 1])
                date = next
            }
            for t in instants.sorted() {
                compared += 1
                let expected = reference.secondsFromGMT(for: Date(timeIntervalSince1970: TimeInterval(t)))
                let got = zone.offset(at: t)
                if got != expected {
                    mismatches.append("\(name) at \(t): \(got), want \(expected)")
                }
            }
        }
        // ICU carries its own copy of the tz data, where (since tzdata 2024b) EET and WET are links to
        // Europe/Athens and Europe/Lisbon; this machine's files keep the older zones of those names,
        // which differ before 1981 and 1997. Every other zone must agree to the second.
        let differing = Set(mismatches.map { String($0.split(separator: " ")[0]) })
        #expect(differing.subtracting(Self.dataVersionDifferences).isEmpty, "\(mismatches.prefix(40))")
        #expect(compared > 100_000)
    }

    @Test(
        "POSIX TZ rules past the last transition",
        arguments: [
            // 2040-06-27T08:00Z and 2040-01-02T00:00Z: Berlin's summer and winter, Sydney's (southern)
            // summer, New York's summer, a fixed zone with a quoted name.
            ("CET-1CEST,M3.5.0,M10.5.0/3", Int64(2_224_396_800), 7200),
            ("CET-1CEST,M3.5.0,M10.5.0/3", Int64(2_209_075_200), 3600),
            ("AEST-10AEDT,M10.1.0,M4.1.0/3", Int64(2_209_075_200), 39600),
            ("AEST-10AEDT,M10.1.0,M4.1.0/3", Int64(2_224_396_800), 36000),
            ("EST5EDT,M3.2.0,M11.1.0", Int64(2_224_396_800), -14400),
            ("<+0530>-5:30", Int64(2_209_075_200), 19800)
        ])
    func posixRules(rule: String, instant: Int64, offset: Int) throws {
        let tz = try #require(PosixTZ(rule))
        #expect(tz.offset(at: instant) == offset)
    }

    @Test("the rule's change instants: Berlin 2040 goes to summer time at 01:00 UTC on 25 March")
    func posixChangeInstant() throws {
        let tz = try #require(PosixTZ("CET-1CEST,M3.5.0,M10.5.0/3"))
        let change = Int64(2_216_250_000)  // 2040-03-25T01:00:00Z
        #expect(tz.offset(at: change - 1) == 3600)
        #expect(tz.offset(at: change) == 7200)
    }

    @Test(
        "names that are not zones, or not files of the tz database, read as none",
        arguments: ["", "../etc/passwd", "Europe/../Europe/Berlin", "/etc/localtime", "Nowhere/Special", "Europe"])
    func notZones(name: String) {
        #expect(TZDatabase.zone(name) == nil)
        #expect(!ZoneTime.isKnown(name))
    }
}
