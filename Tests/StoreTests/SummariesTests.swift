import Foundation
import Testing

@testable import WxCore
@testable import WxSQLite
@testable import WxStore
@testable import WxStoreSQLite

@Suite("Verification summaries: the scores' declared sums are the table")
struct SummariesTests {
    static let sample = SummarySums(
        continuous: ContinuousScores(
            n: 3, sumF: 1.5, sumO: 2.5, sumFF: 4, sumOO: 5, sumFO: 6, sumAbsErr: 0.75, sumErr: -1, sumErrSq: 2),
        contingency: Contingency(a: 1, b: 2, c: 3, d: 4), brier: nil)

    @Test(
        "every declared sum is a column of verification_summaries, INTEGER for counts, REAL for sums, and nothing else is"
    )
    func declaredColumnsAreTheTable() throws {
        let path = temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try SQLiteStore.open(path: path)
        let columns = try store.db.rows(
            "SELECT name, type FROM pragma_table_info('verification_summaries') ORDER BY cid"
        ) {
            (name: $0.string(0), type: $0.string(1))
        }
        // Migration 0010 added the persistence sums and the first/last valid hour after the spans.
        let sums = SummarySums.columns.map(\.name)
        let persistence = PersistenceSums.sumColumns.map(\.name)
        #expect(
            columns.map(\.name)
                == SQLiteStore.summaryKeyColumns + sums.filter { !persistence.contains($0) }
                + SQLiteStore.summarySpanColumns
                + persistence + ["first_valid_time", "last_valid_time"])
        for column in SummarySums.columns {
            #expect(
                columns.first { $0.name == column.name }?.type == (column.isCount ? "INTEGER" : "REAL"),
                "\(column.name)")
        }
    }

    @Test("sums read back as they were written; an absent score stays absent")
    func valuesRoundTrip() {
        #expect(SummarySums(values: Self.sample.values) == Self.sample)
        #expect(Self.sample.values.suffix(BrierScore.sumColumns.count).allSatisfy { $0 == nil })
    }

    @Test("the upsert adds a second write's sums to the stored row, as merge does")
    func upsertAddsUp() throws {
        let path = temporaryDatabase()
        defer { try? FileManager.default.removeItem(atPath: (path as NSString).deletingLastPathComponent) }
        let store = try SQLiteStore.open(path: path)
        let location = try store.addLocation(
            name: "Here", latitude: 1, longitude: 2, elevation: nil, timezone: "UTC", models: [], now: 0)
        let key = SummaryKey(
            location: location.id, model: "m", source: "era5", variable: "precipitation", leadFrom: 0, leadTo: 6,
            validDate: "2026-01-01", validFrom: 1_767_225_600, validTo: 1_767_312_000)
        var other = Self.sample
        other.continuous.add(forecast: 2, observed: 1)
        other.contingency?.a += 5
        try store.db.transaction {
            for sums in [Self.sample, other] {
                var delta = SumsDelta()
                delta.groups[key] = SumsDelta.Group(sums: sums, firstValid: 1_767_225_600, lastValid: 1_767_308_400)
                try store.applySums(delta)
            }
        }
        var expected = Self.sample
        expected.merge(other)
        var read: [StoredSummary] = []
        try store.forEachSummary(locationID: location.id, source: "era5", variable: "precipitation", model: nil) {
            read.append($0)
        }
        #expect(read.count == 1)
        #expect(read.first?.sums == expected)
        #expect(read.first?.sums.continuous.n == 7)
        #expect(read.first?.span?.start == 1_767_225_600 && read.first?.span?.end == 1_767_312_000)
    }
}
