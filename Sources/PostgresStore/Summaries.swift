// The kept verification sums on PostgreSQL, read as the SQLite engine reads them
// (Sources/StoreSQLite/Summaries.swift): the same rows in its key order (model, day, lead
// bucket), and totals added up here, column by column in that order, so both engines add the
// same doubles in the same order and print the same digits.
import WxCore
import WxPostgres
import WxStore

extension PostgresEngine {
    static let summaryFilter =
        " FROM verification_summaries WHERE location_id = $1 AND source = $2 AND variable = $3"
        + " AND ($4::text IS NULL OR model = $4::text)"
    static let summariesSQL =
        "SELECT model, lead_from_h, lead_to_h, valid_date, valid_from, valid_to, first_valid_time, last_valid_time, "
        + SummarySums.columns.map(\.name).joined(separator: ", ") + summaryFilter
        + " AND ($5::bigint IS NULL OR valid_from < $5::bigint AND valid_to > $5::bigint"
        + " OR valid_from < $6::bigint AND valid_to > $6::bigint)"
        + " ORDER BY model COLLATE \"C\", valid_from, lead_from_h"
    static let summaryRowsSQL =
        "SELECT model, lead_from_h, lead_to_h, coalesce(first_valid_time, valid_from), "
        + "coalesce(last_valid_time, valid_to - 3600), " + SummarySums.columns.map(\.name).joined(separator: ", ")
        + summaryFilter
        + " AND valid_from >= $5 AND valid_to <= $6 ORDER BY model COLLATE \"C\", valid_from, lead_from_h"

    /// Streams the stored summaries of one location, source and variable (of `model` when given);
    /// with `cutBy`, only those of the days the range cuts.
    public func forEachSummary(
        locationID: Int64, source: String, variable: String, model: String?,
        cutBy range: (from: Int64, to: Int64)?, _ visit: (StoredSummary) throws -> Void
    ) throws {
        let count = SummarySums.columns.count
        try db.stream(
            Self.summariesSQL,
            [
                .integer(locationID), .text(source), .text(variable), model.postgresValue,
                range.map { .integer($0.from) } ?? .null, range.map { .integer($0.to) } ?? .null
            ]
        ) { row in
            let values = (0..<count).map { row.optionalDouble(8 + $0) }
            let span = row.optionalInt64(4).flatMap { start in row.optionalInt64(5).map { (start: start, end: $0) } }
            try visit(
                StoredSummary(
                    model: row.string(0), leadFrom: Int(row.int64(1)), leadTo: Int(row.int64(2)),
                    validDate: row.string(3), span: span, firstValid: row.optionalInt64(6),
                    lastValid: row.optionalInt64(7), sums: SummarySums(values: values)))
        }
    }

    /// The stored summaries of one location, source and variable (of `model` when given) over the
    /// days wholly inside `[from, to)`, added up per model and lead bucket, in the SQLite engine's
    /// row order: a score is absent from a total only when every row lacks it.
    public func summaryTotals(
        locationID: Int64, source: String, variable: String, model: String?, from: Int64, to: Int64
    ) throws -> [SummaryTotal] {
        final class Total {
            let model: String
            let leadFrom: Int
            let leadTo: Int
            var first = Int64.max
            var last = Int64.min
            var sums: [Double]
            var present: [Bool]
            init(model: String, leadFrom: Int, leadTo: Int, columns: Int) {
                (self.model, self.leadFrom, self.leadTo) = (model, leadFrom, leadTo)
                sums = Array(repeating: 0, count: columns)
                present = Array(repeating: false, count: columns)
            }
        }
        let columns = SummarySums.columns.count
        var order: [Total] = []
        var lastModel = ""
        var byLead: [Int: Total] = [:]
        try db.stream(
            Self.summaryRowsSQL,
            [.integer(locationID), .text(source), .text(variable), model.postgresValue, .integer(from), .integer(to)]
        ) { row in
            let sameModel = row.withUTF8(0) { $0.elementsEqual(lastModel.utf8) }
            if !sameModel {
                byLead = [:]
                lastModel = row.string(0)
            }
            let leadFrom = Int(row.int64(1))
            let total: Total
            if let known = byLead[leadFrom] {
                total = known
            } else {
                total = Total(model: lastModel, leadFrom: leadFrom, leadTo: Int(row.int64(2)), columns: columns)
                byLead[leadFrom] = total
                order.append(total)
            }
            total.first = min(total.first, row.int64(3))
            total.last = max(total.last, row.int64(4))
            for column in 0..<columns where !row.isNull(5 + column) {
                total.sums[column] += row.double(5 + column)
                total.present[column] = true
            }
        }
        return order.map { total in
            SummaryTotal(
                model: total.model, leadFrom: total.leadFrom, leadTo: total.leadTo, firstValid: total.first,
                lastValid: total.last,
                sums: SummarySums(values: zip(total.sums, total.present).map { $1 ? $0 : nil }))
        }
    }

    /// The distinct local days (`valid_from`, `valid_to`) the kept sums of a location are on, per
    /// source and variable.
    public func summaryDays(locationID: Int64) throws -> [(source: String, variable: String, from: Int64, to: Int64)] {
        try db.rows(
            """
            SELECT DISTINCT source COLLATE "C" AS s, variable COLLATE "C" AS v, valid_from, valid_to
            FROM verification_summaries WHERE location_id = $1 ORDER BY s, v, valid_from
            """, [.integer(locationID)]
        ) { (source: $0.string(0), variable: $0.string(1), from: $0.int64(2), to: $0.int64(3)) }
    }

    /// Whether the sums of rows stored before the sums existed are still to be added.
    public func sumsPending() throws -> Bool {
        (try db.scalarInt("SELECT count(*) FROM verification_sums_pending") ?? 0) > 0
    }
}
