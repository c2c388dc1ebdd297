import Foundation
import TestSupport
import Testing

@testable import WxCore
@testable import WxSQLite
@testable import WxStore
@testable import WxStoreSQLite

@Suite("Ensemble member blobs (packed)")
struct MemberBlobTests {
    func stored(hours: Int = 384) throws -> (SQLiteStore, Int64, EnsembleForecast, String) {
        let (store, location, path) = try EnsembleStoreTests().open()
        let forecast = EnsembleStoreTests.run(hours: hours)
        let outcome = try store.storeEnsemble(
            forecast, grid: (46.95, 7.45, nil), for: location, issuedAt: 1_785_024_000, fetchedAt: 1_785_050_000)
        return (store, outcome.runID, forecast, path)
    }

    func blob(_ store: SQLiteStore, _ run: Int64) throws -> [UInt8] {
        try #require(
            try store.db.firstRow(
                "SELECT members FROM ensemble_values WHERE run_id = ? AND variable = 'temperature_2m'", [.integer(run)]
            ) { row -> [UInt8]? in
                guard case .blob(let bytes) = row.value(0) else { return nil }
                return bytes
            } ?? nil)
    }

    func replace(_ store: SQLiteStore, _ run: Int64, with bytes: [UInt8]) throws {
        // An empty array would bind as NULL, which the column refuses.
        try store.db.run(
            "UPDATE ensemble_values SET members = coalesce(?, x'') WHERE run_id = ? AND variable = 'temperature_2m'",
            [.blob(bytes), .integer(run)])
    }

    /// Little-endian bytes of these bit patterns.
    static func bytes(_ bits: [UInt32]) -> [UInt8] {
        bits.flatMap { b in (0..<4).map { UInt8(truncatingIfNeeded: b >> (8 * $0)) } }
    }

    static let specials: [UInt32] = [
        0, 0x8000_0000, 0x7F80_0000, 0xFF80_0000, 0x0000_0001, 0x807F_FFFF, 0x7FC0_0001, 0xFFFF_FFFF
    ]
    static let decimals: [UInt32] = (0..<4000).map { (i: Int) -> UInt32 in Float(Double(i % 301) / 10 - 15).bitPattern }
    static let noise: [UInt32] = (0..<4000).map { (i: Int) -> UInt32 in
        UInt32(truncatingIfNeeded: (i &* 2_654_435_761) ^ (i << 7))
    }
    static let patterns: [(String, [UInt32])] = [
        ("missing", [UInt32](repeating: Float.nan.bitPattern, count: 600)), ("specials", specials),
        ("decimals", decimals), ("noise", noise)
    ]

    @Test(
        "every Float32 bit pattern comes back exactly: NaN (missing and other payloads), ±0, ±inf, subnormals, noise",
        arguments: MemberBlobTests.patterns)
    func exactBits(name: String, bits: [UInt32]) throws {
        let raw = Self.bytes(bits)
        let packed = MemberBlob.pack(raw)
        let back = try MemberBlob.values(packed, hours: bits.count / 2, members: 2)
        #expect(back.map(\.bitPattern) == bits, "\(name)")
        // Packed only when it is shorter; incompressible bytes stay raw and still read.
        #expect(packed.count < raw.count ? packed.first == MemberBlob.packedTag : packed == raw, "\(name)")
    }

    @Test("a stored run is packed below 4 bytes a value, reads back bit for bit, and still repeats")
    func storedPacked() throws {
        let (store, run, forecast, path) = try stored()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let bytes = try blob(store, run)
        #expect(bytes.first == MemberBlob.packedTag && bytes.count < 51 * 384 * 4)
        let back = try #require(try store.ensembleMembers(runID: run, variable: "temperature_2m"))
        let original = try #require(forecast.values[0])
        for hour in [0, 50, 383] {
            for member in [0, 3, 7, 50] {
                let want = Float(original[member][hour])
                #expect(
                    back[hour][member].bitPattern == (want.isNaN ? Float.nan.bitPattern : want.bitPattern),
                    "hour \(hour) member \(member)")
            }
        }
        // The content hash is of the raw bytes: the same content again is a repeat, not a second run.
        let location = try #require(try store.locations().first)
        let again = try store.storeEnsemble(
            forecast, grid: (46.95, 7.45, nil), for: location, issuedAt: 1_785_024_000, fetchedAt: 1_785_060_000)
        #expect(again == .repeated(runID: run))
    }

    @Test("a blob stored raw before packing (4 × hours × members bytes) reads as before, whole and by hours")
    func rawStillReads() throws {
        let (store, run, forecast, path) = try stored()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let packed = try #require(try store.ensembleMembers(runID: run, variable: "temperature_2m"))
        let window = EnsembleRunWindow(
            id: run, location: 1, model: forecast.model, issuedAt: 1_785_024_000, firstValidTime: 1_785_024_000,
            hourCount: 384, memberCount: 51)
        let from = Int64(1_785_024_000 + 100 * 3600)
        let packedSlice = try store.ensembleSlices(window, from: from, through: from + 5 * 3600)
        try replace(store, run, with: MemberEncoding.encode(try #require(forecast.values[0]), hours: 384, members: 51))
        let raw = try #require(try store.ensembleMembers(runID: run, variable: "temperature_2m"))
        #expect(raw.map { $0.map(\.bitPattern) } == packed.map { $0.map(\.bitPattern) })
        let rawSlice = try store.ensembleSlices(window, from: from, through: from + 5 * 3600)
        let pick = { (slices: [EnsembleSlice]) in slices.first { $0.variable.name == "temperature_2m" } }
        let a = try #require(pick(packedSlice))
        let b = try #require(pick(rawSlice))
        #expect(a.hours == 6 && a.values.count == 6 * 51)
        #expect(a.values.map(\.bitPattern) == b.values.map(\.bitPattern))
        #expect(a.values.map(\.bitPattern) == packed[100...105].flatMap { $0.map(\.bitPattern) })
    }

    @Test(
        "a damaged or truncated blob is a clear error, not a crash or wrong numbers",
        arguments: [
            "truncated", "cut to the tag", "flipped byte", "unknown tag", "trailing byte", "empty", "raw too long"
        ])
    func damaged(_ damage: String) throws {
        let (store, run, _, path) = try stored()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        var bytes = try blob(store, run)
        switch damage {
        case "truncated": bytes.removeLast(bytes.count / 3)
        case "cut to the tag": bytes = [MemberBlob.packedTag]
        case "flipped byte": bytes[bytes.count / 2] ^= 0x5A
        case "unknown tag": bytes[0] = 0x7E
        case "trailing byte": bytes.append(0)
        case "empty": bytes = []
        default: bytes = [UInt8](repeating: 0, count: 51 * 384 * 4 + 4)
        }
        try replace(store, run, with: bytes)
        let error = #expect(throws: MemberBlobError.self) {
            try store.ensembleMembers(runID: run, variable: "temperature_2m")
        }
        #expect(error?.description.contains("ensemble member blob is damaged") == true, "\(damage)")
        let window = EnsembleRunWindow(
            id: run, location: 1, model: "ecmwf_ifs025_ensemble", issuedAt: 1_785_024_000,
            firstValidTime: 1_785_024_000, hourCount: 384, memberCount: 51)
        #expect(throws: MemberBlobError.self, "\(damage)") {
            try store.ensembleSlices(window, from: 1_785_024_000, through: 1_785_024_000 + 3600)
        }
    }
}
